/** Every runtime option in one table: name, environment variable, type, default, description, and whether it is secret. */
import { allowProblem } from './lib/outbound'

type Kind = 'string' | 'int' | 'bool'
export interface Option {
  env: string
  kind: Kind
  default: string | number | boolean | null
  /** One line for the README's configuration table (scripts/gen-config-table.ts) and `saltdeck config`. */
  doc: string
  /** The `serve` flag (without its dashes) that overrides the variable. */
  flag?: string
  /** Never printed: `saltdeck config` masks it, the README marks it. */
  secret?: boolean
  /** A string that must be an absolute http or https URL. */
  url?: boolean
  /** A string checked further: returns the problem with it, or null. */
  check?: (raw: string) => string | null
}

/** The state functions whose returns are always stored as runs (contract §7). */
const BASE_RUN_FUNCTIONS = ['state.apply', 'state.highstate', 'state.sls', 'state.sls_id', 'state.single', 'state.top']

/** The option table; command-line flags of `serve` override host, port, dataDir and the TLS pair. */
export const OPTIONS = {
  host: { env: 'SALTDECK_HOST', flag: 'host', kind: 'string', default: '127.0.0.1', doc: 'Address to bind; loopback by default, `0.0.0.0` is the operator\'s choice.' },
  port: { env: 'SALTDECK_PORT', flag: 'port', kind: 'int', default: 8080, doc: 'TCP port; `0` picks a free one.' },
  dataDir: {
    env: 'SALTDECK_DATA_DIR', flag: 'data-dir', kind: 'string', default: './data',
    doc: 'Data directory, created 0700: `saltdeck.db`, `search.db` (the activity search index), `secret.key`, `initial-admin-password`.',
  },
  databaseUrl: {
    env: 'SALTDECK_DATABASE_URL', flag: 'database-url', kind: 'string', default: null, secret: true, check: postgresUrlProblem,
    doc: 'PostgreSQL 15+ to store everything in, `postgres://user:pass@host:port/db[?sslmode=require]`, instead of SQLite in the data directory (unset). The database is created with `--locale=C`; `pg_trgm` is needed (README, PostgreSQL).',
  },
  secretKeyFile: {
    env: 'SALTDECK_SECRET_KEY_FILE', kind: 'string', default: null,
    doc: 'The 32-byte key the stored secrets are encrypted under, instead of `secret.key` in the data directory (which is created when missing; this file never is). Every instance on one database needs the same key.',
  },
  sessionTtlMinutes: { env: 'SALTDECK_SESSION_TTL_MINUTES', kind: 'int', default: 480, doc: 'Session lifetime in minutes, absolute from login.' },
  tlsCert: { env: 'SALTDECK_TLS_CERT', flag: 'tls-cert', kind: 'string', default: null, doc: 'PEM certificate for HTTPS; set with `SALTDECK_TLS_KEY`, both or neither.' },
  tlsKey: { env: 'SALTDECK_TLS_KEY', flag: 'tls-key', kind: 'string', default: null, doc: 'PEM private key for HTTPS; set with `SALTDECK_TLS_CERT`.' },
  cookieSecure: { env: 'SALTDECK_COOKIE_SECURE', kind: 'bool', default: false, doc: 'Marks the session cookie `Secure` (set automatically for requests over TLS).' },
  publicUrl: {
    env: 'SALTDECK_PUBLIC_URL', kind: 'string', url: true, default: null,
    doc: 'Address people reach Saltdeck at (e.g. `https://saltdeck.example.com`) behind a proxy: its origin is accepted for cookie-authenticated writes; links in notifications will use it; the OpenID Connect callback URL is it + `/api/auth/oidc/callback`.',
  },
  adminPassword: { env: 'SALTDECK_ADMIN_PASSWORD', kind: 'string', default: null, secret: true, doc: 'Password of the first `admin` user; read only when there are no users (unset: a random one, changed at first login).' },
  saltUrl: { env: 'SALTDECK_SALT_URL', kind: 'string', default: null, doc: 'salt-api address (rest_cherrypy); this and the other `SALTDECK_SALT_*` variables, when set, are written over the stored salt settings at start.' },
  saltUsername: { env: 'SALTDECK_SALT_USERNAME', kind: 'string', default: null, doc: 'salt-api user (salt\'s `external_auth`).' },
  saltPassword: { env: 'SALTDECK_SALT_PASSWORD', kind: 'string', default: null, secret: true, doc: 'salt-api password; stored encrypted under `secret.key`.' },
  saltEauth: { env: 'SALTDECK_SALT_EAUTH', kind: 'string', default: null, doc: 'salt-api eauth backend: `pam`, `sharedsecret`, `ldap`, `file` or `auto`.' },
  saltVerify: { env: 'SALTDECK_SALT_VERIFY', kind: 'bool', default: null, doc: 'Verify salt-api\'s TLS certificate.' },
  runFunctions: {
    env: 'SALTDECK_RUN_FUNCTIONS', kind: 'string', default: null,
    doc: `Comma list of functions stored as state runs, added to \`${BASE_RUN_FUNCTIONS.join(', ')}\`.`,
  },
  presenceMethod: { env: 'SALTDECK_PRESENCE_METHOD', kind: 'string', default: null, doc: 'Presence poll, written over the stored salt setting `presence_method` at start: `present` reads the master\'s connections, `status` pings (exact when minions share an address).' },
  alertGroupSeconds: { env: 'SALTDECK_ALERT_GROUP_SECONDS', kind: 'int', default: 30, doc: 'Alert transitions of one rule within this many seconds go out as one notification.' },
  runDetailKeep: { env: 'SALTDECK_RUN_DETAIL_KEEP', kind: 'int', default: 20, doc: 'Runs per minion whose per-state detail is kept (older runs keep their counts); `0` stores no detail.' },
  inventoryBatch: {
    env: 'SALTDECK_INVENTORY_BATCH', kind: 'int', default: 200,
    doc: 'Minions whose `pkg.list_pkgs` returns are held at once: asked in half batches, one in flight while the other is read.',
  },
  inventoryFlushMinions: {
    env: 'SALTDECK_INVENTORY_FLUSH', kind: 'int', default: 5000,
    doc: 'Collected package sets are stored (with the aggregates) in one transaction per this many minions, or every 10 s.',
  },
  outboundAllow: {
    env: 'SALTDECK_OUTBOUND_ALLOW', kind: 'string', default: null, check: allowProblem,
    doc: 'Comma list of addresses or CIDR ranges Saltdeck may send to although they are link-local or cloud metadata addresses (`169.254.0.0/16`, `fe80::/10`, `fd00:ec2::254`, `100.100.100.200`), e.g. `169.254.10.5,fe80::/64`.',
  },
  logDebug: { env: 'SALTDECK_LOG_DEBUG', kind: 'bool', default: false, doc: 'Also write debug lines, such as the poller ticks that found nothing.' },
  passwordMemoryKib: { env: 'SALTDECK_ARGON2_MEMORY_KIB', kind: 'int', default: 19456, doc: 'Argon2id memory per password hash, in KiB; tests lower it for speed.' },
} satisfies Record<string, Option>

