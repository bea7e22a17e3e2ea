/** Pure helpers of the settings and admin forms: input text to values, the changed-fields diff, 422 entries per field. */

/**
 * Reads an integer input. A whole number becomes a number; anything else is passed on as typed so the
 * server answers with its own 422 (one source of truth for bounds and messages).
 */
export function readInt(raw: string): number | string {
  const t = raw.trim()
  return /^-?\d+$/.test(t) ? Number(t) : raw
}

/** The properties of `next` whose value differs from `base` (a partial-update body). */
export function changedFields<T extends Record<string, unknown>>(base: T, next: T): Partial<T> {
  const out: Partial<T> = {}
  for (const k of Object.keys(next) as (keyof T)[]) if (next[k] !== base[k]) out[k] = next[k]
  return out
}

/**
 * The salt connection PUT body: changed fields only; the password (write-only) is sent only when typed,
 * because an empty password field means "keep the stored one".
 */
export function saltChanges(
  saved: { url: string | null; username: string | null; verify: boolean; eauth: string; presence_method: string },
  form: { url: string; username: string; password: string; verify: boolean; eauth: string; presence_method: string },
): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {}
  if (form.url !== (saved.url ?? '')) out.url = form.url
  if (form.username !== (saved.username ?? '')) out.username = form.username
  if (form.password !== '') out.password = form.password
  if (form.verify !== saved.verify) out.verify = form.verify
  if (form.eauth !== saved.eauth) out.eauth = form.eauth
  if (form.presence_method !== saved.presence_method) out.presence_method = form.presence_method
  return out
}

/** One 422 entry as the contract shapes it. */
export interface ValidationEntry {
  loc?: (string | number)[]
  msg?: string
  type?: string
}

/** Groups 422 entries by the first field after `body`/`query`/`path`; entries on the whole body go under "". */
export function errorsByField(detail: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  if (!Array.isArray(detail)) return out
  for (const d of detail as ValidationEntry[]) {
    const key = d.loc && d.loc.length > 1 ? String(d.loc[1]) : ''
    ;(out[key] ??= []).push(d.msg ?? 'Invalid value')
  }
  return out
}
