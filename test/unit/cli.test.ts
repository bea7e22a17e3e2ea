// Proves the command line's rough edges are gone (issue 9 item 13): every subcommand answers --help with its own usage
// (exit 0), and a backup to a place that cannot be written names the target and the reason.
import { expect, spyOn, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../../src/cli'
import { openDataDir } from '../../src/server'
import { loadConfig } from '../../src/config'
import { createUser } from '../../src/features/users/service'
import { createApiToken, createSession } from '../../src/features/auth/service'

/** Runs the CLI and captures what it prints on stdout and stderr. */
async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = []
  const log = spyOn(console, 'log').mockImplementation((s: string) => void out.push(s))
  const err = spyOn(console, 'error').mockImplementation((s: string) => void out.push(s))
  try {
    return { code: await runCli(argv, env), text: out.join('\n') }
  } finally {
    log.mockRestore()
    err.mockRestore()
  }
}

/** Runs `fn` with a temporary directory holding a data directory with a database (`data`), and the env naming it. */
async function withDataDir(fn: (dir: string, env: Record<string, string>) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-cli-'))
  try {
    const env = { SALTDECK_ADMIN_PASSWORD: 'cli-test-password', SALTDECK_ARGON2_MEMORY_KIB: '1024', SALTDECK_DATA_DIR: join(dir, 'data') }
    // `config` opens nothing: create the database the way the commands find it.
    ;(await openDataDir(loadConfig(env))).db.$client.close()
    await fn(dir, env)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test.each([['serve'], ['user'], ['backup'], ['vulns'], ['config'], ['version']])('saltdeck %s --help prints its usage and exits 0', async (cmd) => {
  const r = await run([cmd, '--help'])
  expect(r.code).toBe(0)
  expect(r.text).toStartWith('Usage:\n')
  expect(r.text).toContain(`saltdeck ${cmd}`)
  expect(r.text).not.toContain('needs a value')
})

test('saltdeck user create NAME -h also prints the user usage', async () => {
  const r = await run(['user', 'create', 'x', '-h'])
  expect(r.code).toBe(0)
  expect(r.text).toContain('saltdeck user create NAME')
})

test('a backup into a directory that does not exist names the target and why', async () => {
  await withDataDir(async (_dir, env) => {
    const r = await run(['backup', '/nonexistent-dir/x.db'], env)
    expect(r.code).toBe(1)
    expect(r.text).toBe('saltdeck backup: cannot write the backup to /nonexistent-dir/x.db: the directory /nonexistent-dir does not exist')
  })
})

test('on PostgreSQL, saltdeck backup says to use pg_dump (exit 1) and opens nothing', async () => {
  // Nothing listens there: the answer comes before any connection.
  const r = await run(['backup', '/tmp/x.db', '--database-url', 'postgres://saltdeck@127.0.0.1:1/saltdeck'])
  expect(r.code).toBe(1)
  expect(r.text).toStartWith('saltdeck backup: the database is PostgreSQL: back it up with pg_dump')
  const env = await run(['backup', '/tmp/x.db'], { SALTDECK_DATABASE_URL: 'postgres://saltdeck@127.0.0.1:1/saltdeck' })
  expect(env.text).toBe(r.text)
})

test('--database-url and SALTDECK_DATABASE_URL take postgres:// URLs only; saltdeck config masks the URL (it holds the password)', async () => {
  await expect(run(['backup', '/tmp/x.db', '--database-url', 'mysql://a@b/c'])).rejects.toThrow('--database-url must be a postgres:// URL')
  await expect(run(['user', 'list'], { SALTDECK_DATABASE_URL: 'saltdeck.db' })).rejects.toThrow('SALTDECK_DATABASE_URL: must be a postgres:// URL')
  const shown = await run(['config', '--database-url', 'postgresql://u:secret@db/saltdeck'])
  expect(shown.text).toContain('SALTDECK_DATABASE_URL=********')
  expect(shown.text).not.toContain('secret@')
})

test('saltdeck vulns import reads a directory of OSV records into the data dir; a broken file imports nothing and says which', async () => {
  await withDataDir(async (dir, env) => {
    const feed = join(dir, 'feed')
    mkdirSync(feed)
    const rec = (id: string, eco: string) => ({ id, summary: id, affected: [{ package: { ecosystem: eco, name: 'openssl' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }] }] }] })
    writeFileSync(join(feed, 'a.json'), JSON.stringify(rec('DSA-A', 'Debian:12')))
    writeFileSync(join(feed, 'b.json'), JSON.stringify([rec('DSA-B', 'Debian:12'), rec('PY-1', 'PyPI')]))
    const ok = await run(['vulns', 'import', feed], env)
    expect(ok.text).toContain('Debian:12: 2 records')
    expect(ok.text).toContain('Imported 2 records (1 of other ecosystems skipped, 0 withdrawn)')
    expect(ok.code).toBe(0)
    writeFileSync(join(feed, 'c.json'), '{"id": "DSA-C", ')
    const bad = await run(['vulns', 'import', feed], env)
    expect(bad.code).toBe(1)
    expect(bad.text).toStartWith(`saltdeck vulns: nothing imported: ${join(feed, 'c.json')}: not valid JSON`)
    const deps = await openDataDir(loadConfig(env))
    expect(deps.db.$client.query('SELECT id FROM vuln_records ORDER BY id').all()).toEqual([{ id: 'DSA-A' }, { id: 'DSA-B' }])
    deps.db.$client.close()
    expect((await run(['vulns', 'import'], env)).code).toBe(2)
  })
})

test('saltdeck user create refuses a display name with a bidirectional control, as the API does (issue 20 item 12)', async () => {
  await withDataDir(async (_dir, env) => {
    const bad = await run(['user', 'create', 'carol', '--display-name', 'admin\u202egnp.exe'], env)
    expect(bad.code).not.toBe(0)
    expect(bad.text).toContain('the display name must be at most 128 characters, without control characters or bidirectional controls')
    const ok = await run(['user', 'create', 'carol', '--display-name', 'Carol Ärger'], env)
    expect(ok.code).toBe(0)
  })
})

test('saltdeck user reset-password ends every browser session and API token of that user, and no one else\'s', async () => {
  await withDataDir(async (_dir, env) => {
    const deps = await openDataDir(loadConfig(env))
    const u = await createUser(deps, { username: 'carol', password: 'carol-pass-1', must_change_pw: false })
    await createSession(deps, u.id)
    await createApiToken(deps, u.id, 'ci', null)
    const admin = deps.db.$client.query<{ id: string }, []>("SELECT id FROM users WHERE username = 'admin'").get()!.id
    await createSession(deps, admin)
    deps.db.$client.close()
    expect((await run(['user', 'reset-password', 'carol'], env)).code).toBe(0)
    const after = await openDataDir(loadConfig(env))
    const kinds = (id: string) => after.db.$client.query<{ kind: string }, [string]>('SELECT kind FROM sessions WHERE user_id = ?1').all(id).map((r) => r.kind)
    expect(kinds(u.id)).toEqual([])
    expect(kinds(admin)).toEqual(['session'])
    after.db.$client.close()
  })
})
