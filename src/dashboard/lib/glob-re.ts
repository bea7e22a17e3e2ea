/** The permission glob of contract §4 as a RegExp; a module of its own so plain-logic modules (and their unit tests) need no Preact. */

/** Anchored, case-sensitive `*`/`?` glob as the server matches it (contract §4). */
export function globRe(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`)
}
