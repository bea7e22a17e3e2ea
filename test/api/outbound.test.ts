// Outbound requests against real receivers (Bun.serve and Bun.listen on port 0) that record what reaches them:
// secrets do not follow a changed destination or a redirect; tests and sends say a status and a reason of Saltdeck's
// own, never what the remote said; link-local and cloud metadata addresses are refused unless SALTDECK_OUTBOUND_ALLOW
// names them.
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, testWorld } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { createChannel } from '../../src/features/alerts/channel-store'
import { saltCredentials, updateSection } from '../../src/features/settings/service'
import { SaltClient } from '../../src/salt/client'

const SECRET_BODY = 'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
const BANNER = 'SSH-2.0-OpenSSH_9.6p1 hidden-banner-7f3a'

/** An HTTP receiver that records every request (path, headers, body) and answers as `answer` says. */
function receiver(answer: (req: Request) => Response = () => Response.json({ return: [{ token: 't0k', expire: Date.now() / 1000 + 3600 }] })) {
  const seen: { path: string; body: string; headers: Headers }[] = []
  const server = Bun.serve({
    port: 0, hostname: '127.0.0.1',
    async fetch(req) {
      seen.push({ path: new URL(req.url).pathname, body: await req.text(), headers: req.headers })
      return answer(req)
    },
  })
  return { seen, url: `http://127.0.0.1:${server.port}`, all: () => JSON.stringify(seen.map((s) => [s.path, s.body, [...s.headers]])), stop: () => server.stop(true) }
}

/** A TCP server that says `greeting` on connect and records every byte it is sent; `reply` answers each line. */
function tcpServer(greeting: string, reply: (line: string) => string | null = () => null) {
  let got = ''
  const server = Bun.listen({
    hostname: '127.0.0.1', port: 0,
    socket: {
      open(s) {
        s.write(greeting)
      },
      data(s, d) {
        const text = d.toString()
        got += text
        for (const line of text.split('\r\n').filter(Boolean)) {
          const r = reply(line)
          if (r) s.write(r)
        }
      },
    },
  })
  return { port: server.port, got: () => got, stop: () => server.stop(true) }
}

/** A minimal SMTP server that offers AUTH PLAIN and LOGIN, accepts everything and records the whole session. */
const smtpRecorder = () =>
  tcpServer('220 relay.example ESMTP\r\n', (line) => {
    const cmd = line.toUpperCase()
    if (cmd.startsWith('EHLO')) return '250-relay.example\r\n250 AUTH PLAIN LOGIN\r\n'
    if (cmd.startsWith('AUTH LOGIN')) return '334 VXNlcm5hbWU6\r\n'
    if (cmd.startsWith('AUTH PLAIN')) return '235 ok\r\n'
    if (cmd.startsWith('QUIT')) return '221 bye\r\n'
    if (cmd === 'DATA') return '354 go\r\n'
    if (line === '.') return '250 queued\r\n'
    return '250 ok\r\n'
  })

/** Everything an SMTP session carried, with its base64 AUTH lines decoded too. */
const smtpSeen = (raw: string) => raw + raw.split(/\s+/).map((w) => Buffer.from(w, 'base64').toString('latin1')).join(' ')

const stops: (() => unknown)[] = []
afterEach(async () => {
  for (const s of stops.splice(0)) await s()
})
const keep = <T extends { stop: () => unknown }>(x: T) => (stops.push(x.stop), x)

