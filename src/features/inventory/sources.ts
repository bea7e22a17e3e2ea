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
import { CHUNK, firstHolder, minionOrder } from './holders'
import { bumpGeneration, matchKeys, recountAll } from '../vulns/findings'
import { keysWithoutSource, setKeySource, setKeyTried } from './package-store'

/** How one learning pass went. */
export interface LearnResult {
  keys: number
  learned: number
  minions: number
  calls: number
  ms: number
}

/**
 * Names per pkg.info_installed call, and calls in flight at once: one, because salt 3006's master loses return events
 * when several large returns arrive at once (an IPC write fails in _return; seen on the test bed), and a lost event
 * leaves the call waiting for its timeout.
 */
const BATCH = 200
const PARALLEL = 1
/**
 * Seconds salt waits for one answer: pkg.info_installed reads each package's copyright file, ~10 ms a package on a
 * real Debian minion, so 300 names take seconds (salt's default of 5 s lost whole batches on the test bed).
 */
const CALL_TIMEOUT_S = 60
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

/** The first present holder of each key, in minion-number order, grouped by minion. */
async function chooseHolders(deps: AppDeps, keyIds: number[]): Promise<Map<string, number[]>> {
  const present = new Set(await presentMinionIds(deps))
  const order = await minionOrder(deps.db)
  const chunks = Math.ceil(order.rank.length / CHUNK)
  const byMinion = new Map<string, number[]>()
  for (const id of keyIds) {
    const num = await firstHolder(deps.db, id, chunks, (n) => present.has(order.ids[n] ?? ''))
    if (num === null) continue
    const chosen = order.ids[num]!
    let list = byMinion.get(chosen)
    if (!list) byMinion.set(chosen, (list = []))
    list.push(id)
  }
  return byMinion
}

/** One pkg.info_installed call: a minion, the names asked, the keys they answer for. */
interface SourceJob {
  minion: string
  names: string[]
  keys: number[]
}

/** The calls a learning pass would make now: every key without a source, grouped by the one minion asked for it. */
export async function planSources(deps: AppDeps): Promise<{ keys: number; nameOf: Map<number, string>; minions: number; jobs: SourceJob[] }> {
  const keys = await keysWithoutSource(deps.db, deps.clock.now() - RETRY_MS)
  const nameOf = new Map(keys.map((k) => [k.id, k.name]))
  const byMinion = keys.length ? await chooseHolders(deps, keys.map((k) => k.id)) : new Map<string, number[]>()
  const jobs: SourceJob[] = []
  for (const [minion, ids] of byMinion) {
    const names = [...new Set(ids.map((id) => nameOf.get(id)!))]
    for (let i = 0; i < names.length; i += BATCH) {
      const part = new Set(names.slice(i, i + BATCH))
      jobs.push({ minion, names: [...part], keys: ids.filter((id) => part.has(nameOf.get(id)!)) })
    }
  }
  return { keys: keys.length, nameOf, minions: byMinion.size, jobs }
}

/** Learns the source package of every key that lacks one; re-matches vulnerabilities for keys whose source differs from their name. */
export async function learnSources(deps: AppDeps, client: SaltClient, internalJid: () => string | Promise<string>): Promise<LearnResult> {
  const t0 = performance.now()
  const db = deps.db
  const now = deps.clock.now()
  const { keys, nameOf, minions, jobs } = await planSources(deps)
  const out: LearnResult = { keys, learned: 0, minions, calls: 0, ms: 0 }
  if (!keys) return out
  const renamed: number[] = []
  let next = 0
  let failure: unknown = null
  const worker = async () => {
    while (next < jobs.length && !failure) {
      const job = jobs[next++]!
      out.calls++
      let answer: Record<string, unknown> = {}
      try {
        const ret = (await client.local([job.minion], 'pkg.info_installed', { arg: job.names, kwarg: { failhard: false }, tgt_type: 'list', jid: await internalJid(), timeout: CALL_TIMEOUT_S })) as Record<string, unknown>
        const mine = ret?.[job.minion]
        if (mine && typeof mine === 'object' && !Array.isArray(mine)) answer = mine as Record<string, unknown>
      } catch (e) {
        // salt-api failed (not the minion): stop, and leave the rest for the next refresh. Halving the batch, as for an
        // empty answer, would ask hundreds of times more of a salt-api that is down.
        failure = e
        break
      }
      // dpkg-query fails the whole call for one name no longer installed (failhard=False then answers {}): halve and ask again.
      if (!Object.keys(answer).length && job.names.length > 1) {
        const half = new Set(job.names.slice(0, job.names.length >> 1))
        for (const names of [[...half], job.names.filter((n) => !half.has(n))]) {
          const set = new Set(names)
          jobs.push({ minion: job.minion, names, keys: job.keys.filter((id) => set.has(nameOf.get(id)!)) })
        }
        continue
      }
      await db.tx(async (tx) => {
        for (const id of job.keys) {
          const name = nameOf.get(id)!
          const src = sourceIn(answer[name])
          if (src) {
            await setKeySource(tx, id, src.slice(0, 512), now)
            out.learned++
            if (src !== name) renamed.push(id)
          } else await setKeyTried(tx, id, now)
        }
      })
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL, jobs.length) }, worker))
  if (failure) throw failure
  // Keys now known by another name may meet other records: match them again, and recount if anything moved.
  if (renamed.length)
    await db.tx(async (tx) => {
      if (await matchKeys(tx, renamed)) await bumpGeneration(tx), await recountAll(tx)
    })
  out.ms = Math.round(performance.now() - t0)
  deps.log.info('source packages learned', { ...out })
  return out
}
