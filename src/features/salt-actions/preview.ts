/**
 * Target preview (contract §16): what a target reaches before anything runs, through the same salt-side matching as
 * a run (salt/targets.ts, contract §14), with the minions the caller's grants do not cover and, when a function is
 * named, whether any grant allows it. Nothing is published; an empty match is an answer (count 0), not a 404.
 */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { expandEverywhere } from './run'
import { saltGlobMatch } from '../../lib/glob'
import { scopedGrantsOf } from '../roles/service'
import { executeGrants, grantsForFunction, uncovered } from '../roles/scope'

/** How many minion ids a preview lists (count says how many matched). */
export const PREVIEW_LIMIT = 1000

/** A preview as POST /api/run/preview takes it. */
export interface PreviewRequest {
  tgt: string | string[]
  tgt_type: string
  fun?: string
}

/** The matched minions, the first 1,000 of them, those outside the caller's scope (for `fun`, or for every execute grant without it), and whether `fun` is allowed at all. */
export async function previewForUser(deps: AppDeps, client: SaltClient, userId: string, req: PreviewRequest) {
  const grants = await scopedGrantsOf(deps, userId)
  const { minions } = await expandEverywhere(deps, client, req.tgt, req.tgt_type)
  let outside: string[]
  if (req.fun) outside = uncovered(grants, req.fun, minions)
  else {
    // Without a function: the minions no execute grant reaches, whatever it runs.
    const targets = executeGrants(grants).map((g) => g.target_glob)
    outside = targets.includes('*') ? [] : minions.filter((m) => !targets.some((t) => saltGlobMatch(t, m)))
  }
  return {
    count: minions.length,
    minions: minions.slice(0, PREVIEW_LIMIT),
    outside_scope: outside.slice(0, PREVIEW_LIMIT),
    functions_allowed: req.fun ? grantsForFunction(grants, req.fun).length > 0 : null,
  }
}