describe('secrets follow no changed destination', () => {
  test('salt settings: a new URL alone forgets the password; test-salt-saved and the pollers\' login send nothing to the new address', async () => {
    const w = await saltWorld()
    stops.push(() => w.close())
    const next = keep(receiver())
    const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: next.url } })
    expect(r.status).toBe(200)
    expect(r.body.salt).toMatchObject({ url: next.url, username: 'saltdeck', password_set: false })
    expect((await call(w, 'GET', '/api/admin/settings/status')).body).toEqual({ configured: false, missing: ['salt.password'] })
    expect((await call(w, 'POST', '/api/admin/settings/test-salt-saved')).body).toEqual({ ok: false, detail: 'Salt API not configured', minion_count: null })
    // The pollers' client reads the saved pair at every login.
    expect(await w.rt.client.login().catch((e) => e.constructor.name)).toBe('SaltNotConfigured')
    expect(next.seen).toHaveLength(0)
    // With the password entered again for the new address, that one (and only that one) goes there.
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: next.url, password: 'new-pass' } })
    await w.rt.client.login()
    expect(next.seen.length).toBeGreaterThan(0)
    for (const s of next.seen.filter((x) => x.path === '/login')) expect(JSON.parse(s.body)).toEqual({ username: 'saltdeck', password: 'new-pass', eauth: 'sharedsecret' })
    expect(next.all()).not.toContain('s3cr3t')
  })
  test('salt settings: the same URL (a trailing slash aside), or a new URL with a new password, keeps or sets the password', async () => {
    const w = await testWorld()
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://127.0.0.1:8000', username: 'u', password: 'first-pass' } })
    expect((await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://127.0.0.1:8000/', eauth: 'file' } })).body.salt.password_set).toBe(true)
    expect(saltCredentials(w.deps).password).toBe('first-pass')
    await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://127.0.0.1:8001', password: 'second-pass' } })
    expect(saltCredentials(w.deps)).toMatchObject({ url: 'http://127.0.0.1:8001', password: 'second-pass' })
    // A password stored before any URL was given for none: the first URL keeps it.
    const v = await testWorld()
    await call(v, 'PUT', '/api/admin/settings/salt', { body: { username: 'u', password: 'early-pass' } })
    expect((await call(v, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://127.0.0.1:8000' } })).body.salt.password_set).toBe(true)
  })
  test('webhook: a new URL alone forgets the signing secret; the new receiver gets an unsigned test', async () => {
    const w = await testWorld()
    const [old, next] = [keep(receiver(() => new Response('ok'))), keep(receiver(() => new Response('ok')))]
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: `${old.url}/hook`, secret: 'hmac-old-secret' } } })).body
    expect(ch.config.secret_set).toBe(true)
    const p = await call(w, 'PATCH', `/api/alerts/channels/${ch.id}`, { body: { config: { url: `${next.url}/hook` } } })
    expect(p.status).toBe(200)
    expect(p.body.config).toEqual({ url: `${next.url}/hook` })
    expect((await call(w, 'POST', `/api/alerts/channels/${ch.id}/test`)).body.ok).toBe(true)
    expect(next.seen).toHaveLength(1)
    expect(next.seen[0]!.headers.get('x-saltdeck-signature')).toBeNull()
    // The same URL keeps a secret entered again.
    await call(w, 'PATCH', `/api/alerts/channels/${ch.id}`, { body: { config: { url: `${next.url}/hook`, secret: 'hmac-new' } } })
    expect((await call(w, 'PATCH', `/api/alerts/channels/${ch.id}`, { body: { config: { url: `${next.url}/hook` } } })).body.config.secret_set).toBe(true)
    expect(old.seen).toHaveLength(0)
  })
  test('email: a new port (or host) alone forgets the password; the new mail server never sees the old one', async () => {
    const w = await testWorld()
    const [old, next] = [keep(smtpRecorder()), keep(smtpRecorder())]
    const cfg = (port: number) => ({ host: '127.0.0.1', port, security: 'none', allow_insecure_auth: true, username: 'alerts', from: 'saltdeck@example.com', to: ['ops@example.com'] })
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'mail', type: 'email', config: { ...cfg(old.port), password: 'smtp-old-pass' } } })).body
    expect((await call(w, 'POST', `/api/alerts/channels/${ch.id}/test`)).body.ok).toBe(true)
    expect(smtpSeen(old.got())).toContain('smtp-old-pass')
    const p = await call(w, 'PATCH', `/api/alerts/channels/${ch.id}`, { body: { config: cfg(next.port) } })
    expect(p.body.config.password_set).toBeUndefined()
    await call(w, 'POST', `/api/alerts/channels/${ch.id}/test`)
    expect(next.got()).toContain('EHLO')
    expect(smtpSeen(next.got())).not.toContain('smtp-old-pass')
    // The host spelled another way is the same place: the password stays.
    await call(w, 'PATCH', `/api/alerts/channels/${ch.id}`, { body: { config: { ...cfg(next.port), password: 'smtp-new-pass' } } })
    expect((await call(w, 'PATCH', `/api/alerts/channels/${ch.id}`, { body: { config: { ...cfg(next.port), host: '127.0.0.1 ' } } })).body.config.password_set).toBe(true)
  })
})

