/**
 * A test app on a fresh database with the real migrations, plus request helpers: a SQLite file of its own in WAL mode
 * as the service runs it (so the values kept until a commit are kept here too: db/until-commit.ts), or a fresh
 * PostgreSQL database when SALTDECK_TEST_ENGINE=postgres (helpers/migrations.ts).
 */
import { sql } from 'drizzle-orm'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { users } from '../../src/db/schema'
import type { Row } from '../../src/db/row'
import { testDb } from './migrations'
import { attachSearchIndex } from '../../src/db/search-index'
import { loadConfig, type Config } from '../../src/config'
import { ManualClock } from '../../src/lib/clock'
import { Logger } from '../../src/lib/log'
import { createSession } from '../../src/features/auth/service'
import { bootstrap } from '../../src/features/users/bootstrap'
import { createApp } from '../../src/app'
import type { AppDeps } from '../../src/deps'
import { createUser } from '../../src/features/users/service'
import { listRoles } from '../../src/features/roles/service'

/** Password of the seeded admin in tests. */
export const ADMIN_PW = 'admin-password-1'

/** Where this test process's world databases go; removed when it exits. */
let worldDir: string | null = null
let worlds = 0
function worldFile(): string {
  if (!worldDir) {
    const dir = (worldDir = mkdtempSync(join(tmpdir(), 'saltdeck-world-')))
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  }
  // A directory per world: the search index is a file beside the database (search.db).
  const dir = join(worldDir, `world-${++worlds}`)
  mkdirSync(dir)
  return join(dir, 'saltdeck.db')
}

/** A ready test world: deps, app, clock and bearer tokens for admin, operator, viewer and a role-less user. */
export async function testWorld(overrides: Partial<Config> = {}, dbPath = worldFile()) {
  const db = await testDb(dbPath)
  if (db.engine === 'sqlite') attachSearchIndex(db.$client)
  const clock = new ManualClock()
  const config = loadConfig({}, { adminPassword: ADMIN_PW, passwordMemoryKib: 256, ...overrides })
  const deps: AppDeps = { db, config, clock, log: new Logger('json', () => {}, true), secretKey: new Uint8Array(32).fill(7) }
  await bootstrap(deps, null, () => {})
  const app = createApp(deps)
  const roleList = (await listRoles(deps)).roles
  const roleId = (name: string) => roleList.find((r) => r.name === name)!.id
  const mk = async (username: string, roles: string[]) => {
    const u = await createUser(deps, { username, password: 'password-123', must_change_pw: false, roles: roles.map(roleId) })
    return (await createSession(deps, u.id)).token
  }
  const adminId = (await db.row<Pick<Row<typeof users>, 'id'>>(sql`SELECT ${users.id} FROM ${users} WHERE ${users.username} = 'admin'`))!.id
  const tokens = {
    admin: (await createSession(deps, adminId)).token,
    operator: await mk('oper', ['operator']),
    viewer: await mk('view', ['viewer']),
    nobody: await mk('nobody', []),
  }
  return { deps, app, clock, tokens, roleId }
}

/** Who makes a request: a role name, a raw token, or nobody. */
export type Who = 'admin' | 'operator' | 'viewer' | 'nobody' | 'anon' | { token: string } | { cookie: string }

/** Sends a request through app.handle and returns status, headers and parsed JSON body. */
export async function call(
  w: Awaited<ReturnType<typeof testWorld>>, method: string, path: string,
  opts: { who?: Who; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  const who = opts.who ?? 'admin'
  if (typeof who === 'string' && who !== 'anon') headers.authorization = `Bearer ${w.tokens[who]}`
  else if (typeof who === 'object' && 'token' in who) headers.authorization = `Bearer ${who.token}`
  else if (typeof who === 'object' && 'cookie' in who) headers.cookie = `saltdeck_session=${who.cookie}`
  let body: string | undefined
  if (opts.raw !== undefined) body = opts.raw
  else if (opts.body !== undefined) body = JSON.stringify(opts.body)
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json'
  const res = await w.app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
  const text = await res.text()
  let json: any = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    json = text
  }
  return { status: res.status, body: json, headers: res.headers }
}
