/** LDAP search filters from templates, with every substituted value escaped as RFC 4515 says. */

/**
 * Escapes a value for an LDAP filter assertion (RFC 4515 §3): `*`, `(`, `)`, `\` and NUL become `\2a`, `\28`, `\29`,
 * `\5c`, `\00`, so a user name such as `*)(uid=*` matches only itself.
 */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\u0000]/g, (c) => '\\' + c.charCodeAt(0).toString(16).padStart(2, '0'))
}

/** Fills `{name}` placeholders of a filter template with escaped values; unknown placeholders stay as written. */
export function renderFilter(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, k: string) => (k in values ? escapeFilterValue(values[k]!) : whole))
}
