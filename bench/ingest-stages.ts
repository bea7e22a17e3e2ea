/**
 * In-process ingest profile (issue 3): the stream's own path — SseParser → JSON.parse + normalize → applyFacts in
 * batches of BATCH_MAX — over generated job.new + 50 job.ret frames, into a fresh data dir on disk, then the search
 * indexing of the same events (a worker thread's work in the service, timed here on its own). No HTTP, no source
 * process: it shows what each stage costs per event. Run: bun bench/ingest-stages.ts [events]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { openDataDir } from '../src/server'
import { Logger } from '../src/lib/log'
import { SseParser } from '../src/salt/sse'
import { normalize } from '../src/salt/normalize'
import type { SaltFacts } from '../src/salt/facts'
import { applyFacts } from '../src/features/ingest/apply'
import { BATCH_MAX } from '../src/salt/event-stream'
import { indexActivity } from '../src/features/activity/service'

const total = Number(process.argv[2] ?? 510_000)
const dir = mkdtempSync(join(tmpdir(), 'sd-stages-'))
const deps = await openDataDir(loadConfig({ ...process.env, SALTDECK_ADMIN_PASSWORD: 'bench-password' }, { dataDir: dir }), new Logger())

let jidN = 20261121080000000000n
/** One job.new and 50 returns in salt-api's wire format, as bench/sse-source.ts writes them. */
function chunk(): string {
  const jid = String(jidN++)
  const stamp = new Date().toISOString().replace('Z', '000')
  let s = `tag: salt/job/${jid}/new\ndata: {"data": {"jid": "${jid}", "tgt_type": "glob", "tgt": "web-*", "user": "root", "fun": "test.ping", "arg": [], "minions": [], "missing": [], "_stamp": "${stamp}"}, "tag": "salt/job/${jid}/new"}\n\n`
  for (let m = 0; m < 50; m++)
    s += `tag: salt/job/${jid}/ret/web-${m}\ndata: {"data": {"cmd": "_return", "id": "web-${m}", "success": true, "return": true, "retcode": 0, "jid": "${jid}", "fun": "test.ping", "fun_args": [], "user": "root", "_stamp": "${stamp}"}, "tag": "salt/job/${jid}/ret/web-${m}"}\n\n`
  return s
}
const chunks = Array.from({ length: Math.ceil(total / 51) }, chunk)
const events = chunks.length * 51

const parser = new SseParser()
let t = performance.now()
const frames = chunks.flatMap((c) => parser.push(c))
const parseMs = performance.now() - t

t = performance.now()
const now = Date.now()
const intents: SaltFacts[] = frames.map((f) => {
  const msg = JSON.parse(f.data) as { tag: string; data: Record<string, unknown> }
  return normalize(msg.tag, msg.data, now)
})
const normMs = performance.now() - t

t = performance.now()
let stored = 0
const storeTimes: number[] = []
for (let i = 0; i < intents.length; i += BATCH_MAX) {
  const b0 = performance.now()
  stored += (await applyFacts(deps, intents.slice(i, i + BATCH_MAX))).length
  storeTimes.push(performance.now() - b0)
}
const storeMs = performance.now() - t
t = performance.now()
while ((await indexActivity(deps, 20_000)) > 0);
const indexMs = performance.now() - t
const us = (ms: number) => Math.round((ms * 1000 / events) * 100) / 100
const third = Math.floor(storeTimes.length / 3)
const batchUs = (xs: number[]) => us(xs.reduce((a, b) => a + b, 0) * storeTimes.length / xs.length)
console.log(JSON.stringify({
  events, stored, us_per_event: { parse: us(parseMs), normalize: us(normMs), store: us(storeMs), main_thread_total: us(parseMs + normMs + storeMs), search_index_worker: us(indexMs) },
  store_us_first_third: batchUs(storeTimes.slice(0, third)), store_us_last_third: batchUs(storeTimes.slice(-third)),
  main_thread_events_per_s: Math.round(events / ((parseMs + normMs + storeMs) / 1000)),
}, null, 1))
deps.db.$client.close()
rmSync(dir, { recursive: true, force: true })
