// Proves GET /api/activity/stream: replay after Last-Event-ID / after_id, live frames through the ingest, filters and visibility, keepalives.
import { afterEach, expect, test } from 'bun:test'
import { saltWorld } from '../helpers/salt-world'
import { recordEvents } from '../../src/features/activity/service'
import { activityStream } from '../../src/features/activity/stream'
import { noFacts } from '../../src/salt/facts'
import { applyFacts } from '../../src/features/ingest/apply'

let w: Awaited<ReturnType<typeof saltWorld>>
afterEach(async () => w && (await w.close()))

/** Reads frames from an SSE response until `n` activity frames arrived. */
async function frames(res: Response, n: number, ms = 2000) {
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let text = ''
  const end = Date.now() + ms
  while ((text.match(/^event: activity$/gm) ?? []).length < n && Date.now() < end) {
    const r = await Promise.race([reader.read(), Bun.sleep(end - Date.now()).then(() => null)])
    if (!r || r.done) break
    text += dec.decode(r.value)
  }
  reader.cancel()
  return text
}

const ev = (ts: number, category: string, event_type: string, minion_id: string) => ({ ts, category, event_type, minion_id, summary: `${minion_id} ${event_type}` })

test('Last-Event-ID replays stored events after that id, then live ones arrive', async () => {
  w = await saltWorld()
  const t = w.clock.now()
  const stored = await recordEvents(w.deps, [ev(t, 'minion', 'minion.start', 'a'), ev(t + 1, 'minion', 'minion.start', 'b'), ev(t + 2, 'key', 'key.pend', 'c')])
  const res = await w.app.handle(new Request('http://localhost/api/activity/stream', { headers: { authorization: `Bearer ${w.tokens.admin}`, 'last-event-id': String(stored[0]!.id) } }))
  expect(res.headers.get('content-type')).toContain('text/event-stream')
  setTimeout(() => void applyFacts(w.deps, [{ ...noFacts(), presence: [{ minionId: 'live-1', online: true, ts: t + 100_000 }] }]), 30)
  const text = await frames(res, 4)
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
  expect(ids.slice(0, 2)).toEqual([stored[1]!.id, stored[2]!.id])
  expect(text).toContain('"minion_id":"live-1"')
  expect(text).toContain('event: activity')
})

test('the stream applies filters and visibility', async () => {
  w = await saltWorld()
  const t = w.clock.now()
  await recordEvents(w.deps, [ev(t, 'minion', 'minion.start', 'm1'), ev(t, 'key', 'key.pend', 'k1'), ev(t, 'job', 'job.new', 'j1')])
  const get = (who: string, q: string) => w.app.handle(new Request(`http://localhost/api/activity/stream?after_id=0${q}`, { headers: { authorization: `Bearer ${who}` } }))
  const keysOnly = await frames(await get(w.tokens.admin, '&category=key'), 1, 300)
  expect(keysOnly).toContain('k1')
  expect(keysOnly).not.toContain('m1')
  const nobody = await frames(await get(w.tokens.nobody, ''), 1, 300)
  expect(nobody).not.toContain('event: activity')
})

test('keepalive comments are sent', async () => {
  w = await saltWorld()
  const res = activityStream(w.deps, {}, [{ verb: '*', resource_glob: '*' }], 0, { keepaliveMs: 20 })
  const reader = res.body!.getReader()
  let text = ''
  while (!text.includes(': keepalive')) text += new TextDecoder().decode((await reader.read()).value)
  reader.cancel()
  expect(text).toContain(': keepalive\n\n')
})
