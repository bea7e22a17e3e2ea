// The alert channels against real components: an HTTP receiver (Bun.serve) for webhook and Slack, a real SMTP server
// (aiosmtpd from PyPI in .cache/smtp-venv) for email, plain and with STARTTLS, and the faults: 500, a hanging receiver,
// nobody listening.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sendNotification, testNotification, type Notification } from '../../src/features/alerts/channels/index'
import { sendEmail } from '../../src/features/alerts/channels/email'
import { until } from '../helpers/until'

const CI = process.env.CI === 'true'
const HOSTILE = '<img src=x onerror=alert(1)>&"\''
const note = (subjects: string[], status: 'firing' | 'resolved' = 'firing'): Notification => ({
  id: '0190f0f0-0000-7000-8000-0000000000aa', rule: { id: 'r1', name: 'Failed runs', kind: 'run_failed' }, status, sent_at: '2026-11-23T08:00:00.000Z',
  alerts: subjects.map((s, i) => ({ id: `a${i}`, subject: s, summary: `${s}: state.apply failed`, first_seen_at: '2026-11-23T07:59:00.000Z', details: { jid: '1' } })),
})
const O = { publicUrl: null, timeoutMs: 1500 }

/** A real HTTP receiver; `mode` decides its answer. */
const got: { body: string; headers: Headers }[] = []
let mode: 'ok' | 'fail' | 'hang' = 'ok'
const recv = Bun.serve({
  port: 0, hostname: '127.0.0.1', idleTimeout: 0,
  async fetch(req) {
    const body = await req.text()
    if (mode === 'hang') return new Promise<Response>(() => {})
    if (mode === 'fail') return new Response('<html>Internal Server Error</html>', { status: 500 })
    got.push({ body, headers: req.headers })
    return new Response('ok')
  },
})
const url = `http://127.0.0.1:${recv.port}/hook`
afterAll(() => recv.stop(true))