describe('a retry goes where its credentials were given for', () => {
  test.each([['a login', 1], ['a call', 0]])('%s retried after the salt URL and password changed is not sent to the new address', async (_, loginFailures) => {
    let failLogin = loginFailures
    let failCall = 1
    const old = keep(receiver((req) => {
      const login = new URL(req.url).pathname === '/login'
      if (login ? failLogin-- > 0 : failCall-- > 0) return new Response('busy', { status: 500 })
      return login ? Response.json({ return: [{ token: 'old-token', expire: Date.now() / 1000 + 3600 }] }) : Response.json({ return: [{ 'web-01': true }] })
    }))
    const next = keep(receiver())
    const w = await testWorld()
    await updateSection(w.deps, 'salt', { url: old.url, username: 'u', password: 'old-pass' })
    // The settings change lands while the client waits to retry (the backoff sleep).
    const client = new SaltClient(() => saltCredentials(w.deps), { timeoutMs: 2000, sleep: async () => void (await updateSection(w.deps, 'salt', { url: next.url, password: 'new-pass' })) })
    expect(await client.login()).toBe('old-token')
    expect(await client.local('*', 'test.ping')).toEqual({ 'web-01': true })
    expect(old.seen.map((x) => x.path)).toEqual([...(loginFailures ? ['/login'] : []), '/login', '/', '/'])
    expect(next.seen).toHaveLength(0)
  })
})

describe('credentials never follow a redirect', () => {
  test('a 308 from salt-api: the login is not re-sent to the Location (test-salt, and the pollers\' client); the detail says why', async () => {
    const target = keep(receiver())
    const moved = keep(receiver(() => new Response('moved', { status: 308, headers: { location: `${target.url}/login` } })))
    const w = await testWorld()
    const r = await call(w, 'POST', '/api/admin/settings/test-salt', { body: { url: moved.url, username: 'saltdeck', password: 'redirect-pass', verify: true, eauth: 'pam' } })
    expect(r.body).toEqual({ ok: false, minion_count: null, detail: 'salt-api answered 308, a redirect, which Saltdeck does not follow (it would carry the password elsewhere): enter the address it points to.' })
    await updateSection(w.deps, 'salt', { url: moved.url, username: 'saltdeck', password: 'redirect-pass' })
    const client = new SaltClient(() => saltCredentials(w.deps), { sleep: async () => {}, timeoutMs: 2000 })
    expect((await client.login().catch((e) => e)).httpStatus).toBe(308)
    expect(moved.seen.length).toBeGreaterThan(0)
    expect(target.seen).toHaveLength(0)
  })
  test('a 308 from a webhook receiver: the signed body is not re-sent to the Location', async () => {
    const target = keep(receiver(() => new Response('ok')))
    const moved = keep(receiver(() => new Response('moved', { status: 308, headers: { location: `${target.url}/hook` } })))
    const w = await testWorld()
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: `${moved.url}/hook`, secret: 'hmac-k' } } })).body
    expect((await call(w, 'POST', `/api/alerts/channels/${ch.id}/test`)).body).toEqual({ ok: false, detail: 'The receiver answered 308, a redirect, which Saltdeck does not follow.' })
    expect(target.seen).toHaveLength(0)
  })
})

