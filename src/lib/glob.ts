/** Anchored, case-sensitive glob matching (`*`, `?`) for permission grants. */
const cache = new Map<string, RegExp>()

/** True when `value` matches `glob` as a whole. */
export function globMatch(glob: string, value: string): boolean {
  let re = cache.get(glob)
  if (!re) {
    const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
    re = new RegExp(`^${body}$`, 's')
    cache.set(glob, re)
  }
  return re.test(value)
}