describe('webhook and slack', () => {
  test('the webhook body is the notification, signed with HMAC-SHA256 of the exact bytes; no signature without a secret', async () => {
    got.length = 0
    expect(await sendNotification('webhook', { url, secret: 'k3y' }, note(['web-01']), O)).toEqual({ ok: true, detail: 'Delivered: the receiver answered 200.' })
    const [r] = got
    expect(JSON.parse(r!.body)).toEqual(note(['web-01']))
    expect(r!.headers.get('x-saltdeck-signature')).toBe(`sha256=${createHmac('sha256', 'k3y').update(r!.body).digest('hex')}`)
    await sendNotification('webhook', { url }, note(['web-01']), O)
    expect(got[1]!.headers.get('x-saltdeck-signature')).toBeNull()
  })
  test('slack text: headline, subjects escaped, a long list cut with a count, the link only with a public URL', async () => {
    got.length = 0
    const many = [HOSTILE, ...Array.from({ length: 29 }, (_, i) => `web-${i}`)]
    expect((await sendNotification('slack', { url }, note(many), { ...O, publicUrl: 'https://saltdeck.example.com/' })).ok).toBe(true)
    const text = JSON.parse(got[0]!.body).text as string
    expect(text.split('\n')[0]).toBe('*FIRING: Failed runs (30 subjects)*')
    expect(text).toContain('• &lt;img src=x onerror=alert(1)&gt;&amp;"\'')
    expect(text).not.toContain('<img')
    expect(text).toContain('…and 10 more')
    expect(text).toContain('<https://saltdeck.example.com/#/alerts|See the alerts in Saltdeck>')
    await sendNotification('slack', { url }, note(['web-01']), O)
    expect(JSON.parse(got[1]!.body).text).not.toContain('http')
  })
  test('slack text: mentions, links, images, addresses and new lines from minion data arrive broken, shown as text', async () => {
    got.length = 0
    const J = '\u2060'
    const jid = '20261126999999999999 @channel ![x](http://evil.example/x.png) [Click to re-authenticate](https://evil.example/login)'
    const n = note(['web-01 @here <!channel> <@U024BE7LH> @all'])
    n.alerts[0]!.summary = `web-01: state.apply failed (jid ${jid})\n\n> quoted\n[ref]: http://evil.example\r# heading`
    expect((await sendNotification('slack', { url }, n, O)).ok).toBe(true)
    const text = JSON.parse(got[0]!.body).text as string
    const lines = text.split('\n')
    expect(lines).toHaveLength(2) // the headline and the one alert: no injected line, quote or heading
    expect(text).not.toMatch(/@(channel|here|all|U024)/)
    expect(text).not.toContain('<!')
    expect(text).not.toContain('<@')
    expect(text).not.toContain('](')
    expect(text).not.toContain('://')
    // Everything the minion sent is still there to read.
    expect(lines[1]).toBe(
      `• web-01 @${J}here &lt;!channel&gt; &lt;@${J}U024BE7LH&gt; @${J}all: web-01: state.apply failed (jid 20261126999999999999 @${J}channel ` +
        `![x]${J}(http:${J}//evil.example/x.png) [Click to re-authenticate]${J}(https:${J}//evil.example/login)) &gt; quoted [ref]: http:${J}//evil.example # heading`,
    )
  })
  test('a 500 is a failure that says the status; a hanging receiver times out; nobody listening is a failure, all in sentences', async () => {
    mode = 'fail'
    expect(await sendNotification('webhook', { url, secret: 'k3y' }, note(['a']), O)).toEqual({ ok: false, detail: 'The receiver answered 500.' })
    mode = 'hang'
    const t0 = Date.now()
    expect(await sendNotification('webhook', { url }, note(['a']), O)).toEqual({ ok: false, detail: 'The receiver did not answer within 2 s.' })
    expect(Date.now() - t0).toBeLessThan(5000)
    mode = 'ok'
    const down = await sendNotification('slack', { url: 'http://127.0.0.1:9/hook' }, note(['a']), O)
    expect(down.ok).toBe(false)
    expect(down.detail).toStartWith('The receiver could not be reached')
    expect(JSON.stringify(down)).not.toContain('k3y')
  })
  test('an endless answer: its body is cancelled unread, the send completes and memory stays flat', async () => {
    // A real receiver that answers with a body that never ends (64 KiB chunks for as long as anyone reads).
    const served = { bytes: 0, cancelled: 0 }
    const chunk = new Uint8Array(64 * 1024).fill(0x61)
    let status = 200
    const endless = Bun.serve({
      port: 0, hostname: '127.0.0.1', idleTimeout: 0,
      async fetch(req) {
        await req.text()
        return new Response(new ReadableStream({
          pull(c) { served.bytes += chunk.byteLength; c.enqueue(chunk) },
          cancel() { served.cancelled++ },
        }), { status })
      },
    })
    try {
      Bun.gc(true)
      const rss0 = process.memoryUsage().rss
      const u = `http://127.0.0.1:${endless.port}/hook`
      expect(await sendNotification('webhook', { url: u }, note(['web-01']), { publicUrl: null, timeoutMs: 3000 })).toEqual({ ok: true, detail: 'Delivered: the receiver answered 200.' })
      status = 500
      const failed = await sendNotification('slack', { url: u }, note(['web-01']), { publicUrl: null, timeoutMs: 5000 })
      expect(failed.ok).toBe(false)
      expect(failed.detail).toStartWith('The receiver answered 500')
      await until(() => served.cancelled === 2, 'both answers cancelled')
      const sent = served.bytes
      await Bun.sleep(300)
      // What the receiver managed to push stays at what the socket buffers hold, and stops once the reader cancelled.
      expect(sent).toBeLessThan(64 * 1024 * 1024)
      expect(served.bytes).toBe(sent)
      Bun.gc(true)
      expect(process.memoryUsage().rss - rss0).toBeLessThan(128 * 1024 * 1024)
    } finally {
      endless.stop(true)
    }
  })
})

