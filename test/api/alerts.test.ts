// Contract §11: rules, evaluation where the facts land, one open alert per (rule, subject), grouping into one
// notification per rule and window, silences, and the outbox drained by the sender to a real HTTP receiver.
import { afterEach, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { call, testWorld } from '../helpers/app'
import { saltWorld } from '../helpers/salt-world'
import { normalize } from '../../src/salt/normalize'
import { applyFacts } from '../../src/features/ingest/apply'
import { noFacts } from '../../src/salt/facts'
import { notePublished } from '../../src/features/jobs/trust'
import { watchTime } from '../../src/features/alerts/watch'
import { groupTransitions, renotify } from '../../src/features/alerts/notify'
import { DEADLINE_GRACE_MS, DeliverySender, RETRY_FIRST_MS } from '../../src/features/alerts/sender'
import { send } from '../../src/features/alerts/send'
import { claimDue } from '../../src/features/alerts/outbox-store'
import { slackText } from '../../src/features/alerts/channels/http'
import { until } from '../helpers/until'
import { sql } from '../../src/db/sql'

type World = Awaited<ReturnType<typeof testWorld>>
let seq = 0
const failing = { 'test_|-x_|-x_|-fail_without_changes': { result: false, changes: {}, comment: 'Failure!', __run_num__: 0 } }
const passing = { 'test_|-x_|-x_|-succeed_without_changes': { result: true, changes: {}, comment: 'Success!', __run_num__: 0 } }
/** A state.apply return of a minion, stored through the ingest path at the world's time. */
async function run(w: World, minion: string, ret: unknown, args: unknown[] = []) {
  const jid = new Date(w.clock.now()).toISOString().replace(/\D/g, '').slice(0, 17) + String(seq++ % 1000).padStart(3, '0')
  // Published to that minion, so its return from the bus is believed (contract §17).
  notePublished(w.deps, jid, 'state.apply', [minion])
  await applyFacts(w.deps, [normalize(`salt/job/${jid}/ret/${minion}`, { id: minion, jid, fun: 'state.apply', fun_args: args, _stamp: new Date(w.clock.now()).toISOString().replace('Z', ''), return: ret }, w.clock.now())])
  return jid
}
const rule = async (w: World, body: Record<string, unknown>) => {
  const r = await call(w, 'POST', '/api/alerts/rules', { body })
  expect(r.status).toBe(201)
  return r.body
}
const firing = async (w: World) => (await call(w, 'GET', '/api/alerts')).body.alerts

/** A real HTTP receiver that records what it gets; `mode` decides its answer. */
function receiver() {
  const got: { body: string; signature: string | null }[] = []
  const r = { got, mode: 'ok' as 'ok' | 'fail' | 'hang', server: null as unknown as ReturnType<typeof Bun.serve> }
  r.server = Bun.serve({
    port: 0, hostname: '127.0.0.1', idleTimeout: 0,
    async fetch(req) {
      const body = await req.text()
      if (r.mode === 'hang') return new Promise<Response>(() => {})
      if (r.mode === 'fail') return new Response('down for maintenance', { status: 500 })
      got.push({ body, signature: req.headers.get('x-saltdeck-signature') })
      return new Response('ok')
    },
  })
  return r
}
let recv: ReturnType<typeof receiver> | null = null
afterEach(() => recv?.server.stop(true))

describe('rules', () => {
  test('create, read, change and delete; names unique case-insensitively; unknown channels and bad params are 422', async () => {
    const w = await testWorld()
    const r = await rule(w, { name: 'Failed runs', kind: 'run_failed' })
    expect(r).toMatchObject({ name: 'Failed runs', kind: 'run_failed', minion_glob: '*', params: { fun_glob: '*' }, channel_ids: [], enabled: true, renotify_minutes: 0 })
    expect(await call(w, 'POST', '/api/alerts/rules', { body: { name: 'FAILED RUNS', kind: 'run_failed' } })).toMatchObject({ status: 409, body: { detail: 'Alert rule name already exists' } })
    const bad = await call(w, 'POST', '/api/alerts/rules', { body: { name: 'x', kind: 'run_failed', channel_ids: ['0190f0f0-0000-7000-8000-000000000000'] } })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'channel_ids', 0], msg: 'Value error, unknown channel id' })
    expect((await call(w, 'POST', '/api/alerts/rules', { body: { name: 'y', kind: 'salt_unreachable', params: { for_minutes: 1441 } } })).status).toBe(422)
    expect((await call(w, 'POST', '/api/alerts/rules', { body: { name: 'z', kind: 'vulnerable', params: { min_severity: 'severe' } } })).status).toBe(422)
    expect((await call(w, 'PATCH', `/api/alerts/rules/${r.id}`, { body: { enabled: false, minion_glob: 'web*' } })).body).toMatchObject({ enabled: false, minion_glob: 'web*' })
    expect((await call(w, 'GET', '/api/alerts/rules')).body.rules).toHaveLength(1)
    expect((await call(w, 'DELETE', `/api/alerts/rules/${r.id}`)).status).toBe(204)
    expect((await call(w, 'GET', `/api/alerts/rules/${r.id}`)).status).toBe(404)
    expect((await call(w, 'GET', '/api/audit?action=alert_rule.create')).body.total).toBe(1)
  })
  test('salt_unreachable is about the whole fleet: a minion glob other than "*" is 422 on create and change (issue 23 item 1)', async () => {
    const w = await testWorld()
    const bad = await call(w, 'POST', '/api/alerts/rules', { body: { name: 'salt down', kind: 'salt_unreachable', minion_glob: 'db-*' } })
    expect(bad).toMatchObject({ status: 422, body: { detail: [{ type: 'value_error', loc: ['body', 'minion_glob'], msg: 'Value error, salt_unreachable is about the whole fleet and takes no minion glob', input: 'db-*' }] } })
    expect((await call(w, 'GET', '/api/alerts/rules')).body.rules).toEqual([])
    const r = await rule(w, { name: 'salt down', kind: 'salt_unreachable' })
    expect(r.minion_glob).toBe('*')
    expect((await call(w, 'PATCH', `/api/alerts/rules/${r.id}`, { body: { minion_glob: 'web*' } })).status).toBe(422)
    expect((await call(w, 'PATCH', `/api/alerts/rules/${r.id}`, { body: { minion_glob: '*', params: { for_minutes: 7 } } })).body).toMatchObject({ minion_glob: '*', params: { for_minutes: 7 } })
  })
})

