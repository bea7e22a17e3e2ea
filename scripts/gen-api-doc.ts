/** Writes the generated parts of docs/api.md: the route reference from the route definitions, the built-in roles (`bun run docs`). */
import { Kind, type TSchema } from '@sinclair/typebox'
import { allRoutes } from '../src/app'
import { BUILTIN_ROLES } from '../src/features/roles/service'
import { cell, table, writeAll, type Generated } from './generated-section'

/** The generated sections of docs/api.md. */
export const API_DOC: Generated = { file: 'docs/api.md', sections: { 'api-routes': () => apiReference(), 'builtin-roles': () => builtinRoles() } }

/**
 * The fields of a route definition the reference reads. Route objects carry more (handler, response schema, audit
 * descriptor …); they are ignored, so new fields need no change here.
 */
interface DocRoute {
  method: string
  path: string
  summary: string
  tag: string
  access: 'public' | 'optional' | 'login' | { verb: string; resource: string } | { scoped: unknown; doc: string }
  allowWhilePasswordChange?: boolean
  status?: number
  query?: TSchema
  body?: TSchema
  audit?: { action?: string }
}

/** Who may call the route, in words. */
function accessOf(r: DocRoute): string {
  const a = r.access
  const who = a === 'public' ? 'anyone' : a === 'optional' ? 'anyone (a session is used when sent)' : a === 'login' ? 'logged in' : 'doc' in a ? a.doc : `\`${a.verb} ${a.resource}\``
  return r.allowWhilePasswordChange ? `${who}; also before the forced password change` : who
}

/** The properties of an object schema: optional ones marked `?`, defaults shown as `name=value`; `JSON` for any other body. */
function fieldsOf(s: TSchema | undefined): string {
  if (!s) return ''
  if (s[Kind] !== 'Object') return 'JSON'
  const required = new Set<string>(s.required ?? [])
  return Object.entries(s.properties as Record<string, TSchema>)
    .map(([k, p]) => ('default' in p ? `\`${k}=${JSON.stringify(p.default)}\`` : `\`${k}\`${required.has(k) ? '' : '?'}`))
    .join(', ')
}

/** One table per tag, in the order the tags first appear; routes in document order. */
export function apiReference(routes: DocRoute[] = allRoutes()): string {
  const byTag = new Map<string, DocRoute[]>()
  for (const r of routes) byTag.set(r.tag, [...(byTag.get(r.tag) ?? []), r])
  const head = ['method', 'path', 'summary', 'who may call', 'query', 'body', 'success', 'audited as']
  return [...byTag].map(([tag, rs]) => `### ${tag}\n\n` + table(head, rs.map((r) => [
    r.method,
    `\`${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}\``,
    cell(r.summary),
    accessOf(r),
    fieldsOf(r.query),
    fieldsOf(r.body),
    String(r.status ?? 200),
    r.audit?.action ? `\`${r.audit.action}\`` : '',
  ]))).join('\n')
}

/** The built-in roles with their grants. */
export function builtinRoles(): string {
  const rows = Object.entries(BUILTIN_ROLES).map(([name, r]) => [`\`${name}\``, cell(r.description), r.grants.map(([v, g]) => `\`${v} ${g}\``).join(', ')])
  return table(['role', 'description', 'grants (verb, resource glob)'], rows)
}

if (import.meta.main) writeAll(API_DOC)
