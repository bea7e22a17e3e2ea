/**
 * A state run's detail as Salt's highstate outputter reads it: each state of a state-result dict in `__run_num__`
 * order, or the render/compile errors a run returns instead; and whether a job was a dry run (test=True).
 * Pure: no database.
 */
import { isStateDict } from './returns'

/** One state of a run. */
export interface StateResult {
  /** Salt's key: `<module>_|-<id>_|-<name>_|-<function>`. */
  key: string
  id: string
  sls: string
  /** `<module>.<function>`, e.g. file.managed. */
  function: string
  name: string
  result: boolean | null
  changed: boolean
  comment: string
  changes: Record<string, unknown>
  durationMs: number
  order: number
}

/** A run's detail: its states, or the errors it returned instead (a render or compile failure). */
export type RunDetail = { states: StateResult[]; errors: null } | { states: null; errors: string[] }

const text = (v: unknown) => (typeof v === 'string' ? v : Array.isArray(v) ? v.filter((x) => typeof x === 'string').join('\n') : v == null ? '' : JSON.stringify(v))
const isChange = (v: unknown) => !!v && typeof v === 'object' && Object.keys(v as object).length > 0

/** The detail of a state function's return; null when it is neither states nor errors (a minion that did not answer). */
export function runDetail(ret: unknown): RunDetail | null {
  if (Array.isArray(ret)) return { states: null, errors: ret.map(text) }
  if (typeof ret === 'string' && ret) return { states: null, errors: [ret] }
  if (!isStateDict(ret)) return null
  const states: StateResult[] = []
  for (const [key, v] of Object.entries(ret)) {
    if (!v || typeof v !== 'object') continue
    const s = v as Record<string, unknown>
    const [module = '', id = '', name = '', fun = ''] = key.split('_|-')
    const d = typeof s.duration === 'number' ? s.duration : Number.parseFloat(String(s.duration ?? ''))
    states.push({
      key, id: typeof s.__id__ === 'string' ? s.__id__ : id, sls: typeof s.__sls__ === 'string' ? s.__sls__ : '', function: fun ? `${module}.${fun}` : module,
      name: typeof s.name === 'string' ? s.name : name, result: s.result === true ? true : s.result === false ? false : null,
      changed: isChange(s.changes), comment: text(s.comment), changes: isChange(s.changes) ? (s.changes as Record<string, unknown>) : {},
      durationMs: Number.isFinite(d) ? Math.max(0, Math.round(d)) : 0, order: typeof s.__run_num__ === 'number' ? s.__run_num__ : Number.MAX_SAFE_INTEGER,
    })
  }
  states.sort((a, b) => a.order - b.order || (a.key < b.key ? -1 : 1))
  states.forEach((s, i) => (s.order = i))
  return { states, errors: null }
}

/** The state files a run applied, in run order, each once. */
export const slsOf = (d: RunDetail | null): string[] => [...new Set((d?.states ?? []).map((s) => s.sls).filter(Boolean))]

const TRUE = /^(true|1|yes|on)$/i

/** Whether a job's arguments ask for a dry run: `test=True` as a string argument, or `test: true` in a keyword object. */
export function isTestRun(args: unknown): boolean {
  const list = Array.isArray(args) ? args : args && typeof args === 'object' ? [args] : []
  return list.some((a) => {
    if (typeof a === 'string') {
      const m = /^test=(.*)$/.exec(a.trim())
      return !!m && TRUE.test(m[1]!.trim())
    }
    if (a && typeof a === 'object' && !Array.isArray(a)) {
      const t = (a as Record<string, unknown>).test
      return t === true || (typeof t === 'string' && TRUE.test(t)) || t === 1
    }
    return false
  })
}

/** Functions whose first argument names state files (comma-separated): state.apply demo, state.sls a,b. */
const SLS_FUNS = new Set(['state.apply', 'state.sls'])

/** The state files a job asked for, from its arguments (`state.apply demo` → ["demo"]; a highstate → []). */
export function slsArgs(fun: string, args: unknown): string[] {
  if (!SLS_FUNS.has(fun) || !Array.isArray(args)) return []
  const first = args.find((a) => typeof a === 'string' && !a.includes('=')) as string | undefined
  if (first) return first.split(',').map((x) => x.trim()).filter(Boolean)
  const kw = args.find((a) => a && typeof a === 'object' && typeof (a as Record<string, unknown>).mods === 'string') as { mods: string } | undefined
  return kw ? kw.mods.split(',').map((x) => x.trim()).filter(Boolean) : []
}