describe('channels', () => {
  test('an email login without TLS is a 422 on create and update unless allow_insecure_auth is set; nothing changes', async () => {
    const w = await testWorld()
    const mail = { host: 'mail.example.com', port: 25, from: 'saltdeck@example.com', to: ['ops@example.com'], username: 'alerts', password: 's3cret' }
    const bad = await call(w, 'POST', '/api/alerts/channels', { body: { name: 'mail', type: 'email', config: { ...mail, security: 'none' } } })
    expect(bad.status).toBe(422)
    expect(bad.body.detail).toEqual([expect.objectContaining({ type: 'value_error', loc: ['body', 'config', 'security'], msg: 'Value error, a login needs security starttls or tls (or allow_insecure_auth: true to send it without TLS)' })])
    expect(JSON.stringify(bad.body)).not.toContain('s3cret')
    expect((await call(w, 'POST', '/api/alerts/channels', { body: { name: 'mail', type: 'email', config: { ...mail, security: 'none', allow_insecure_auth: false } } })).status).toBe(422)
    expect((await call(w, 'GET', '/api/alerts/channels')).body.channels).toEqual([])
    const ok = await call(w, 'POST', '/api/alerts/channels', { body: { name: 'mail', type: 'email', config: { ...mail, security: 'starttls' } } })
    expect(ok.status).toBe(201)
    const { password: _, ...plain } = mail
    const patch = await call(w, 'PATCH', `/api/alerts/channels/${ok.body.id}`, { body: { config: { ...plain, security: 'none' } } })
    expect(patch.status).toBe(422)
    expect((await call(w, 'GET', `/api/alerts/channels/${ok.body.id}`)).body.config).toMatchObject({ security: 'starttls', password_set: true })
    const allowed = await call(w, 'PATCH', `/api/alerts/channels/${ok.body.id}`, { body: { config: { ...plain, security: 'none', allow_insecure_auth: true } } })
    expect(allowed.status).toBe(200)
    expect(allowed.body.config).toMatchObject({ security: 'none', allow_insecure_auth: true, password_set: true })
    // Without a login there is nothing to protect: security none needs no flag.
    const { username: __, ...anon } = plain
    expect((await call(w, 'POST', '/api/alerts/channels', { body: { name: 'relay', type: 'email', config: { ...anon, security: 'none' } } })).status).toBe(201)
  })
})

