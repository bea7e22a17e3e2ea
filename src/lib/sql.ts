/** Small SQL helpers shared by the services. */

/** A LIKE pattern matching `s` as a literal substring (`%`, `_` and `\` escaped; use with ESCAPE '\'). */
export const containsPattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => '\\' + c)}%`
