/**
 * Rows sent to PostgreSQL as one JSON text (jsonb_to_recordset, jsonb_array_elements_text): one statement whatever the
 * row count, where a VALUES list has a text per count.
 */

/** A `\u0000` escape that is one (an even run of backslashes before it: those are escaped backslashes). */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g

/**
 * `rows` as JSON for jsonb. jsonb refuses `\u0000` (PostgreSQL's text holds no NUL), so a NUL becomes U+FFFD, as
 * postgres.ts's param() does for a bound string: the batch stores the rest instead of failing whole.
 */
export function jsonRows(rows: unknown): string {
  const json = JSON.stringify(rows)
  return json.includes('\\u0000') ? json.replace(NUL_ESCAPE, '$1\uFFFD') : json
}