describe('tests say a status and a reason of their own, never what the remote said', () => {
  test('an answer of 500 with a secret-looking body: "answered 500", not the body (salt test, webhook and Slack tests)', async () => {
    const loud = keep(receiver(() => new Response(`<html><p>${SECRET_BODY}</p></html>`, { status: 500 })))
    const w = await testWorld()
    const salt = await call(w, 'POST', '/api/admin/settings/test-salt', { body: { url: loud.url, username: 'u', password: 'p', verify: true, eauth: 'pam' } })
    expect(salt.body).toEqual({ ok: false, detail: 'salt-api answered 500.', minion_count: null })
    for (const type of ['webhook', 'slack']) {
      const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: type, type, config: { url: `${loud.url}/hook` } } })).body
      expect((await call(w, 'POST', `/api/alerts/channels/${ch.id}/test`)).body).toEqual({ ok: false, detail: 'The receiver answered 500.' })
    }
    // The delivery log a viewer reads holds the same sentence.
    expect(JSON.stringify((await call(w, 'GET', '/api/alerts/deliveries', { who: 'viewer' })).body)).not.toContain('wJalrXUtnFEMI')
  })
  test('an SSH server: "not an HTTP server" / "not an SMTP server", never its banner', async () => {
    const ssh = keep(tcpServer(`${BANNER}\r\n`))
    const w = await testWorld()
    const salt = await call(w, 'POST', '/api/admin/settings/test-salt', { body: { url: `http://127.0.0.1:${ssh.port}`, username: 'u', password: 'p', verify: true, eauth: 'pam' } })
    expect(salt.body).toEqual({ ok: false, detail: 'salt-api could not be reached: not an HTTP server.', minion_count: null })
    const hook = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: `http://127.0.0.1:${ssh.port}/` } } })).body
    expect((await call(w, 'POST', `/api/alerts/channels/${hook.id}/test`)).body).toEqual({ ok: false, detail: 'The receiver could not be reached: not an HTTP server.' })
    const mail = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'mail', type: 'email', config: { host: '127.0.0.1', port: ssh.port, security: 'none', from: 'a@example.com', to: ['b@example.com'] } } })).body
    expect((await call(w, 'POST', `/api/alerts/channels/${mail.id}/test`)).body).toEqual({ ok: false, detail: 'The mail server did not take the message: not an SMTP server.' })
  })
  test('an SMTP greeting or reply is not echoed: its code at most', async () => {
    const refusing = keep(tcpServer('554 5.7.1 relay.internal.corp refuses you: hidden-greeting-91\r\n'))
    const picky = keep(tcpServer('220 relay.internal.corp ESMTP hidden-greeting-92\r\n', (l) => (l.toUpperCase().startsWith('EHLO') ? '250 relay.internal.corp\r\n' : l.toUpperCase().startsWith('MAIL') ? '550 5.1.0 hidden-reply-93 sender rejected\r\n' : '250 ok\r\n')))
    const w = await testWorld()
    const mk = async (port: number) => (await call(w, 'POST', '/api/alerts/channels', { body: { name: `m${port}`, type: 'email', config: { host: '127.0.0.1', port, security: 'none', from: 'a@example.com', to: ['b@example.com'] } } })).body.id
    expect((await call(w, 'POST', `/api/alerts/channels/${await mk(refusing.port)}/test`)).body).toEqual({ ok: false, detail: 'The mail server did not take the message: it refused the connection (554).' })
    expect((await call(w, 'POST', `/api/alerts/channels/${await mk(picky.port)}/test`)).body).toEqual({ ok: false, detail: 'The mail server did not take the message: it refused the sender or the recipients (550).' })
  })
  test('nobody listening and a silent server: "connection refused", "timed out"', async () => {
    const silent = keep(tcpServer(''))
    const w = await testWorld()
    const port = keep(tcpServer('')).port
    stops.pop()!()
    const r = await call(w, 'POST', '/api/admin/settings/test-salt', { body: { url: `http://127.0.0.1:${port}`, username: 'u', password: 'p', verify: true, eauth: 'pam' } })
    expect(r.body.detail).toBe('salt-api could not be reached: connection refused.')
    const client = new SaltClient(() => ({ url: `http://127.0.0.1:${silent.port}`, username: 'u', password: 'p', eauth: 'pam', verify: true }), { timeoutMs: 300, attempts: 1 })
    expect((await client.login().catch((e) => e)).reason).toBe('timed out')
  })
})

