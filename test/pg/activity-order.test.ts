// Contract §15, the live activity stream across instances: ids come from one PostgreSQL sequence, and a transaction
// that took smaller ids can commit after one that took larger ids. Two `saltdeck serve` on one database; the test holds
// a transaction that stored events first (smaller ids) while the leader stores events from salt and commits: every
// open stream, on either instance, must still deliver every event exactly once, and a kept list total must count the
// late ones.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe, type Served } from '../helpers/serve'
import { FakeSalt, newJid } from '../helpers/fake-salt'
import { freshPostgresUrl } from '../helpers/migrations'
import { until } from '../helpers/until'
import { openPostgres, type Db } from '../../src/db/client'
import { sql } from '../../src/db/sql'

const root = mkdtempSync(join(tmpdir(), 'saltdeck-order-'))
const salt = new FakeSalt().start().addMinions(['web-01'])
let url = ''
let a: Served
let b: Served
let db: Db
let token = ''

const env = () => ({
  SALTDECK_DATABASE_URL: url, SALTDECK_ADMIN_PASSWORD: 'order-admin-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024',
  SALTDECK_SALT_URL: salt.url, SALTDECK_SALT_USERNAME: 'saltdeck', SALTDECK_SALT_PASSWORD: 's3cr3t', SALTDECK_SALT_EAUTH: 'sharedsecret',
})
const api = async (s: Served, path: string) => (await (await fetch(s.url + path, { headers: { authorization: `Bearer ${token}` } })).json()) as any

/** An open activity stream: the ids of the frames it delivered, in order. */
async function openStream(s: Served) {
  const res = await fetch(`${s.url}/api/activity/stream`, { headers: { authorization: `Bearer ${token}` } })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  const got = { text: '', ids: [] as number[], summaries: [] as string[] }
  const opened = Promise.withResolvers<void>()
  void (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => null)
      if (!chunk || chunk.done) return
      got.text += dec.decode(chunk.value)
      if (got.text.includes('retry:')) opened.resolve()
      // Whole frames only: a frame ends with a blank line.
      let end: number
      while ((end = got.text.indexOf('\n\n')) >= 0) {
        const frame = got.text.slice(0, end)
        got.text = got.text.slice(end + 2)
        const data = /^data: (.*)$/m.exec(frame)
        if (/^event: activity$/m.test(frame) && data) {
          const e = JSON.parse(data[1]!)
          got.ids.push(e.id)
          got.summaries.push(e.summary)
        }
      }
    }
  })()
  await opened.promise
  return { got, close: () => reader.cancel() }
}

