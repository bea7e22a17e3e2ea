/** Every runtime option in one table: name, environment variable, type, default, and whether it is secret. */

type Kind = 'string' | 'int' | 'bool'
interface Option {
  env: string
  kind: Kind
  default: string | number | boolean | null
  secret?: boolean
}

/** The option table; command-line flags of `serve` override host, port, dataDir and the TLS pair. */
export const OPTIONS = {
  host: { env: 'SALTDECK_HOST', kind: 'string', default: '127.0.0.1' },
  port: { env: 'SALTDECK_PORT', kind: 'int', default: 8080 },
  dataDir: { env: 'SALTDECK_DATA_DIR', kind: 'string', default: './data' },
  sessionTtlMinutes: { env: 'SALTDECK_SESSION_TTL_MINUTES', kind: 'int', default: 480 },
  tlsCert: { env: 'SALTDECK_TLS_CERT', kind: 'string', default: null },
  tlsKey: { env: 'SALTDECK_TLS_KEY', kind: 'string', default: null },
  cookieSecure: { env: 'SALTDECK_COOKIE_SECURE', kind: 'bool', default: false },
  adminPassword: { env: 'SALTDECK_ADMIN_PASSWORD', kind: 'string', default: null, secret: true },
  saltUrl: { env: 'SALTDECK_SALT_URL', kind: 'string', default: null },
  saltUsername: { env: 'SALTDECK_SALT_USERNAME', kind: 'string', default: null },
  saltPassword: { env: 'SALTDECK_SALT_PASSWORD', kind: 'string', default: null, secret: true },
  saltEauth: { env: 'SALTDECK_SALT_EAUTH', kind: 'string', default: null },
  saltVerify: { env: 'SALTDECK_SALT_VERIFY', kind: 'bool', default: null },
  runFunctions: { env: 'SALTDECK_RUN_FUNCTIONS', kind: 'string', default: null },
  presenceMethod: { env: 'SALTDECK_PRESENCE_METHOD', kind: 'string', default: 'present' },
  inventoryBatch: { env: 'SALTDECK_INVENTORY_BATCH', kind: 'int', default: 200 },
  inventoryFlushMinions: { env: 'SALTDECK_INVENTORY_FLUSH', kind: 'int', default: 5000 },
  passwordMemoryKib: { env: 'SALTDECK_ARGON2_MEMORY_KIB', kind: 'int', default: 19456 },
} satisfies Record<string, Option>

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
  return raw
}

/** Reads every option from the environment, falling back to its default. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {}
  for (const [k, o] of Object.entries(OPTIONS)) out[k] = read(o as Option, env[(o as Option).env])
  return { ...(out as Config), ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) }
}

/** The state functions whose returns are stored as runs (contract §7), plus SALTDECK_RUN_FUNCTIONS. */
export function runFunctions(config: Config): Set<string> {
  const base = ['state.apply', 'state.highstate', 'state.sls', 'state.sls_id', 'state.single', 'state.top']
  const extra = (config.runFunctions ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  return new Set([...base, ...extra])
}