describe('evaluation where the facts land', () => {
  test('run_failed: one open alert per minion, a repeat bumps count, a passing run resolves; dry runs, other minions and history never fire', async () => {
    const w = await testWorld()
    await run(w, 'web-01', failing) // before the rule exists: history
    w.clock.advance(1000)
    await rule(w, { name: 'web failures', kind: 'run_failed', minion_glob: 'web*' })
    w.clock.advance(1000)
    expect(await firing(w)).toEqual([])
    await run(w, 'web-01', failing)
    await run(w, 'db-01', failing)
    await run(w, 'web-02', failing, ['test=True'])
    let a = await firing(w)
    expect(a.map((x: any) => [x.subject, x.count, x.kind])).toEqual([['web-01', 1, 'run_failed']])
    expect(a[0].details).toMatchObject({ function: 'state.apply', status: 'unhealthy' })
    w.clock.advance(1000)
    await run(w, 'web-01', failing)
    a = await firing(w)
    expect(a.map((x: any) => [x.subject, x.count])).toEqual([['web-01', 2]])
    expect((await call(w, 'GET', '/metrics')).body).toContain('saltdeck_alerts_firing{kind="run_failed"} 1')
    w.clock.advance(1000)
    await run(w, 'web-01', passing)
    expect(await firing(w)).toEqual([])
    const metrics = (await call(w, 'GET', '/metrics')).body as string
    expect(metrics).not.toContain('saltdeck_alerts_firing{kind="run_failed"}')
    const resolved = (await call(w, 'GET', '/api/alerts?state=resolved')).body.alerts
    expect(resolved.map((x: any) => [x.subject, x.state, x.count])).toEqual([['web-01', 'resolved', 2]])
    expect(resolved[0].resolved_at).toBe(new Date(w.clock.now()).toISOString())
  })

  test('a run_failed message names the failing states, a few and then "and N more"; the resolved one says it succeeded again (issue 23 item 1)', async () => {
    const w = await testWorld()
    await rule(w, { name: 'failures', kind: 'run_failed' })
    w.clock.advance(1000)
    const states = (ids: string[], ok: string[] = []) => Object.fromEntries([
      ...ok.map((id, i) => [`pkg_|-${id}_|-${id}_|-installed`, { result: true, changes: {}, comment: 'ok', __id__: id, __run_num__: i }]),
      ...ids.map((id, i) => [`file_|-${id}_|-/etc/${id}_|-managed`, { result: false, changes: {}, comment: 'Failure!', __id__: id, __run_num__: ok.length + i }]),
    ])
    const jid = await run(w, 'web-01', states(['nginx-conf', 'php-conf', 'cron-job', 'motd', 'sshd-conf', 'ntp-conf'], ['nginx']))
    const two = await run(w, 'web-02', states(['nginx-conf', 'php-conf']))
    const a = (await firing(w)).sort((x: any, y: any) => (x.subject < y.subject ? -1 : 1))
    expect(a.map((x: any) => x.summary)).toEqual([
      `web-01: state.apply failed: nginx-conf, php-conf, cron-job and 3 more (jid ${jid})`,
      `web-02: state.apply failed: nginx-conf and php-conf (jid ${two})`,
    ])
    expect(a[0].details).toMatchObject({ jid, failed_count: 6, failed_states: ['nginx-conf', 'php-conf', 'cron-job', 'motd', 'sshd-conf', 'ntp-conf'] })
    w.clock.advance(1000)
    const fixed = await run(w, 'web-01', passing)
    const resolved = (await call(w, 'GET', '/api/alerts?state=resolved')).body.alerts
    expect(resolved.map((x: any) => x.summary)).toEqual([`web-01: state.apply succeeded again (jid ${fixed})`])
    // The resolved notification carries the resolved sentence, not "failed".
    w.clock.advance(60_000)
    await groupTransitions(w.deps, 30)
    const bodies = await w.deps.db.rows<{ status: string; body: string }>(sql`SELECT status, body FROM alert_notifications ORDER BY created_at, status`)
    const told = bodies.find((b) => b.status === 'resolved')!
    expect(JSON.parse(told.body).alerts.map((x: any) => x.summary)).toEqual([`web-01: state.apply succeeded again (jid ${fixed})`])
    const text = slackText(JSON.parse(told.body), { publicUrl: null, timeoutMs: 1000 })
    expect(text).toBe(`*RESOLVED: failures (1 subject)*\n• web-01: web-01: state.apply succeeded again (jid ${fixed})`)
    expect(text).not.toContain('failed')
  })
  test('key_pending fires when a key waits and resolves when it is decided; minion_offline fires after for_minutes and resolves when the minion is back', async () => {
    const w = await testWorld()
    await rule(w, { name: 'pending keys', kind: 'key_pending' })
    await rule(w, { name: 'offline', kind: 'minion_offline', params: { for_minutes: 10 } })
    // Key state and presence as the keys and presence pollers read them (salt/auth and salt/presence/* are only hints).
    const presence = (id: string, online: boolean) => applyFacts(w.deps, [{ ...noFacts(), presence: [{ minionId: id, online, ts: w.clock.now() }] }])
    await applyFacts(w.deps, [{ ...noFacts(), keys: [{ minionId: 'new-01', act: 'pend', ts: w.clock.now() }] }])
    expect((await firing(w)).map((x: any) => [x.kind, x.subject])).toEqual([['key_pending', 'new-01']])
    await applyFacts(w.deps, [normalize('salt/key', { act: 'accept', id: 'new-01', result: true }, w.clock.now())])
    expect(await firing(w)).toEqual([])
    await presence('db-01', true)
    await applyFacts(w.deps, [normalize('salt/key', { act: 'accept', id: 'db-01', result: true }, w.clock.now())])
    await presence('db-01', false)
    w.clock.advance(9 * 60_000)
    await watchTime(w.deps)
    expect(await firing(w)).toEqual([])
    w.clock.advance(2 * 60_000)
    await watchTime(w.deps)
    await watchTime(w.deps)
    const a = await firing(w)
    // new-01 was accepted but never seen: an accepted minion that does not answer is offline too.
    expect(a.map((x: any) => [x.kind, x.subject, x.count]).sort()).toEqual([['minion_offline', 'db-01', 2], ['minion_offline', 'new-01', 2]])
    expect(a.find((x: any) => x.subject === 'db-01').details.minutes_offline).toBe(11)
    await presence('db-01', true)
    await presence('new-01', true)
    expect(await firing(w)).toEqual([])
  })
  test('ack records who and when; the alert keeps firing', async () => {
    const w = await testWorld()
    await rule(w, { name: 'f', kind: 'run_failed' })
    await run(w, 'web-01', failing)
    const [a] = await firing(w)
    const acked = await call(w, 'POST', `/api/alerts/${a.id}/ack`, { who: 'operator' })
    expect(acked.body).toMatchObject({ state: 'firing', acked_by: 'oper' })
    expect((await call(w, 'POST', `/api/alerts/${a.id}/ack`, { who: 'viewer' })).status).toBe(403)
  })
})

