// Proves the rules of docs/architecture.md ("Rules the layout keeps", numbered the same there and here):
// 1. an import only points down the layer table, and no import cycle (type imports included);
// 2. salt/ knows nothing of features; 3. features know nothing of pollers (both part of the table, checked apart);
// 4. HTTP statuses and request parts live at the edge; 5. each table has one owning feature, and the minion row's
// columns one writer each; 6. SQL only in db/ and the features' stores; 7. DDL only in db/ (a store's per-engine
// module may make its own TEMP and scratch tables). Beside them, the doc's "dashboard's types": the dashboard imports
// the server only as types, apart from library modules.
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { getTableName, is, Table } from 'drizzle-orm'
import * as schema from '../../src/db/schema'

const SRC = resolve(import.meta.dir, '../../src')
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

/** Every server module under src/ (the dashboard is a separate program with its own build). */
function modules(dir = SRC): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) return n === 'dashboard' || n === 'generated' ? [] : modules(p)
    return /\.tsx?$/.test(n) && !n.endsWith('.d.ts') ? [p] : []
  })
}

/** The module a relative specifier names, or null for a package or a non-module file. */
function resolveSpec(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null
  const base = resolve(dirname(from), spec)
  for (const c of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) if (/\.tsx?$/.test(c) && existsSync(c) && statSync(c).isFile()) return c
  return null
}

const rel = (p: string) => relative(SRC, p)
const text = new Map<string, string>()
const graph = new Map<string, string[]>()
for (const m of modules()) {
  const t = readFileSync(m, 'utf8')
  text.set(rel(m), t)
  graph.set(m, [...t.matchAll(IMPORT)].map((x) => resolveSpec(m, x[1] ?? x[2]!)).filter((x): x is string => !!x))
}

/** A module's layer: its folder under src/, or the file itself for a module at the top (`server.ts`). */
const layerOf = (r: string) => (r.includes('/') ? r.split('/')[0]! : r)
const WIRING = ['main.ts', 'cli.ts', 'commands.ts', 'server.ts', 'runtime.ts', 'source-registry.ts', 'app.ts']
/** The layer table's "may import" column (besides its own folder); the wiring may import everything. */
const SHARED = ['deps.ts', 'config.ts', 'version.ts']
const MAY_IMPORT: Record<string, string[]> = {
  'deps.ts': ['demo', 'cluster', 'pollers', 'http', 'features', 'salt', 'db', 'lib', 'config.ts', 'version.ts'], // types only: checked below
  'config.ts': ['lib'],
  'version.ts': [],
  demo: ['features', 'salt', 'server.ts', ...SHARED, 'lib'],
  cluster: ['features', 'db', 'lib', 'deps.ts'],
  pollers: ['salt', 'features', ...SHARED, 'lib'],
  http: ['features', 'salt', 'db', ...SHARED, 'lib'],
  features: ['http', 'salt', 'db', ...SHARED, 'lib'],
  salt: ['lib'],
  db: ['lib'],
  lib: [],
}
/** Where the table names single modules of a layer: http/ reaches salt/ only for its errors and db/ only for write failures. */
const ONLY: Record<string, Record<string, string[]>> = { http: { salt: ['salt/errors.ts'], db: ['db/writable.ts'] } }
/** A feature's edge modules: its route definitions, and the two that answer with a Response of their own. */
const isEdge = (r: string) => /^features\/[^/]+\/([\w-]+-)?routes\.ts$/.test(r) || r === 'features/dashboard/serve.ts' || r === 'features/activity/stream.ts'
/** The feature services the edge itself calls: authentication, the permission check, the audit entry. */
const EDGE_USES = /^features\/(auth|roles|audit)\//

