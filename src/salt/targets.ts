/**
 * A target expanded to minion ids by salt's own matching, without running anything on a minion.
 *
 * The master computes a job's minions with `salt.utils.minions.CkMinions.check_minions` (accepted keys for glob, list
 * and pcre; the minion-data cache for grain, pillar, ipcidr; compound and nodegroup built from those). salt-api has
 * no client that only asks it; the runner `cache.grains` (3006, 3007, 3008) calls it through
 * `MasterPillarUtil._tgt_to_list` and answers one key per matched minion (its cached grains, `{}` when none), and
 * `{}` when nothing matches. Not `cache.mine`: a target that matches nothing answers every minion with mine data;
 * not `match.compound_matches` (3007+ only, one minion per call); not `manage.status`/`manage.up` (they ping).
 */
import type { SaltClient } from './client'
import { SaltRejected } from './errors'

/** The minion ids of a runner `cache.grains` reply, sorted; null when the reply is not the map it should be. */
export function matchedIds(reply: unknown): string[] | null {
  if (!reply || typeof reply !== 'object' || Array.isArray(reply)) return null
  return Object.keys(reply).sort()
}

/** The minions salt's master matches for a target; [] when none. SaltRejected when salt answers something else. */
export async function expandTarget(client: SaltClient, tgt: string | string[], tgtType: string): Promise<string[]> {
  const reply = await client.runner('cache.grains', { tgt, tgt_type: tgtType })
  const ids = matchedIds(reply)
  if (ids === null) throw new SaltRejected(typeof reply === 'string' ? reply.slice(0, 200) : 'cache.grains answered no minion map', 200)
  return ids
}