// Email against a real SMTP server: without python3 the suite says why and skips, except under CI=true.
const setup = Bun.spawnSync(['bash', 'test/alerts/setup.sh'], { stdout: 'pipe', stderr: 'pipe' })
const noSmtp = setup.exitCode === 3 && !CI
if (noSmtp) console.warn(`test/api/alert-channels: email SKIPPED — ${setup.stderr.toString().trim()}`)
else if (setup.exitCode !== 0) throw new Error(`test/alerts/setup.sh failed: ${setup.stderr}`)

/** A free port on 127.0.0.1. */
function freePort() {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const p = s.port
  s.stop(true)
  return p
}
/** Starts aiosmtpd saving messages into a fresh dir; with TLS files it requires STARTTLS. */
async function smtpServer(tls?: { cert: string; key: string }, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-smtp-'))
  const port = freePort()
  const proc = Bun.spawn(['.cache/smtp-venv/bin/python', 'test/alerts/smtp_server.py', String(port), dir, ...(tls ? [tls.cert, tls.key] : [])], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  const line = new TextDecoder().decode((await reader.read()).value)
  if (!line.includes('ready')) throw new Error(`smtp server did not start: ${line}`)
  const mails = () => readdirSync(dir).sort().map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')))
  return { port, mails, stop: () => (proc.kill(), rmSync(dir, { recursive: true, force: true })) }
}

describe.skipIf(noSmtp)('email over a real SMTP server', () => {
  let plain: Awaited<ReturnType<typeof smtpServer>>
  let tls: Awaited<ReturnType<typeof smtpServer>>
  let smtps: Awaited<ReturnType<typeof smtpServer>>
  const certDir = mkdtempSync(join(tmpdir(), 'saltdeck-cert-'))
  beforeAll(async () => {
    Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem')], { stdout: 'ignore', stderr: 'ignore' })
    if (!existsSync(join(certDir, 'cert.pem'))) throw new Error('openssl could not make a certificate')
    const pair = { cert: join(certDir, 'cert.pem'), key: join(certDir, 'key.pem') }
    ;[plain, tls, smtps] = await Promise.all([smtpServer(), smtpServer(pair), smtpServer(pair, { SMTP_MODE: 'tls', SMTP_AUTH: 'alerts:s3cret' })])
    // A key pair and three Python servers: seconds on a loaded 2-core machine, more than the 5 s default.
  }, 30_000)
  afterAll(() => {
    plain?.stop()
    tls?.stop()
    smtps?.stop()
    rmSync(certDir, { recursive: true, force: true })
  })
  const cfg = (port: number, security: 'none' | 'starttls') => ({ host: '127.0.0.1', port, security, from: 'saltdeck@example.com', to: ['ops@example.com', 'oncall@example.com'] })

  test('a notification arrives with a text and an HTML part; every piece of minion data is escaped in the HTML', async () => {
    const r = await sendNotification('email', cfg(plain.port, 'none'), note([HOSTILE, 'db-01']), { publicUrl: 'https://saltdeck.example.com', timeoutMs: 5000 })
    expect(r).toEqual({ ok: true, detail: 'Delivered: the mail server accepted the message for 2 recipients.' })
    const [m] = await until(() => (plain.mails().length ? plain.mails() : null), 'the mail')
    expect(m).toMatchObject({ from: 'saltdeck@example.com', to: ['ops@example.com', 'oncall@example.com'], subject: '[Saltdeck] FIRING: Failed runs (2 subjects)', type: 'multipart/alternative', tls: false, notification: note([]).id })
    expect(m.text).toContain(`- ${HOSTILE}: ${HOSTILE}: state.apply failed`)
    expect(m.text).toContain('See the alerts in Saltdeck: https://saltdeck.example.com/#/alerts')
    expect(m.html).toContain('<code>&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39;</code>')
    expect(m.html).not.toContain('<img')
  })
  test('STARTTLS: the session is encrypted; the channel test message arrives', async () => {
    const r = await sendEmail(cfg(tls.port, 'starttls'), note(['web-01'], 'resolved'), { publicUrl: null, timeoutMs: 5000, tlsInsecure: true })
    expect(r.ok).toBe(true)
    const [m] = await until(() => (tls.mails().length ? tls.mails() : null), 'the mail over TLS')
    expect(m).toMatchObject({ tls: true, subject: '[Saltdeck] RESOLVED: Failed runs (1 subject)' })
    // Without STARTTLS the server refuses to take mail; the failure is a sentence.
    const refused = await sendNotification('email', cfg(tls.port, 'none'), note(['web-01']), { publicUrl: null, timeoutMs: 5000 })
    expect(refused.ok).toBe(false)
    expect(refused.detail).toStartWith('The mail server did not take the message')
    expect((await testNotification('email', cfg(plain.port, 'none'), { publicUrl: null, timeoutMs: 5000 })).ok).toBe(true)
    await until(() => plain.mails().some((x: any) => x.text.includes('This is a test from Saltdeck')) || null, 'the test mail')
  })
  test('TLS from the first byte with a login: the message arrives over TLS as that user; a wrong password is refused', async () => {
    const c = { ...cfg(smtps.port, 'none'), security: 'tls' as const, username: 'alerts', password: 's3cret' }
    expect((await sendEmail(c, note(['web-01']), { publicUrl: null, timeoutMs: 5000, tlsInsecure: true })).ok).toBe(true)
    const [m] = await until(() => (smtps.mails().length ? smtps.mails() : null), 'the mail over SMTPS')
    expect(m).toMatchObject({ tls: true, login: 'alerts', subject: '[Saltdeck] FIRING: Failed runs (1 subject)' })
    const wrong = await sendEmail({ ...c, password: 'nope' }, note(['web-01']), { publicUrl: null, timeoutMs: 5000, tlsInsecure: true })
    expect(wrong.ok).toBe(false)
    // The server's reply code, never its text (aiosmtpd says "Authentication credentials invalid").
    expect(wrong.detail).toBe('The mail server did not take the message: it refused the login (535).')
    expect(smtps.mails()).toHaveLength(1)
  })
  test('a login without TLS is refused before connecting unless the channel sets allow_insecure_auth; with it the login is sent as asked', async () => {
    // A server that would take the password in clear: a client that sends it shows as a login on the saved mail.
    const careless = await smtpServer(undefined, { SMTP_AUTH: 'alerts:s3cret', SMTP_AUTH_CLEARTEXT: '1' })
    try {
      const c = { ...cfg(careless.port, 'none'), username: 'alerts', password: 's3cret' }
      const refused = await sendEmail(c, note(['web-01']), { publicUrl: null, timeoutMs: 5000 })
      expect(refused).toEqual({ ok: false, detail: 'Not sent: the channel has a login but no TLS; set security to starttls or tls, or allow_insecure_auth.' })
      await Bun.sleep(200)
      expect(careless.mails()).toEqual([])
      expect((await sendEmail({ ...c, allow_insecure_auth: true }, note(['web-01']), { publicUrl: null, timeoutMs: 5000 })).ok).toBe(true)
      const [m] = await until(() => (careless.mails().length ? careless.mails() : null), 'the mail sent with a cleartext login')
      expect(m).toMatchObject({ tls: false, login: 'alerts' })
    } finally {
      careless.stop()
    }
  })
  test('a mail server that is not there is a failure in a sentence', async () => {
    const r = await sendNotification('email', cfg(freePort(), 'none'), note(['web-01']), { publicUrl: null, timeoutMs: 2000 })
    expect(r.ok).toBe(false)
    expect(r.detail).toStartWith('The mail server did not take the message')
  })
})
