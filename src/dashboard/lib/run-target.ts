/**
 * The Run form's target (contract §16): the type chosen, or recognised from what is typed, and when a job asks for a
 * confirmation first. Recognising matters because salt reads `G@os:Debian` as a glob on minion ids otherwise (no match).
 */
import { TARGET_TYPES } from './fleet'

/** "auto" recognises the type from the target; the others are salt's tgt_type values. */
export const TARGET_CHOICES = ['auto', ...TARGET_TYPES] as const

/** Compound matcher prefixes salt knows (G@ grain, P@ grain pcre, L@ list, E@ pcre, I@ pillar, J@ pillar pcre, S@ ipcidr, R@ range, N@ nodegroup). */
const PREFIXED = /(^|[\s(])(not\s+)?[GPLEIJSRN]@/
/** `and`, `or`, `not` between words: a compound expression of plain globs. */
const OPERATORS = /(^|\s)(and|or|not)\s/

/** The type salt is asked with: the chosen one, or for "auto" compound (prefixes or operators), list (commas) or glob. */
export function recognisedType(tgt: string, chosen: string): string {
  if (chosen !== 'auto') return chosen
  const t = tgt.trim()
  if (PREFIXED.test(t) || OPERATORS.test(t)) return 'compound'
  if (t.includes(',')) return 'list'
  return 'glob'
}

/** How many minions a job may reach before the form asks first. */
export const CONFIRM_ABOVE = 10

/** Why a job needs a confirmation (more than 10 minions, or a cmd.* function), null when it does not. */
export function confirmReason(count: number, fun: string): string | null {
  const reasons = []
  if (count > CONFIRM_ABOVE) reasons.push(`it reaches ${count} minions`)
  if (/^cmd\./.test(fun.trim())) reasons.push(`${fun.trim()} runs a shell command`)
  return reasons.length ? reasons.join(' and ') : null
}

/** "web-01, web-02, … and 8 more": the first ids of a match. */
export function firstIds(minions: string[], count: number, shown = 5): string {
  const head = minions.slice(0, shown).join(', ')
  return count > shown ? `${head}, … and ${count - shown} more` : head
}
