/**
 * Source packages, learned once per package key. Vulnerability feeds name source packages (`openssl`); minions report
 * binary ones (`libssl3`). After each inventory refresh, every key whose source is not known is asked of ONE present
 * minion that holds it (`pkg.info_installed` with only the names it lacks, in batches), and the answer is kept with the
 * key; a key no minion answered for is tried again a day later, never on every refresh.
 */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { errorText } from '../../salt/errors'
import { presentMinionIds } from '../minions/service'
import { CHUNK, minionOrder } from './holders'
import { bumpGeneration, matchKeys, recountAll } from '../vulns/findings'

/** How one learning pass went. */
export interface LearnResult {
  keys: number
  learned: number
  minions: number
  calls: number
  ms: number
}

/** Names per pkg.info_installed call, and calls in flight at once. */
const BATCH = 300
const PARALLEL = 4
/** A key no minion answered for is asked again after this long. */
const RETRY_MS = 24 * 3600_000

/** The source package name of an RPM's source file name (`openssl-3.0.7-24.el9.src.rpm` → `openssl`). */
export function rpmSourceName(srpm: string): string | null {
  const m = /^(.+)-[^-]+-[^-]+\.(src|nosrc)\.rpm$/.exec(srpm)
  return m ? m[1]! : null
}

/** The source name in one pkg.info_installed entry: Debian's `source`, or the RPM's source file's name. */
function sourceIn(info: unknown): string | null {
  if (!info || typeof info !== 'object') return null
  const i = info as Record<string, unknown>
  if (typeof i.source === 'string' && i.source) return i.source.split(' ')[0]!
  for (const k of ['source_rpm', 'sourcerpm']) if (typeof i[k] === 'string') return rpmSourceName(i[k] as string)
  return null
}

/** The first present holder of each key, by minion number order (one chunk read per key, usually the first). */
function chooseHolders(deps: AppDeps, keyIds: number[]): Map<string, number[]> {
  const db = deps.db.$client
  const present = new Set(presentMinionIds(deps))
  const order = minionOrder(db)
  const chunks = db.query<{ chunk: number; bits: Uint8Array }, [number]>('SELECT chunk, bits FROM package_holders WHERE key_id = ?1 ORDER BY chunk')
  const byMinion = new Map<string, number[]>()
  for (const id of keyIds) {
    let chosen: string | null = null
    for (const c of chunks.iterate(id)) {
      const nums: number[] = []
      if (c.bits.byteLength === CHUNK / 8) {
        for (let i = 0; i < c.bits.byteLength && nums.length < 64; i++) for (let b = 0; b < 8; b++) if (c.bits[i]! & (1 << b)) nums.push(c.chunk * CHUNK + i * 8 + b)
      } else for (let i = 0; i + 1 < c.bits.byteLength; i += 2) nums.push(c.chunk * CHUNK + (c.bits[i]! | (c.bits[i + 1]! << 8)))
      chosen = nums.map((n) => order.ids[n]).find((m) => m !== undefined && present.has(m)) ?? null
      if (chosen) break
    }
    if (!chosen) continue
    let list = byMinion.get(chosen)
    if (!list) byMinion.set(chosen, (list = []))
    list.push(id)
  }
  return byMinion
}

/** Learns the source package of every key that lacks one; re-matches vulnerabilities for keys whose source differs from their name. */
export async function learnSources(deps: AppDeps, client: SaltClient, internalJid: () => string): Promise<LearnResult> {
  const t0 = performance.now()
  const db = deps.db.$client
  const now = deps.clock.now()
  const keys = db.query<{ id: number; name: string }, [number]>(
    'SELECT id, name FROM package_keys WHERE source_name IS NULL AND (source_tried_at IS NULL OR source_tried_at < ?1)',
  ).all(now - RETRY_MS)
  const out: LearnResult = { keys: keys.length, learned: 0, minions: 0, calls: 0, ms: 0 }
  if (!keys.length) return out
  const nameOf = new Map(keys.map((k) => [k.id, k.name]))
  const byMinion = chooseHolders(deps, keys.map((k) => k.id))
  out.minions = byMinion.size
  const jobs: { minion: string; names: string[]; keys: number[] }[] = []
  for (const [minion, ids] of byMinion) {
    const names = [...new Set(ids.map((id) => nameOf.get(id)!))]
    for (let i = 0; i < names.length; i += BATCH) {
      const part = new Set(names.slice(i, i + BATCH))
      jobs.push({ minion, names: [...part], keys: ids.filter((id) => part.has(nameOf.get(id)!)) })
    }
  }
  const setSource = db.query('UPDATE package_keys SET source_name = ?2, source_tried_at = ?3 WHERE id = ?1')
  const tried = db.query('UPDATE package_keys SET source_tried_at = ?2 WHERE id = ?1 AND source_name IS NULL')
  const renamed: number[] = []
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!
      out.calls++
      let answer: Record<string, unknown> = {}
      try {
        const ret = (await client.local([job.minion], 'pkg.info_installed', { arg: job.names, kwarg: { failhard: false }, tgt_type: 'list', jid: internalJid() })) as Record<string, unknown>
        const mine = ret?.[job.minion]
        if (mine && typeof mine === 'object' && !Array.isArray(mine)) answer = mine as Record<string, unknown>
      } catch (e) {
        deps.log.warn('source package lookup failed', { minion: job.minion.slice(0, 100), error: errorText(e) })
      }
      db.transaction(() => {
        for (const id of job.keys) {
          const name = nameOf.get(id)!
          const src = sourceIn(answer[name])
          if (src) {
            setSource.run(id, src.slice(0, 512), now)
            out.learned++
            if (src !== name) renamed.push(id)
          } else tried.run(id, now)
        }
      })()
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL, jobs.length) }, worker))
  // Keys now known by another name may meet other records: match them again, and recount if anything moved.
  if (renamed.length)
    db.transaction(() => {
      if (matchKeys(db, renamed)) bumpGeneration(db), recountAll(db)
    })()
  out.ms = Math.round(performance.now() - t0)
  deps.log.info('source packages learned', { ...out })
  return out
}
