/** The operator commands besides serve: user create|reset-password|list, backup, migrate-to-postgres, run against a data directory, and config. */
import { chmodSync, existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { optionList, SECRET_MASK, type Config } from './config'
import type { AppDeps } from './deps'
import { Logger } from './lib/log'
import { backupTo } from './db/client'
import { openDataDir } from './server'
import { openDb, openPostgres } from './db/client'
import { migrate } from './db/migrate'
import { copyToPostgres, CopyError } from './db/copy-to-postgres'
import { DataDirLocked, lockDataDir } from './db/serve-lock'
import { randomPassword } from './features/users/bootstrap'
import { createUser, listUsers, setPassword } from './features/users/service'
import { listRoles } from './features/roles/service'
import { audit } from './features/audit/service'
import { DisplayName, NewPassword, Username } from './http/schemas'
import { Conflict } from './lib/errors'
import { importFeed } from './features/vulns/feeds'
import { indexActivity } from './features/activity/service'
import { FeedError, readRecords } from './features/vulns/osv-read'

/** A command's failure with the message the operator sees. */
export class CommandError extends Error {}

/** Opens an existing data directory (commands never create one: `serve` does, with the first admin). */
async function openExisting(config: Config): Promise<AppDeps> {
  const file = join(resolve(config.dataDir), 'saltdeck.db')
  if (!config.databaseUrl && !existsSync(file)) throw new CommandError(`no database at ${file}: run 'saltdeck serve' once first, or pass --data-dir`)
  // Quiet: the commands print their own results; the service's log lines would mix into them.
  return openDataDir(config, new Logger('text', () => {}, true))
}

/** Reads one line from standard input (a password piped in, never on the command line where `ps` shows it). */
async function readStdinLine(): Promise<string> {
  const text = await Bun.stdin.text()
  return text.split(/\r?\n/)[0] ?? ''
}

/** The password to set: from stdin when asked, else a random one the command prints. */
async function choosePassword(fromStdin: boolean): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: randomPassword(), generated: true }
  const password = await readStdinLine()
  if (!Value.Check(NewPassword, password)) throw new CommandError('the password must be 8 to 1024 characters')
  return { password, generated: false }
}

/** Runs a command body on the opened data dir and closes the database afterwards. */
async function withDeps<T>(config: Config, fn: (deps: AppDeps) => Promise<T>): Promise<T> {
  const deps = await openExisting(config)
  try {
    return await fn(deps)
  } finally {
    await deps.db.close()
  }
}

/** `user create <name> [--roles a,b] [--display-name N] [--password-stdin]`: prints the password when generated. */
export function userCreate(config: Config, username: string, opts: { roles?: string; displayName?: string; passwordStdin?: boolean }, print: (s: string) => void) {
  if (!Value.Check(Username, username)) throw new CommandError('the username must be 1 to 64 characters of letters, digits and . _ @ -')
  // The API's own rule for display names (DisplayName in http/schemas.ts, over lib/schemas.ts PlainText).
  if (opts.displayName !== undefined && !Value.Check(DisplayName, opts.displayName))
    throw new CommandError('the display name must be at most 128 characters, without control characters or bidirectional controls')
  return withDeps(config, async (deps) => {
    const byName = new Map((await listRoles(deps)).roles.map((r) => [r.name.toLowerCase(), r.id]))
    const names = (opts.roles ?? 'viewer').split(',').map((s) => s.trim()).filter(Boolean)
    const unknown = names.filter((n) => !byName.has(n.toLowerCase()))
    if (unknown.length) throw new CommandError(`unknown role: ${unknown.join(', ')} (roles: ${[...byName.keys()].join(', ')})`)
    const { password, generated } = await choosePassword(!!opts.passwordStdin)
    try {
      await createUser(deps, { username, password, display_name: opts.displayName ?? '', must_change_pw: generated, roles: names.map((n) => byName.get(n.toLowerCase())!) })
    } catch (e) {
      // The service's own uniqueness check (case-insensitive) answers 409, as the API does.
      if (e instanceof Conflict) throw new CommandError(`user '${username}' already exists`)
      throw e
    }
    await audit(deps, { username: null, action: 'user.create', target: username, client: 'cli' })
    print(generated ? `Created user '${username}' with password: ${password}  (must be changed at first login)` : `Created user '${username}'.`)
  })
}

/** `user reset-password <name> [--password-stdin]`: sets a new password and ends the user's sessions. */
export function userResetPassword(config: Config, username: string, opts: { passwordStdin?: boolean }, print: (s: string) => void) {
  return withDeps(config, async (deps) => {
    const user = (await listUsers(deps)).users.find((u) => u.username.toLowerCase() === username.toLowerCase())
    if (!user) throw new CommandError(`no user '${username}'`)
    const { password, generated } = await choosePassword(!!opts.passwordStdin)
    await setPassword(deps, user.id, password, generated)
    await audit(deps, { username: null, action: 'user.set_password', target: user.username, client: 'cli' })
    print(generated ? `New password for '${user.username}': ${password}  (must be changed at next login)` : `Password of '${user.username}' changed.`)
  })
}

