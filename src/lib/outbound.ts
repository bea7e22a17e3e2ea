/**
 * Where Saltdeck may send a request, and how a failed one is told: the one destination check of the salt client, the
 * webhook/Slack/Mattermost channels and the SMTP channel. Link-local and cloud metadata addresses are refused (a
 * settings editor must not make Saltdeck fetch instance credentials) unless SALTDECK_OUTBOUND_ALLOW names them;
 * loopback and private ranges stay allowed (salt-api, Mattermost and mail relays live there).
 */
import { lookup } from 'node:dns/promises'

/** An address as 4 (IPv4) or 16 (IPv6) bytes. */
type Bytes = number[]
/** A range: its first bytes and prefix length. */
interface Range {
  bytes: Bytes
  prefix: number
  text: string
}

/** Reads a dotted IPv4 address (four decimal parts), or null. */
function ipv4(s: string): Bytes | null {
  const parts = s.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null
  return parts.map(Number)
}

/** Reads an IPv6 address (with `::` and a dotted IPv4 tail; brackets and a zone are dropped), or null. */
function ipv6(raw: string): Bytes | null {
  const s = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (!s.includes(':')) return null
  let tail: Bytes = []
  let head = s
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(s)
  if (dotted) {
    const v4 = ipv4(dotted[1]!)
    if (!v4) return null
    tail = v4
    head = s.slice(0, dotted.index + 1) + '0:0'
  }
  const halves = head.split('::')
  if (halves.length > 2) return null
  const groups = (h: string) => (h === '' ? [] : h.split(':'))
  const [left, right] = [groups(halves[0]!), groups(halves[1] ?? '')]
  const missing = 8 - left.length - right.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null
  const all = [...left, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...right]
  if (!all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null
  const bytes = all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255])
  if (tail.length) bytes.splice(12, 4, ...tail)
  return bytes
}

/** An address's bytes, IPv4 inside IPv6 (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`) read as IPv4. */
function addressBytes(s: string): Bytes | null {
  const v4 = ipv4(s)
  if (v4) return v4
  const v6 = ipv6(s)
  if (!v6) return null
  const zeros = (n: number) => v6.slice(0, n).every((b) => b === 0)
  const mapped = zeros(10) && v6[10] === 0xff && v6[11] === 0xff
  const compatible = zeros(12) && !(v6[12] === 0 && v6[13] === 0 && v6[14] === 0)
  const nat64 = v6[0] === 0 && v6[1] === 0x64 && v6[2] === 0xff && v6[3] === 0x9b && v6.slice(4, 12).every((b) => b === 0)
  return mapped || compatible || nat64 ? v6.slice(12) : v6
}

/** Whether an address lies in a range (of the same family). */
function inRange(a: Bytes, r: Range): boolean {
  if (a.length !== r.bytes.length) return false
  for (let bit = 0; bit < r.prefix; bit++) {
    const i = bit >> 3
    const m = 0x80 >> (bit & 7)
    if ((a[i]! & m) !== (r.bytes[i]! & m)) return false
  }
  return true
}

/** Reads `address` or `address/prefix`; null when it is neither. */
function range(text: string): Range | null {
  const [addr, len, extra] = text.trim().split('/')
  if (extra !== undefined || !addr) return null
  const bytes = addressBytes(addr)
  if (!bytes) return null
  const max = bytes.length * 8
  const prefix = len === undefined ? max : /^\d{1,3}$/.test(len) ? Number(len) : NaN
  if (!(prefix >= 0 && prefix <= max)) return null
  return { bytes, prefix, text: text.trim() }
}

/** The refused ranges: IPv4 and IPv6 link-local, AWS's IPv6 metadata address, Alibaba Cloud's metadata address. */
const REFUSED: Range[] = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128', '100.100.100.200/32'].map((t) => range(t)!)

/** The problem with a SALTDECK_OUTBOUND_ALLOW value (a comma list of addresses or CIDR ranges), or null. */
export function allowProblem(raw: string): string | null {
  const bad = raw.split(',').filter((t) => t.trim() && !range(t))
  return bad.length ? `not an address or CIDR range: ${bad.map((b) => JSON.stringify(b.trim())).join(', ')}` : null
}

const parsed = new Map<string, Range[]>()
/** The allowed ranges of a SALTDECK_OUTBOUND_ALLOW value (entries that do not read are ignored; config refuses them at start). */
function allowed(raw: string | null | undefined): Range[] {
  if (!raw) return []
  let r = parsed.get(raw)
  if (!r) parsed.set(raw, (r = raw.split(',').map(range).filter((x): x is Range => !!x)))
  return r
}

/** Whether Saltdeck refuses to send to this address (an IP literal), given SALTDECK_OUTBOUND_ALLOW. */
export function refusedAddress(address: string, allow: string | null | undefined): boolean {
  const a = addressBytes(address)
  if (!a) return false
  return REFUSED.some((r) => inRange(a, r)) && !allowed(allow).some((r) => inRange(a, r))
}

