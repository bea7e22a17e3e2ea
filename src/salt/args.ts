/** A job's arguments as salt publishes them: one `arg` list where keyword arguments ride as `{"__kwarg__": true, …}` objects. */

/** Positional and keyword arguments apart (null when salt did not say): the `__kwarg__` objects merged, their marker dropped. */
export function splitArgs(arg: unknown): { arguments: unknown[] | null; kwargs: Record<string, unknown> | null } {
  if (arg === null || arg === undefined) return { arguments: null, kwargs: null }
  const list = Array.isArray(arg) ? arg : [arg]
  const positional: unknown[] = []
  const kwargs: Record<string, unknown> = {}
  for (const a of list) {
    if (a && typeof a === 'object' && !Array.isArray(a) && (a as Record<string, unknown>).__kwarg__ === true) {
      for (const [k, v] of Object.entries(a as Record<string, unknown>)) if (k !== '__kwarg__') kwargs[k] = v
    } else positional.push(a)
  }
  return { arguments: positional, kwargs }
}