/** What `saltdeck config` shows for a secret option that is set. */
export const SECRET_MASK = '********'

/** The options in table order, typed as the general shape. */
export const optionList = (): [string, Option][] => Object.entries(OPTIONS)

type Value<O extends Option> = O['kind'] extends 'int' ? number : O['kind'] extends 'bool' ? boolean : string
/** Resolved options; an option whose default is null may be null. */
export type Config = { [K in keyof typeof OPTIONS]: (typeof OPTIONS)[K]['default'] extends null ? Value<(typeof OPTIONS)[K]> | null : Value<(typeof OPTIONS)[K]> }

function read(o: Option, raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return o.default
  if (o.kind === 'int') {
    const n = Number(raw)
    if (!Number.isInteger(n)) throw new Error(`${o.env} must be an integer, got ${JSON.stringify(raw)}`)
    return n
  }
  if (o.kind === 'bool') return ['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())
  if (o.url && !isHttpUrl(raw)) throw new Error(`${o.env} must be an absolute http or https URL, got ${JSON.stringify(raw)}`)
  const problem = o.check?.(raw)
  if (problem) throw new Error(`${o.env}: ${problem}`)
  return raw
}

/** The problem with a database URL, or null: it must be a postgres:// (or postgresql://) URL. */
function postgresUrlProblem(raw: string): string | null {
  return /^postgres(ql)?:\/\//i.test(raw) ? null : 'must be a postgres:// URL (postgres://user:pass@host:port/db)'
}

/** True for an absolute http:// or https:// URL with a host. */
function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== ''
  } catch {
    return false
  }
}

/** Reads every option from the environment, falling back to its default. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {}
  for (const [k, o] of optionList()) out[k] = read(o, env[o.env])
  return { ...(out as Config), ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) }
}

/** The state functions whose returns are stored as runs (contract §7), plus SALTDECK_RUN_FUNCTIONS. */
export function runFunctions(config: Config): Set<string> {
  const extra = (config.runFunctions ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  return new Set([...BASE_RUN_FUNCTIONS, ...extra])
}