beforeAll(async () => {
  url = await freshPostgresUrl()
  a = await startServe(join(root, 'a'), env())
  mkdirSync(join(root, 'b'), { recursive: true, mode: 0o700 })
  copyFileSync(join(root, 'a', 'secret.key'), join(root, 'b', 'secret.key'))
  b = await startServe(join(root, 'b'), env())
  const r = await fetch(`${a.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'order-admin-pw' }) })
  token = r.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
  db = openPostgres(url, { max: 2 })
}, 60_000)

afterAll(async () => {
  await db?.close()
  for (const s of [a, b]) if (s && s.proc.exitCode === null) await s.stop()
  salt.stop()
  rmSync(root, { recursive: true, force: true })
})

test('events committed out of id order across writers reach every stream exactly once, and the kept total counts them', async () => {
  // A leads (it started first): its event stream from salt is up.
  await until(() => salt.streamCount >= 1 || null, "the leader's event stream", { ms: 15_000, every: 100 })
  const onA = await openStream(a)
  const onB = await openStream(b)

  // A writer that took its ids first and commits last: three events in a transaction the test holds open.
  const inserted = Promise.withResolvers<number[]>()
  const release = Promise.withResolvers<void>()
  const held = db.tx(async (tx) => {
    const rows = await tx.rows<{ id: number }>(sql`INSERT INTO activity_events (ts, category, event_type, summary)
      VALUES (${Date.now()}, 'key', 'key.accept', 'held-order 1'), (${Date.now()}, 'key', 'key.accept', 'held-order 2'), (${Date.now()}, 'key', 'key.accept', 'held-order 3') RETURNING id`)
    inserted.resolve(rows.map((r) => r.id))
    await release.promise
  })
  const heldIds = await inserted.promise

  // Meanwhile the leader stores events from salt (larger ids) and commits them.
  const jids = Array.from({ length: 5 }, () => newJid())
  for (const jid of jids) salt.publish(`salt/job/${jid}/new`, { jid, fun: 'test.ping', tgt: 'web-01', tgt_type: 'glob', user: 'root', arg: [], minions: ['web-01'] })
  const stored = await until(async () => {
    const events = (await api(b, '/api/activity?limit=50&category=job')).events as any[]
    const mine = events.filter((e) => jids.includes(e.jid))
    return mine.length === jids.length ? mine.map((e) => e.id as number) : null
  }, "the leader's events committed", { ms: 10_000, every: 50 })
  expect(Math.min(...stored)).toBeGreaterThan(Math.max(...heldIds))
  // A total kept now, before the held events commit (a filter that is not one of categories alone: kept, not counted).
  expect((await api(b, '/api/activity?search=held-order')).total).toBe(0)
  // Give the streams time to step past the held ids, as a stream by id would.
  await Bun.sleep(600)

  release.resolve()
  await held
  const all = [...heldIds, ...stored].sort((x, y) => x - y)
  for (const [name, s] of [['A', onA], ['B', onB]] as const) {
    await until(() => all.every((id) => s.got.ids.includes(id)) || null, `stream on ${name} delivering every event`, { ms: 10_000, every: 50 })
    // Exactly once: a little longer for any second copy.
    await Bun.sleep(300)
    const counts = new Map<number, number>()
    for (const id of s.got.ids) counts.set(id, (counts.get(id) ?? 0) + 1)
    expect(all.map((id) => [id, counts.get(id)])).toEqual(all.map((id) => [id, 1]))
  }
  // The kept total moved to the held events, which have ids below those it had already counted past.
  expect((await api(b, '/api/activity?search=held-order')).total).toBe(3)
  expect((await api(a, '/api/activity?search=held-order')).total).toBe(3)
  await onA.close()
  await onB.close()
}, 60_000)

test('a stream resumed by Last-Event-ID after an event of the held transaction delivers the rest once', async () => {
  const inserted = Promise.withResolvers<number[]>()
  const release = Promise.withResolvers<void>()
  const held = db.tx(async (tx) => {
    const rows = await tx.rows<{ id: number }>(sql`INSERT INTO activity_events (ts, category, event_type, summary)
      VALUES (${Date.now()}, 'key', 'key.accept', 'held-resume 1'), (${Date.now()}, 'key', 'key.accept', 'held-resume 2') RETURNING id`)
    inserted.resolve(rows.map((r) => r.id))
    await release.promise
  })
  const heldIds = await inserted.promise
  const jid = newJid()
  salt.publish(`salt/job/${jid}/new`, { jid, fun: 'test.ping', tgt: 'web-01', tgt_type: 'glob', user: 'root', arg: [], minions: ['web-01'] })
  const later = await until(async () => ((await api(b, '/api/activity?limit=50&category=job')).events as any[]).find((e) => e.jid === jid)?.id as number | undefined, 'the job event', { ms: 10_000, every: 50 })
  release.resolve()
  await held
  // The client had the first held event: it resumes after it and gets the second and the job's, once each.
  const res = await fetch(`${b.url}/api/activity/stream`, { headers: { authorization: `Bearer ${token}`, 'last-event-id': String(heldIds[0]) } })
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let text = ''
  const want = [heldIds[1]!, later]
  const ids = () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
  const deadline = Date.now() + 10_000
  while (!want.every((id) => ids().includes(id)) && Date.now() < deadline) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)])
    if (!chunk || chunk.done) break
    text += dec.decode(chunk.value)
  }
  await reader.cancel()
  expect(ids().filter((id) => want.includes(id)).sort((x, y) => x - y)).toEqual(want.sort((x, y) => x - y))
  expect(ids()).not.toContain(heldIds[0])
}, 30_000)