/** A destination Saltdeck will not send to; the message names the host and the address, never a path or a secret. */
export class DestinationRefused extends Error {
  constructor(readonly host: string, readonly address: string) {
    super(
      `${host === address ? address : `${host} resolves to ${address}, which`} is a link-local or cloud metadata address: ` +
        'Saltdeck does not send there unless SALTDECK_OUTBOUND_ALLOW names it',
    )
  }
}

/** Resolves a host name to its addresses, as the system resolver (getaddrinfo) does for a connection. */
export type Resolver = (host: string) => Promise<string[]>
const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)
let resolver: Resolver = systemResolver
/** Names resolved lately: the salt client checks before every call, and a pollers' tick makes hundreds. */
const resolved = new Map<string, { at: number; addresses: string[] }>()
/** How long a resolution is reused; short, as Bun's own DNS cache for fetch (30 s). */
const RESOLVED_TTL_MS = 10_000
/** How long a resolution may take. */
const RESOLVE_TIMEOUT_MS = 5_000
/** Replaces the resolver (tests: a name resolving to 169.254.169.254 cannot be made in a sandbox); returns the restore function. */
export function useResolver(r: Resolver): () => void {
  resolver = r
  resolved.clear()
  return () => {
    resolver = systemResolver
    resolved.clear()
  }
}

/** A name's addresses, reused for RESOLVED_TTL_MS. */
async function resolve(host: string): Promise<string[]> {
  const hit = resolved.get(host)
  if (hit && Date.now() - hit.at < RESOLVED_TTL_MS) return hit.addresses
  // A resolver that does not answer must not hold a save or a send for its own 30 s: past 5 s the name counts as unresolved.
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('ETIMEDOUT resolving')), RESOLVE_TIMEOUT_MS)
    timer.unref?.()
  })
  const addresses = await Promise.race([resolver(host), late]).finally(() => clearTimeout(timer))
  if (resolved.size >= 256) resolved.clear()
  resolved.set(host, { at: Date.now(), addresses })
  return addresses
}

/**
 * A host as it would be connected to: URL hostnames keep their brackets, numeric forms (`2852039166`, `0xa9.0xfe...`)
 * become dotted IPv4 as WHATWG URL and getaddrinfo read them.
 */
export function canonicalHost(host: string): string {
  const h = host.trim().replace(/^\[|\]$/g, '')
  if (h.includes(':')) return h
  try {
    return new URL(`http://${h}/`).hostname.replace(/\.$/, '')
  } catch {
    return h
  }
}

/**
 * Checks a destination host (a name or an address) and returns the addresses it resolves to, first the one to use.
 * Throws DestinationRefused when any of them is refused. A name that does not resolve is left to the connection to
 * report (an empty list), so a save is not refused for a name only the mail relay's network knows.
 */
export async function checkDestination(host: string, allow: string | null | undefined): Promise<string[]> {
  const h = canonicalHost(host)
  if (addressBytes(h)) {
    if (refusedAddress(h, allow)) throw new DestinationRefused(h, h)
    return [h]
  }
  let addresses: string[]
  try {
    addresses = await resolve(h)
  } catch {
    return []
  }
  const bad = addresses.find((a) => refusedAddress(a, allow))
  if (bad) throw new DestinationRefused(h, bad)
  return addresses
}

/** Whether two http(s) URLs name the same place (a trailing slash and letter case of the host aside). */
export function sameUrl(a: string, b: string): boolean {
  const norm = (u: string) => {
    try {
      return new URL(u).href.replace(/\/+$/, '')
    } catch {
      return u
    }
  }
  return norm(a) === norm(b)
}

/** Checks the host of an http(s) URL (see checkDestination). */
export const checkUrl = (url: string, allow: string | null | undefined) => checkDestination(new URL(url).hostname, allow)

/**
 * Saltdeck's own words for a failed connection, never the remote's: what reached us (a banner, a greeting, a body)
 * is not repeated to whoever pressed Test.
 */
export function networkReason(e: unknown): string {
  if (e instanceof DestinationRefused) return e.message
  const err = e as { name?: string; code?: string; message?: string }
  const code = String(err?.code ?? '')
  const text = `${code} ${err?.message ?? ''}`
  if (err?.name === 'TimeoutError' || /ETIMEDOUT|timed? ?out/i.test(text)) return 'timed out'
  if (err?.name === 'AbortError') return 'aborted'
  if (/ECONNREFUSED/.test(text)) return 'connection refused'
  if (/ENOTFOUND|EAI_AGAIN|EAI_NONAME|DNS_|ENODATA/.test(text)) return 'the name does not resolve'
  if (/Malformed_HTTP|HPE_|ERR_INVALID_HTTP|InvalidHTTPResponse/i.test(text)) return 'not an HTTP server'
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|HOSTNAME_MISMATCH|Hostname\/IP/i.test(text)) return 'its TLS certificate was not accepted'
  if (/EPROTO|TLS|SSL|handshake/i.test(text)) return 'TLS handshake failed'
  if (/ECONNRESET|EPIPE|ConnectionClosed|socket hang up|closed/i.test(text)) return 'the connection was closed'
  if (/EHOSTUNREACH|ENETUNREACH/.test(text)) return 'no route to the host'
  return 'could not connect'
}