describe('TLS failures in Saltdeck\'s words', () => {
  test('a self-signed certificate with verify on, and TLS spoken to a plain HTTP server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saltdeck-outbound-tls-'))
    stops.push(() => rmSync(dir, { recursive: true, force: true }))
    Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { stdout: 'ignore', stderr: 'ignore' })
    const secure = Bun.serve({ port: 0, hostname: '127.0.0.1', tls: { cert: Bun.file(join(dir, 'c.pem')), key: Bun.file(join(dir, 'k.pem')) }, fetch: () => new Response(SECRET_BODY) })
    stops.push(() => secure.stop(true))
    const plain = keep(receiver(() => new Response(SECRET_BODY)))
    const w = await testWorld()
    const test = (url: string) => call(w, 'POST', '/api/admin/settings/test-salt', { body: { url, username: 'u', password: 'p', verify: true, eauth: 'pam' } })
    expect((await test(`https://127.0.0.1:${secure.port}`)).body.detail).toBe('salt-api could not be reached: its TLS certificate was not accepted.')
    expect((await test(plain.url.replace('http:', 'https:'))).body.detail).toBe('salt-api could not be reached: TLS handshake failed.')
  })
})

describe('link-local and cloud metadata destinations are refused', () => {
  const METADATA = ['http://169.254.169.254/latest', 'http://[::ffff:169.254.169.254]/', 'http://[::ffff:a9fe:a9fe]/', 'http://2852039166/', 'http://0xa9.0xfe.0xa9.0xfe/', 'http://[fe80::1]/', 'http://[fd00:ec2::254]/', 'http://169.254.10.20:8000/']
  test('saving or testing such an address is a 422 that says why; nothing is stored', async () => {
    const w = await testWorld()
    for (const url of METADATA) {
      for (const [method, path, body, loc] of [
        ['PUT', '/api/admin/settings/salt', { url }, ['body', 'url']],
        ['POST', '/api/admin/settings/test-salt', { url, username: 'u', password: 'p', verify: true, eauth: 'pam' }, ['body', 'url']],
        ['POST', '/api/alerts/channels', { name: 'h', type: 'webhook', config: { url } }, ['body', 'config', 'url']],
        ['POST', '/api/alerts/channels', { name: 's', type: 'slack', config: { url } }, ['body', 'config', 'url']],
      ] as const) {
        const r = await call(w, method, path, { body })
        expect(r.status, `${path} ${url}`).toBe(422)
        expect(r.body.detail).toEqual([{ type: 'value_error', loc, msg: expect.stringContaining('is a link-local or cloud metadata address: Saltdeck does not send there unless SALTDECK_OUTBOUND_ALLOW names it'), input: url, ctx: { error: {} } }])
      }
    }
    const mail = await call(w, 'POST', '/api/alerts/channels', { body: { name: 'm', type: 'email', config: { host: '169.254.169.254', port: 25, security: 'none', from: 'a@example.com', to: ['b@example.com'] } } })
    expect(mail.status).toBe(422)
    expect(mail.body.detail[0]).toMatchObject({ loc: ['body', 'config', 'host'], msg: 'Value error, 169.254.169.254 is a link-local or cloud metadata address: Saltdeck does not send there unless SALTDECK_OUTBOUND_ALLOW names it' })
    const ok = await call(w, 'POST', '/api/alerts/channels', { body: { name: 'ok', type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' } } })
    const patch = await call(w, 'PATCH', `/api/alerts/channels/${ok.body.id}`, { body: { config: { url: 'http://169.254.169.254/' } } })
    expect(patch.status).toBe(422)
    expect((await call(w, 'GET', `/api/alerts/channels/${ok.body.id}`)).body.config.url).toBe('http://127.0.0.1:9/hook')
    expect((await call(w, 'GET', '/api/alerts/channels')).body.channels).toHaveLength(1)
    expect((await call(w, 'GET', '/api/admin/settings')).body.salt.url).toBeNull()
  })
  test('loopback and private ranges stay allowed; SALTDECK_OUTBOUND_ALLOW lets a named address or range through', async () => {
    const w = await testWorld()
    for (const url of ['http://127.0.0.1:9/', 'http://[::1]:9/', 'http://10.1.2.3/', 'http://192.168.1.5/', 'http://172.16.0.1/', 'http://[fd12::5]/', 'http://localhost:9/'])
      expect((await call(w, 'POST', '/api/alerts/channels', { body: { name: url, type: 'webhook', config: { url } } })).status, url).toBe(201)
    const v = await testWorld({ outboundAllow: '169.254.169.254, fe80::/64' })
    for (const url of ['http://169.254.169.254/', 'http://[fe80::1]/'])
      expect((await call(v, 'PUT', '/api/admin/settings/salt', { body: { url } })).status, url).toBe(200)
    expect((await call(v, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://169.254.169.253/' } })).status).toBe(422)
  })
  test('a host name that resolves to 169.254.169.254 is refused at save', async () => {
    const { useResolver } = await import('../../src/lib/outbound')
    // A name resolving there cannot be made in the sandbox (no DNS of our own): the resolver is the one double.
    const restore = useResolver(async (h) => (h === 'metadata.example' ? ['10.0.0.1', '169.254.169.254'] : ['127.0.0.1']))
    try {
      const w = await testWorld()
      const r = await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://metadata.example:8000' } })
      expect(r.status).toBe(422)
      expect(r.body.detail[0].msg).toBe('Value error, metadata.example resolves to 169.254.169.254, which is a link-local or cloud metadata address: Saltdeck does not send there unless SALTDECK_OUTBOUND_ALLOW names it')
      expect((await call(w, 'PUT', '/api/admin/settings/salt', { body: { url: 'http://salt.example:8000' } })).status).toBe(200)
    } finally {
      restore()
    }
  })
  test('an address saved before (or from the environment) is refused when tested and when sent, without a connection', async () => {
    const w = await testWorld()
    await updateSection(w.deps, 'salt', { url: 'http://169.254.169.254/', username: 'u', password: 'p' })
    const t = await call(w, 'POST', '/api/admin/settings/test-salt-saved')
    expect(t.body).toEqual({ ok: false, minion_count: null, detail: 'salt-api could not be reached: 169.254.169.254 is a link-local or cloud metadata address: Saltdeck does not send there unless SALTDECK_OUTBOUND_ALLOW names it.' })
    const hook = await createChannel(w.deps, { name: 'old', type: 'webhook', config: { url: 'http://[::ffff:169.254.169.254]/hook', secret: 'k' }, enabled: true })
    const mail = await createChannel(w.deps, { name: 'oldmail', type: 'email', config: { host: '169.254.169.254', port: 25, security: 'none', from: 'a@example.com', to: ['b@example.com'] }, enabled: true })
    const t0 = Date.now()
    expect((await call(w, 'POST', `/api/alerts/channels/${hook.id}/test`)).body).toEqual({ ok: false, detail: 'Not sent: ::ffff:a9fe:a9fe is a link-local or cloud metadata address: Saltdeck does not send there unless SALTDECK_OUTBOUND_ALLOW names it.' })
    expect((await call(w, 'POST', `/api/alerts/channels/${mail.id}/test`)).body.detail).toStartWith('Not sent: 169.254.169.254 is a link-local')
    expect(Date.now() - t0).toBeLessThan(1000)
  })
})

afterAll(async () => {
  for (const s of stops.splice(0)) await s()
})
