/**
 * LDAP sign-in through ldapts: StartTLS or LDAPS with the certificate checked (unless verify_tls is off), a search for
 * the user with the service account, the user's groups, and then a bind as the user's DN with the given password.
 */
import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { Client, InvalidCredentialsError, ResultCodeError } from 'ldapts'
import type { AppDeps } from '../../deps'
import { checkDestination, networkReason } from '../../lib/outbound'
import { renderFilter } from './ldap-filter'

/** An LDAP provider's settings, secret included. */
type Cfg = Record<string, unknown>

/** How a directory sign-in ended: the person's identity, or why not (`reason` is for the log, never the caller). */
export type LdapResult =
  | { ok: true; username: string; displayName: string; dn: string; groups: string[] }
  | { ok: false; outcome: 'invalid' | 'unavailable'; reason: string }

/** Every network step waits at most this long: a directory that does not answer must not hold a login. */
const TIMEOUT_MS = 10_000

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null)

/** Why a connection, TLS or protocol step failed, in Saltdeck's words (never the directory's own text). */
function failure(e: unknown): string {
  if (e instanceof ResultCodeError) return `the directory answered ${e.constructor.name.replace(/Error$/, '')} (result code ${e.code})`
  return `directory unreachable: ${networkReason(e)}`
}

/** Opens a connection, TLS as configured, bound as the service account (anonymous without bind_dn). */
async function connect(deps: AppDeps, cfg: Cfg): Promise<Client> {
  const url = new URL(str(cfg.url) ?? '')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  await checkDestination(host, deps.config.outboundAllow)
  const tls: ConnectionOptions = { rejectUnauthorized: cfg.verify_tls !== false, host, ...(isIP(host) ? {} : { servername: host }), ...(str(cfg.ca_cert) ? { ca: [String(cfg.ca_cert)] } : {}) }
  const ldaps = url.protocol === 'ldaps:'
  // ldapts speaks TLS from the first byte whenever tlsOptions is given, so an ldap:// URL gets them only at StartTLS.
  const client = new Client({ url: `${url.protocol}//${url.host}`, timeout: TIMEOUT_MS, connectTimeout: TIMEOUT_MS, ...(ldaps ? { tlsOptions: tls } : {}) })
  try {
    if (!ldaps && cfg.start_tls !== false) await client.startTLS({ ...tls })
    const bindDn = str(cfg.bind_dn)
    if (bindDn) await client.bind(bindDn, String(cfg.bind_password ?? ''))
    return client
  } catch (e) {
    await client.unbind().catch(() => {})
    throw e
  }
}

/** The first value of an attribute, as text. */
const first = (v: unknown): string | null => {
  const x = Array.isArray(v) ? v[0] : v
  return x === undefined || x === null ? null : Buffer.isBuffer(x) ? x.toString('utf8') : String(x)
}

/**
 * Checks a user name and password against the directory. The password is never sent when empty (an empty simple
 * bind is an anonymous bind that servers accept); the user name only ever reaches a filter escaped (RFC 4515).
 */
export async function ldapAuthenticate(deps: AppDeps, cfg: Cfg, username: string, password: string): Promise<LdapResult> {
  if (password === '') return { ok: false, outcome: 'invalid', reason: 'empty password (never bound)' }
  let client: Client
  try {
    client = await connect(deps, cfg)
  } catch (e) {
    const bad = e instanceof InvalidCredentialsError
    return { ok: false, outcome: 'unavailable', reason: bad ? 'the service account was refused (bind_dn or bind_password)' : failure(e) }
  }
  try {
    const attr = String(cfg.display_name_attr ?? 'cn')
    const filter = renderFilter(String(cfg.user_filter ?? '(uid={username})'), { username })
    const { searchEntries } = await client.search(String(cfg.user_base), { scope: 'sub', filter, attributes: [attr], sizeLimit: 2 })
    if (searchEntries.length === 0) return { ok: false, outcome: 'invalid', reason: 'unknown user' }
    if (searchEntries.length > 1) return { ok: false, outcome: 'invalid', reason: 'the user filter matches more than one entry' }
    const entry = searchEntries[0]!
    const groups: string[] = []
    const groupBase = str(cfg.group_base)
    if (groupBase) {
      const gf = renderFilter(String(cfg.group_filter ?? '(member={dn})'), { dn: entry.dn, username })
      const found = await client.search(groupBase, { scope: 'sub', filter: gf, attributes: ['cn'] })
      for (const g of found.searchEntries) {
        groups.push(g.dn)
        const cn = first(g.cn)
        if (cn) groups.push(cn)
      }
    }
    try {
      await client.bind(entry.dn, password)
    } catch (e) {
      if (e instanceof InvalidCredentialsError) return { ok: false, outcome: 'invalid', reason: 'wrong password' }
      throw e
    }
    return { ok: true, username, displayName: first(entry[attr]) ?? username, dn: entry.dn, groups }
  } catch (e) {
    return { ok: false, outcome: 'unavailable', reason: failure(e) }
  } finally {
    await client.unbind().catch(() => {})
  }
}

/** POST /api/admin/identity/ldap/test: connects, binds as the service account and reads the user base. */
export async function testLdap(deps: AppDeps, cfg: Cfg): Promise<{ ok: boolean; detail: string }> {
  if (!str(cfg.url)) return { ok: false, detail: 'No LDAP url configured' }
  if (!str(cfg.user_base)) return { ok: false, detail: 'No user_base configured' }
  let client: Client
  try {
    client = await connect(deps, cfg)
  } catch (e) {
    if (e instanceof InvalidCredentialsError) return { ok: false, detail: 'The service account was refused: check bind_dn and bind_password' }
    return { ok: false, detail: `Cannot connect: ${failure(e)}` }
  }
  try {
    const { searchEntries } = await client.search(String(cfg.user_base), { scope: 'base', attributes: ['1.1'] })
    const how = new URL(String(cfg.url)).protocol === 'ldaps:' ? 'LDAPS' : cfg.start_tls !== false ? 'StartTLS' : 'no TLS'
    return searchEntries.length
      ? { ok: true, detail: `Connected (${how}${cfg.verify_tls === false ? ', certificate not verified' : ''}) and read the user base as ${str(cfg.bind_dn) ?? 'anonymous'}` }
      : { ok: false, detail: 'The user base was not found' }
  } catch (e) {
    return { ok: false, detail: `The user base cannot be read: ${failure(e)}` }
  } finally {
    await client.unbind().catch(() => {})
  }
}