/** `user list`: one line per user with state and roles. */
export function userList(config: Config, print: (s: string) => void) {
  return withDeps(config, async (deps) => {
    const rows = (await listUsers(deps)).users.map((u) => [u.username, u.is_active ? 'active' : 'inactive', u.must_change_pw ? 'must-change-pw' : '-', u.roles.map((r) => r.name).join(',') || '-', u.display_name || '-'])
    const head = ['USERNAME', 'STATE', 'PASSWORD', 'ROLES', 'DISPLAY NAME']
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
    for (const r of [head, ...rows]) print(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
  })
}

/** `vulns import FILE...`: reads OSV feeds into the database (atomically per import); prints what each ecosystem holds now. */
export function vulnsImport(config: Config, files: string[], print: (s: string) => void) {
  return withDeps(config, async (deps) => {
    const t0 = performance.now()
    try {
      const r = await importFeed(deps, readRecords(files.map((f) => resolve(f))), files.map((f) => f.split('/').slice(-2).join('/')).join(', ').slice(0, 500))
      for (const f of r.feeds) print(`${f.ecosystem}: ${f.records} records`)
      print(`Imported ${r.records} records (${r.skipped} of other ecosystems skipped, ${r.withdrawn} withdrawn) in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      await audit(deps, { username: 'cli', action: 'vuln.import', target: 'feeds', detail: `${r.records} records: ${r.feeds.map((f) => f.ecosystem).join(', ')}`, ok: true, client: 'cli' })
    } catch (e) {
      if (e instanceof FeedError) throw new CommandError(`nothing imported: ${e.message}`)
      throw e
    }
  })
}

/** What `backup` answers on PostgreSQL (contract §15). */
export const PG_BACKUP = 'the database is PostgreSQL: back it up with pg_dump (pg_dump --format=custom --file FILE "$SALTDECK_DATABASE_URL"); saltdeck backup copies SQLite only'

/** `backup <file>`: an online, consistent and compact copy of the database (SQLite; PostgreSQL answers PG_BACKUP). */
export function backup(config: Config, file: string, print: (s: string) => void) {
  // pg_dump takes a consistent copy of a live PostgreSQL database; Saltdeck has nothing to add to it.
  if (config.databaseUrl) throw new CommandError(PG_BACKUP)
  const target = resolve(file)
  if (existsSync(target)) throw new CommandError(`${target} exists; choose a new file name`)
  return withDeps(config, async (deps) => {
    const t0 = performance.now()
    try {
      backupTo(deps.db, target)
    } catch (e) {
      // SQLite says "unable to open database file" for the target, which reads as if the source were broken.
      const why = !existsSync(dirname(target)) ? `the directory ${dirname(target)} does not exist` : (e as Error).message
      throw new CommandError(`cannot write the backup to ${target}: ${why}`)
    }
    chmodSync(target, 0o600)
    print(`Backup written to ${target} (${Bun.file(target).size} bytes in ${Math.round(performance.now() - t0)} ms)`)
  })
}

/**
 * `config`: the effective configuration as `NAME=value` lines, the form of an environment file. A secret option
 * shows {@link SECRET_MASK} when set; an unset option shows nothing after `=`.
 */
export function configShow(config: Config, print: (s: string) => void) {
  for (const [key, o] of optionList()) {
    const v = (config as Record<string, unknown>)[key]
    print(`${o.env}=${v === null || v === undefined ? '' : o.secret ? SECRET_MASK : String(v)}`)
  }
}

/** The database a URL names, without its password (never printed). */
function withoutPassword(url: string): string {
  const u = new URL(url)
  u.password = ''
  return u.toString()
}

/** Copies the data directory's SQLite database into the PostgreSQL database of `config.databaseUrl`. */
export async function migrateToPostgres(config: Config, print: (s: string) => void): Promise<void> {
  if (!config.databaseUrl) throw new CommandError('--database-url (or SALTDECK_DATABASE_URL) names the PostgreSQL database to copy into')
  const dir = resolve(config.dataDir)
  const file = join(dir, 'saltdeck.db')
  if (!existsSync(file)) throw new CommandError(`no database at ${file}: pass the --data-dir of the SQLite install to move`)
  // The service must be stopped: what it wrote after the copy began would be lost.
  let lock
  try {
    lock = lockDataDir(dir)
  } catch (e) {
    if (e instanceof DataDirLocked) throw new CommandError(`${e.message} before moving the install`)
    throw e
  }
  const src = openDb(file)
  const pg = openPostgres(config.databaseUrl)
  try {
    // The source is brought to the current schema first, as serve would at start: both sides then have the same tables.
    await migrate(src)
    await migrate(pg)
    const t0 = performance.now()
    let last = ''
    const result = await copyToPostgres(src, pg, (table) => {
      if (table !== last) print(`copying ${(last = table)}`)
    })
    const rows = result.reduce((n, r) => n + r.copied, 0)
    for (const r of result) print(`  ${r.table.padEnd(28)} ${String(r.source).padStart(10)} → ${String(r.copied).padStart(10)}`)
    print(`Copied ${rows} rows of ${result.length} tables into ${withoutPassword(config.databaseUrl)} in ${((performance.now() - t0) / 1000).toFixed(1)} s; every count matches.`)
    // The activity search index is derived (PostgreSQL's trigger queued every copied event): built here, so the first
    // start searches an index. Left to the service, a search read every queued event until it caught up (over a minute
    // at 2,000,000 events, bench/RESULTS.md session 12).
    const t1 = performance.now()
    let indexed = 0
    for (let n; (n = await indexActivity({ db: pg }, 50_000)) > 0; ) indexed += n
    print(`Indexed ${indexed} events for the activity search in ${((performance.now() - t1) / 1000).toFixed(1)} s.`)
    print(`Start saltdeck with SALTDECK_DATABASE_URL set and the same secret.key (in ${dir}, or SALTDECK_SECRET_KEY_FILE) so the stored secrets stay readable.`)
  } catch (e) {
    if (e instanceof CopyError) throw new CommandError(e.message)
    throw e
  } finally {
    await pg.close()
    await src.close()
    lock.release()
  }
}