test('master_unreachable: for_minutes 1..1440, default 2', async () => {
  const w = await testWorld()
  expect((await call(w, 'POST', '/api/alerts/rules', { body: { name: 'm', kind: 'master_unreachable', params: { for_minutes: 1441 } } })).status).toBe(422)
  expect((await call(w, 'POST', '/api/alerts/rules', { body: { name: 'm', kind: 'master_unreachable', params: { for_minutes: 0 } } })).status).toBe(422)
  expect((await rule(w, { name: 'Master down', kind: 'master_unreachable' })).params).toEqual({ for_minutes: 2 })
})

describe('salt_unreachable', () => {
  test('fires for subject salt-api once calls have failed for for_minutes, and resolves when a call succeeds', async () => {
    const w = await saltWorld()
    try {
      expect((await call(w, 'POST', '/api/alerts/rules', { body: { name: 'salt down', kind: 'salt_unreachable', params: { for_minutes: 1 } } })).status).toBe(201)
      w.salt.down = true
      await w.rt.scheduler.run('keys')
      w.clock.advance(59_000)
      await watchTime(w.deps)
      expect(await firing(w)).toEqual([])
      w.clock.advance(2000)
      await watchTime(w.deps)
      const [a] = await firing(w)
      expect(a).toMatchObject({ kind: 'salt_unreachable', subject: 'salt-api' })
      expect(a.summary).toStartWith('salt-api does not answer')
      w.salt.down = false
      await w.rt.scheduler.run('keys')
      await watchTime(w.deps)
      expect(await firing(w)).toEqual([])
    } finally {
      await w.close()
    }
  })
})