/** Strongly connected components of more than one module (Tarjan). */
function cycles(): string[][] {
  let n = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const on = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    index.set(v, n)
    low.set(v, n++)
    stack.push(v)
    on.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const comp: string[] = []
    for (let w = ''; w !== v; ) {
      w = stack.pop()!
      on.delete(w)
      comp.push(rel(w))
    }
    if (comp.length > 1) out.push(comp.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return out
}

/** Every import against the table, as `from -> to`. */
function againstTheGrain(): string[] {
  return [...graph].flatMap(([from, tos]) => {
    const a = layerOf(rel(from))
    if (WIRING.includes(a)) return []
    return tos.filter((to) => {
      const b = layerOf(rel(to))
      if (a === b) return false
      if (!(a in MAY_IMPORT)) return true // a new top-level module or folder: give it a row in the doc's table and here
      if (!MAY_IMPORT[a]!.includes(b)) return true
      if (ONLY[a]?.[b] && !ONLY[a]![b]!.includes(rel(to))) return true
      if (a === 'features' && b === 'http') return !isEdge(rel(from))
      if (a === 'http' && b === 'features') return !EDGE_USES.test(rel(to)) || isEdge(rel(to))
      return false
    }).map((to) => `${rel(from)} -> ${rel(to)}`)
  })
}

/** Files of src/ (relative) whose text matches any of these, outside the files `allowed` accepts. */
const offenders = (marks: RegExp[], allowed: (r: string) => boolean) =>
  [...text].filter(([r, t]) => !allowed(r) && marks.some((m) => m.test(t))).map(([r]) => r).sort()

test('the module graph has modules to check (the walk found src/)', () => {
  expect(graph.size).toBeGreaterThan(50)
  expect([...graph.values()].flat().length).toBeGreaterThan(100)
})

test('rule 1: no import cycle in src/, type imports included', () => {
  expect(cycles()).toEqual([])
})

test('rule 1: every import points down the layer table (features reach http/ only from their routes; http/ reaches only auth, roles and audit)', () => {
  expect(againstTheGrain()).toEqual([])
  // deps.ts names every layer's types for AppDeps, and nothing more.
  expect(text.get('deps.ts')!.split('\n').filter((l) => /^import\s/.test(l) && !/^import type\s/.test(l))).toEqual([])
})

test('rules 2 and 3: salt/ imports nothing of features, pollers or http; features/ nothing of pollers', () => {
  const bad = againstTheGrain().filter((e) => /^salt\/.* -> (features|pollers|http)\//.test(e) || /^features\/.* -> pollers\//.test(e))
  expect(bad).toEqual([])
})

test('rule 4: HTTP statuses and request parts live at the edge (services throw domain errors naming fields)', () => {
  const service = (r: string) => r.startsWith('features/') && !isEdge(r)
  // No 422 entry (`loc`), no request part, no Response and no status number outside the edge modules.
  const marks = [/\bloc\s*:/, /\[\s*'(body|query|path)'/, /new Response\(/, /\bstatus\s*:\s*[1-5]\d\d\b/, /\bValidationFailed\b|\bAppError\b/]
  expect(offenders(marks, (r) => !service(r))).toEqual([])
})

/** Table objects of the schema by their variable name, and their database names. */
const TABLES = new Map(Object.entries(schema).filter(([, t]) => is(t, Table)).map(([k, t]) => [k, getTableName(t as Table)]))
/** Each table's owning feature (docs/architecture.md, rule 5): the one folder whose modules write it. */
const OWNER: Record<string, string> = {
  minions: 'minions', jobs: 'jobs', job_returns: 'jobs', job_marks: 'jobs',
  runs: 'runs', run_details: 'runs', state_idents: 'runs', state_texts: 'runs', run_trend: 'runs', state_failures: 'runs',
  activity_events: 'activity', activity_counts: 'activity',
  users: 'users', user_roles: 'users', roles: 'roles', role_permissions: 'roles', sessions: 'auth', auth_version: 'auth',
  login_failures: 'auth', instances: 'instances',
  identity_providers: 'identity', identity_mappings: 'identity', settings: 'settings', salt_sources: 'salt-sources', minion_sources: 'minions', audit_log: 'audit', user_preferences: 'preferences',
  job_templates: 'templates', schedules: 'templates', schedule_firings: 'templates', batches: 'batches', batch_slices: 'batches',
  alert_rules: 'alerts', alerts: 'alerts', alert_silences: 'alerts', alert_channels: 'alerts', alert_transitions: 'alerts',
  alert_notifications: 'alerts', alert_deliveries: 'alerts', alert_attempts: 'alerts',
  package_keys: 'inventory', package_holders: 'inventory', minion_package_sets: 'inventory', package_key_generation: 'inventory',
  package_stats: 'inventory', package_versions: 'inventory', package_seen: 'inventory', inventory_refreshes: 'inventory',
  vuln_records: 'vulns', vuln_affected: 'vulns', vuln_feeds: 'vulns', vuln_matches: 'vulns', vuln_minions: 'vulns', vuln_generation: 'vulns',
}
/** The minion row's columns runs/ writes (its run summary); minions/ writes all the others. */
const RUN_COLUMNS = ['run_count', 'last_run_status', 'last_run_completed_at']
const MINION_COLUMNS = ['id', 'key_state', 'key_fingerprint', 'online', 'last_seen', 'offline_since', 'os', 'osrelease', 'ip', 'salt_version', 'os_family', 'grains', 'last_run_status', 'last_run_completed_at', 'run_count', 'updated_at']

/**
 * The tables a module names in its SQL, by the name it uses: the schema's export names, and the local names it imports
 * them under (`import { minions as m } from '../../db/schema'`, how the stores write `INSERT INTO ${m}`).
 */
function tableNames(t: string): Map<string, string> {
  const names = new Map(TABLES)
  for (const m of t.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*['"][./]*db\/schema(?:\/\w+)?['"]/g))
    for (const part of m[1]!.split(',')) {
      const x = /^\s*(\w+)(?:\s+as\s+(\w+))?\s*$/.exec(part)
      if (x && TABLES.has(x[1]!)) names.set(x[2] ?? x[1]!, TABLES.get(x[1]!)!)
    }
  return names
}

/** Every write statement of src/ outside db/: [file, table, the minion columns an UPDATE of minions sets, or null for an INSERT or DELETE]. */
function writes(): [string, string, string[] | null][] {
  const out: [string, string, string[] | null][] = []
  // `${name}` is a table by its export or local name; `${obj.name}` only by its export name (`${t.records}` is staging).
  // What follows is looked at, not consumed: a statement right after another is found too.
  const statement = /\b(INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:main\.)?(?:"?([a-z_]+)"?|\$\{(\w+\.)?(\w+)\})(?=([\s\S]{0,400}))/g
  const builder = /\.(?:insert|update|delete)\((\w+)\)/g
  for (const [r, t] of text) {
    if (r.startsWith('db/')) continue
    const names = tableNames(t)
    for (const m of t.matchAll(statement)) {
      const table = m[2] ?? (m[3] ? TABLES.get(m[4]!) : names.get(m[4]!))
      // Only the data model's tables: not TEMP, scratch, search index or lock tables.
      if (!table || ![...TABLES.values()].includes(table)) continue
      // The SET list ends at WHERE or at the statement's end (its template's closing backtick).
      const set = /^\s*SET\s+([\s\S]*?)(?:\bWHERE\b|`|$)/i.exec(m[5]!)?.[1] ?? ''
      out.push([r, table, m[1] === 'UPDATE' ? MINION_COLUMNS.filter((c) => new RegExp(`\\b${c}\\b`).test(set)) : null])
    }
    for (const m of t.matchAll(builder)) if (names.has(m[1]!)) out.push([r, names.get(m[1]!)!, null])
  }
  return out
}

test('rule 5: each table is written only by its owning feature, and each minion column by one feature', () => {
  const found = writes()
  expect(found.length).toBeGreaterThan(50)
  const bad = found.flatMap(([r, table, cols]) => {
    const folder = /^features\/([^/]+)\//.exec(r)?.[1]
    if (!(table in OWNER)) return [`${r}: ${table} has no owner in the doc's list (and OWNER here)`]
    // runs/ only updates its summary columns of a minion row; minions/ writes the rest (an UPDATE naming columns by
    // sql.identifier is seen with none, which passes: the check reads the SQL text).
    if (table === 'minions' && folder === 'runs') return cols && cols.every((c) => RUN_COLUMNS.includes(c)) ? [] : [`${r}: runs/ writes minions ${cols ? `columns ${cols.join(', ')}` : 'rows'}`]
    if (table === 'minions' && folder === 'minions') return cols?.some((c) => RUN_COLUMNS.includes(c)) ? [`${r}: minions/ writes the run summary ${cols.join(', ')}`] : []
    return folder === OWNER[table] ? [] : [`${r}: writes ${table}, owned by ${OWNER[table]}/`]
  })
  expect(bad).toEqual([])
})

test('rule 5 can fail: a write from another feature is caught, by the table\'s name or the name a store imports it under', () => {
  text.set('features/jobs/__w.ts', "db.query('UPDATE minions SET key_state = 1 WHERE id = ?1')")
  text.set('features/jobs/__x.ts', "import { minions as m, runs } from '../../db/schema'\nq.exec(sql`UPDATE ${m} SET offline_since = 1`)\nq.exec(sql`DELETE FROM ${runs}`)")
  try {
    expect(writes().filter(([r]) => r === 'features/jobs/__w.ts')).toEqual([['features/jobs/__w.ts', 'minions', ['key_state']]])
    // Two statements close together are both found.
    expect(writes().filter(([r]) => r === 'features/jobs/__x.ts')).toEqual([['features/jobs/__x.ts', 'minions', ['offline_since']], ['features/jobs/__x.ts', 'runs', null]])
  } finally {
    text.delete('features/jobs/__w.ts')
    text.delete('features/jobs/__x.ts')
  }
})

/** Where SQL and the database handle may appear: db/, and a feature's store (`store.ts`, `*-store.ts`) or per-engine module (`*-sqlite.ts`, `*-postgres.ts`). */
const isStore = (r: string) => r.startsWith('db/') || /^features\/[^/]+\/(store|[\w-]+-store|[\w-]+-sqlite|[\w-]+-postgres)\.ts$/.test(r)
/** SQL text and database handles: bun:sqlite's client and statements, the drizzle builder, the engine's calls, the sql tag. */
const SQL_MARKS = [/\$client\b/, /\.(query|prepare)(<[^>]*>)?\(/, /\bsql`/, /\bsql\.(raw|join|identifier|empty)\(/, /\b(db|tx)\.(select|insert|update|delete)\(/, /\b(db|tx|q)\.(rows|row|exec)(<[^>]*>)?\(/, /\.transaction\(/]
/**
 * Modules that still hold SQL while the stores are built (issue 24). This list may only shrink: when a module's SQL
 * moves into its feature's store the test fails until its line here is deleted, and no module may be added.
 */
const SQL_NOT_YET_IN_A_STORE: string[] = []

test('rule 6: SQL only in db/ and the features\' stores (the list of modules not moved yet only shrinks)', () => {
  const found = offenders(SQL_MARKS, isStore)
  expect(found.filter((r) => !SQL_NOT_YET_IN_A_STORE.includes(r))).toEqual([])
  // A module that no longer holds SQL leaves the list.
  expect(SQL_NOT_YET_IN_A_STORE.filter((r) => !found.includes(r))).toEqual([])
})

/** Modules that still make their own TEMP or scratch tables outside a per-engine module (only shrinks, as above). */
const DDL_NOT_YET_IN_AN_ENGINE_MODULE: string[] = []

/** Schema DDL: a table, index, trigger or view of the data model, or a file attached to hold some. */
const DDL = [/\bCREATE\s+(?:VIRTUAL\s+|TEMP\s+|TEMPORARY\s+|UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b/, /\bATTACH\s+DATABASE\b/, /\b(?:ALTER|DROP)\s+TABLE\b/]
/** DDL a per-engine module may hold: a TEMP table, or a scratch file it attaches and the tables in it (`vstage.x`). */
const SCRATCH = /\bCREATE\s+(?:TEMP|TEMPORARY)\s+TABLE\b|\bCREATE\s+(?:TABLE|INDEX)\s+(?:IF\s+NOT\s+EXISTS\s+)?\w+\.\w+|\b(?:ATTACH|DETACH)\s+DATABASE\b|\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:temp\.|\w+\.)/g

test('rule 7: DDL only in db/; TEMP and scratch tables only in a store\'s per-engine module (the list of modules not moved yet only shrinks)', () => {
  const engineModule = (r: string) => /^features\/[^/]+\/[\w-]+-(sqlite|postgres)\.ts$/.test(r)
  const found = offenders(DDL, (r) => r.startsWith('db/'))
  // A per-engine module with DDL beyond its scratch tables holds schema that belongs in db/.
  const schemaDdl = found.filter((r) => engineModule(r) && DDL.some((m) => m.test(text.get(r)!.replace(SCRATCH, ''))))
  expect(schemaDdl).toEqual([])
  expect(found.filter((r) => !engineModule(r) && !DDL_NOT_YET_IN_AN_ENGINE_MODULE.includes(r))).toEqual([])
  expect(DDL_NOT_YET_IN_AN_ENGINE_MODULE.filter((r) => !found.includes(r))).toEqual([])
})

/** The dashboard's imports of the server that are not type-only, as `from -> to`: only library modules may be among them. */
function dashboardValueImports(files: [string, string][] = dashboardFiles()): string[] {
  const DASH = join(SRC, 'dashboard')
  const spec = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g
  return files.flatMap(([file, t]) =>
    [...t.matchAll(spec)].flatMap((x) => {
      const to = resolveSpec(file, x[4] ?? x[5]!)
      if (!to || to.startsWith(DASH + '/')) return []
      // `import type { … }`, or `import { type A, type B }`: erased from the bundle.
      const typeOnly = !!x[2] || /^\{\s*(?:type\s+\w+(?:\s+as\s+\w+)?\s*,?\s*)+\}$/.test(x[3] ?? '')
      return typeOnly || rel(to).startsWith('lib/') ? [] : [`${relative(DASH, file)} -> ${rel(to)}`]
    }),
  )
}

function dashboardFiles(dir = join(SRC, 'dashboard')): [string, string][] {
  return readdirSync(dir).flatMap((n): [string, string][] => {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) return n === 'generated' ? [] : dashboardFiles(p)
    return /\.tsx?$/.test(n) && !n.endsWith('.d.ts') ? [[p, readFileSync(p, 'utf8')]] : []
  })
}

test('the dashboard imports the server only as types, apart from library modules (which import nothing above lib/)', () => {
  const files = dashboardFiles()
  expect(files.length).toBeGreaterThan(20)
  expect(dashboardValueImports(files)).toEqual([])
  // And it can fail: a value import of a feature's schema would put server code in the browser bundle.
  const probe = join(SRC, 'dashboard/pages/__probe.tsx')
  expect(dashboardValueImports([[probe, "import { MinionOut } from '../../features/minions/schema'\nimport type { X } from '../../features/jobs/schema'\nimport { globMatch } from '../../lib/glob'"]])).toEqual([
    'pages/__probe.tsx -> features/minions/schema.ts',
  ])
})

test('the checks can fail: a cycle, an import against the grain, a service naming a request part, SQL outside a store', () => {
  const a = join(SRC, 'salt/__a.ts')
  const b = join(SRC, 'features/__b.ts')
  const h = join(SRC, 'http/__h.ts')
  graph.set(a, [b])
  graph.set(b, [a])
  // http/ may reach salt/ for its errors only.
  graph.set(h, [join(SRC, 'salt/errors.ts'), join(SRC, 'salt/client.ts'), join(SRC, 'db/writable.ts'), join(SRC, 'db/client.ts')])
  text.set('features/x/__c.ts', "throw new Invalid([{ loc: ['body', 'x'] }]); db.query('SELECT 1')")
  try {
    expect(cycles()).toEqual([['features/__b.ts', 'salt/__a.ts']])
    expect(againstTheGrain()).toContain('salt/__a.ts -> features/__b.ts')
    expect(againstTheGrain().filter((e) => e.startsWith('http/__h.ts'))).toEqual(['http/__h.ts -> salt/client.ts', 'http/__h.ts -> db/client.ts'])
    expect(offenders([/\bloc\s*:/], () => false)).toContain('features/x/__c.ts')
    expect(offenders(SQL_MARKS, isStore)).toContain('features/x/__c.ts')
  } finally {
    graph.delete(a)
    graph.delete(b)
    graph.delete(h)
    text.delete('features/x/__c.ts')
  }
})