describe('notifications', () => {
  test('transitions of one rule within the group window go out as one notification listing every subject, once per channel; silenced alerts send nothing', async () => {
    const w = await testWorld()
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: 'http://127.0.0.1:9/hook', secret: 's3' } } })).body
    expect(ch.config).toEqual({ url: 'http://127.0.0.1:9/hook', secret_set: true })
    const r = await rule(w, { name: 'fleet failures', kind: 'run_failed', channel_ids: [ch.id] })
    for (let i = 0; i < 20; i++) await run(w, `web-${String(i).padStart(2, '0')}`, failing)
    expect(await groupTransitions(w.deps, 30)).toBe(0) // the window has not passed
    w.clock.advance(31_000)
    expect(await groupTransitions(w.deps, 30)).toBe(1)
    const d = (await call(w, 'GET', '/api/alerts/deliveries')).body
    expect(d.deliveries.map((x: any) => [x.channel_id, x.status, x.attempts])).toEqual([[ch.id, 'pending', 0]])
    const body = JSON.parse((await w.deps.db.row<{ body: string }>(sql`SELECT body FROM alert_notifications`))!.body)
    expect(body).toMatchObject({ rule: { id: r.id, name: 'fleet failures', kind: 'run_failed' }, status: 'firing' })
    expect(body.alerts).toHaveLength(20)
    // Silenced: web-0* fires again later, nothing is sent.
    expect((await call(w, 'POST', '/api/alerts/silences', { body: { subject_glob: 'db-*', ends_at: new Date(w.clock.now() + 3600_000).toISOString(), comment: 'maintenance' } })).status).toBe(201)
    await run(w, 'db-01', failing)
    w.clock.advance(31_000)
    expect(await groupTransitions(w.deps, 30)).toBe(0)
    expect((await firing(w)).map((x: any) => x.subject)).toContain('db-01')
  })
})

describe('renotify', () => {
  test('a rule with renotify_minutes tells again about an alert still firing, once per period; none without it', async () => {
    const w = await testWorld()
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' } } })).body
    await rule(w, { name: 'again', kind: 'run_failed', minion_glob: 'web-*', renotify_minutes: 60, channel_ids: [ch.id] })
    await rule(w, { name: 'once', kind: 'run_failed', minion_glob: 'db-*', channel_ids: [ch.id] })
    await run(w, 'web-01', failing)
    await run(w, 'db-01', failing)
    w.clock.advance(31_000)
    expect(await groupTransitions(w.deps, 30)).toBe(2)
    const notes = async () => (await w.deps.db.row<{ n: number }>(sql`SELECT count(*) AS n FROM alert_notifications`))!.n
    w.clock.advance(59 * 60_000)
    expect(await renotify(w.deps)).toBe(0)
    w.clock.advance(60_000)
    expect(await renotify(w.deps)).toBe(1)
    expect(await renotify(w.deps)).toBe(0) // already waiting for its window
    w.clock.advance(31_000)
    await groupTransitions(w.deps, 30)
    expect(await notes()).toBe(3)
    const last = JSON.parse((await w.deps.db.row<{ body: string }>(sql`SELECT body FROM alert_notifications ORDER BY created_at DESC LIMIT 1`))!.body)
    expect(last).toMatchObject({ status: 'firing', rule: { name: 'again' } })
    expect(last.alerts.map((a: any) => a.subject)).toEqual(['web-01'])
  })
})

/** A real SMTP tarpit: it greets, then answers EHLO one continuation line every 200 ms and never finishes. */
function tarpit() {
  const t = { open: 0, max: 0, accepted: 0, server: null as unknown as Bun.TCPSocketListener }
  const drips = new Map<unknown, ReturnType<typeof setInterval>>()
  t.server = Bun.listen({
    hostname: '127.0.0.1', port: 0,
    socket: {
      open(s) {
        t.accepted++
        t.max = Math.max(t.max, ++t.open)
        s.write('220 tarpit.example.com ESMTP\r\n')
      },
      data(s) {
        if (!drips.has(s)) drips.set(s, setInterval(() => s.write('250-still thinking\r\n'), 200))
      },
      close(s) {
        t.open--
        clearInterval(drips.get(s))
        drips.delete(s)
      },
    },
  })
  return { server: t.server, stats: () => t, stop: () => { for (const d of drips.values()) clearInterval(d); t.server.stop(true) } }
}

describe('delivery', () => {
  test('a real receiver gets the signed JSON once; a 500 is retried after the backoff; every attempt is recorded', async () => {
    const w = await testWorld()
    recv = receiver()
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: `http://127.0.0.1:${recv.server.port}/hook`, secret: 'topsecret' } } })).body
    await rule(w, { name: 'f', kind: 'run_failed', channel_ids: [ch.id] })
    await run(w, 'web-01', failing)
    w.clock.advance(31_000)
    await groupTransitions(w.deps, 30)
    const sender = new DeliverySender(w.deps, send, { concurrency: 2, timeoutMs: 2000, everyMs: 1_000_000 })
    recv.mode = 'fail'
    await sender.tick()
    let d = (await call(w, 'GET', '/api/alerts/deliveries')).body.deliveries[0]
    expect(d).toMatchObject({ status: 'pending', attempts: 1 })
    expect(d.last_error).toContain('500')
    expect(d.next_attempt_at).toBe(new Date(w.clock.now() + RETRY_FIRST_MS).toISOString())
    recv.mode = 'ok'
    await sender.tick() // not due yet
    expect(recv.got).toHaveLength(0)
    w.clock.advance(RETRY_FIRST_MS)
    await sender.tick()
    d = (await call(w, 'GET', '/api/alerts/deliveries')).body.deliveries[0]
    expect(d).toMatchObject({ status: 'sent', attempts: 2, last_error: null })
    expect(recv.got).toHaveLength(1)
    const sig = createHmac('sha256', 'topsecret').update(recv.got[0]!.body).digest('hex')
    expect(recv.got[0]!.signature).toBe(`sha256=${sig}`)
    expect(JSON.parse(recv.got[0]!.body)).toMatchObject({ status: 'firing', rule: { name: 'f' } })
    await sender.tick()
    expect(recv.got).toHaveLength(1)
    expect((await w.deps.db.row<{ n: number }>(sql`SELECT count(*) AS n FROM alert_attempts`))!.n).toBe(2)
  })
  test('a tarpit mail server: its attempt ends failed at the deadline, it never holds more than one slot, a webhook on the same rule goes out at once', async () => {
    const w = await testWorld()
    recv = receiver()
    const pit = tarpit()
    try {
      const mail = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'mail', type: 'email', config: { host: '127.0.0.1', port: pit.server.port, security: 'none', from: 'saltdeck@example.com', to: ['ops@example.com'] } } })).body
      const hook = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: `http://127.0.0.1:${recv.server.port}/hook` } } })).body
      await rule(w, { name: 'f', kind: 'run_failed', channel_ids: [mail.id, hook.id] })
      // Three notifications, so three mail deliveries and three webhook deliveries are due at once.
      for (const m of ['web-01', 'web-02', 'web-03']) {
        await run(w, m, failing)
        w.clock.advance(31_000)
        await groupTransitions(w.deps, 30)
      }
      const sender = new DeliverySender(w.deps, send, { concurrency: 4, timeoutMs: 1500, everyMs: 20 })
      const t0 = Date.now()
      sender.start()
      try {
        await until(() => recv!.got.length === 3, 'the three webhook deliveries', { ms: 1000 })
        expect(pit.stats().open).toBe(1) // the mail attempt is still outstanding
        const attempt = () => w.deps.db.row<{ ok: number; detail: string }>(sql`SELECT ok, detail FROM alert_attempts a JOIN alert_deliveries d ON d.id = a.delivery_id WHERE d.channel_id = ${mail.id}`)
        const first = await until(attempt, 'the first mail attempt', { ms: 4000 })
        expect(Date.now() - t0).toBeLessThan(1500 + 1000)
        expect(first).toEqual({ ok: 0, detail: 'The mail server did not finish within 2 s.' })
        await until(() => pit.stats().accepted >= 2, 'the next mail delivery', { ms: 2000 })
      } finally {
        await sender.stop()
      }
      expect(pit.stats().max).toBe(1)
      const byChannel = await w.deps.db.rows<{ channel_id: string; status: string; n: number }>(sql`SELECT channel_id, status, count(*) AS n FROM alert_deliveries GROUP BY channel_id, status`)
      expect(byChannel).toContainEqual({ channel_id: hook.id, status: 'sent', n: 3 })
    } finally {
      pit.stop()
    }
  }, 15_000)
  test('two ticks at once start one attempt per channel; a claimed delivery is no other claim\'s until its attempt is recorded', async () => {
    const w = await testWorld()
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' } } })).body
    await rule(w, { name: 'f', kind: 'run_failed', channel_ids: [ch.id] })
    // Two notifications, so two deliveries to the one channel are due at once.
    for (const m of ['web-01', 'web-02']) {
      await run(w, m, failing)
      w.clock.advance(31_000)
      await groupTransitions(w.deps, 30)
    }
    let open = 0
    let max = 0
    const calls: string[] = []
    const sender = new DeliverySender(w.deps, async (_type, _config, body) => {
      calls.push((body as { id: string }).id)
      max = Math.max(max, ++open)
      await Bun.sleep(20)
      open--
      return { ok: true, detail: 'ok' }
    }, { concurrency: 4, timeoutMs: 1000, everyMs: 1_000_000 })
    await Promise.all([sender.tick(), sender.tick()])
    expect(calls).toHaveLength(1)
    // A claim leaves the channels busy here alone; a delivery another claim (another instance) holds is not taken again.
    const now = w.clock.now()
    expect(await claimDue(w.deps.db, now, [ch.id], 4, now + 1000)).toEqual([])
    const [other] = await claimDue(w.deps.db, now, [], 4, now + 1000)
    expect(await claimDue(w.deps.db, now, [], 4, now + 1000)).toEqual([])
    expect(other!.channel_id).toBe(ch.id)
    // That claim's holder never records an attempt (it died): once the lease runs out the delivery is due again, sent once.
    w.clock.advance(1000)
    await sender.tick()
    expect(calls).toHaveLength(2)
    expect(max).toBe(1)
    expect((await call(w, 'GET', '/api/alerts/deliveries')).body.deliveries.map((d: any) => d.status)).toEqual(['sent', 'sent'])
  })
  test('a channel that overruns its own deadline is cut off by the sender: the attempt is recorded failed and the slot freed', async () => {
    const w = await testWorld()
    const ch = (await call(w, 'POST', '/api/alerts/channels', { body: { name: 'hook', type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' } } })).body
    await rule(w, { name: 'f', kind: 'run_failed', channel_ids: [ch.id] })
    await run(w, 'web-01', failing)
    w.clock.advance(31_000)
    await groupTransitions(w.deps, 30)
    // A double: no real receiver makes a send ignore its own deadline, which is the fault this guards against.
    const sender = new DeliverySender(w.deps, () => new Promise(() => {}), { concurrency: 1, timeoutMs: 100, everyMs: 1_000_000 })
    const t0 = Date.now()
    await sender.tick()
    expect(Date.now() - t0).toBeLessThan(100 + DEADLINE_GRACE_MS + 1000)
    expect((await call(w, 'GET', '/api/alerts/deliveries')).body.deliveries[0]).toMatchObject({ status: 'pending', attempts: 1, last_error: 'The attempt did not finish within 2 s.' })
  })
})
