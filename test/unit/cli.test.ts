// Proves the command line's rough edges are gone (issue 9 item 13): every subcommand answers --help with its own usage
// (exit 0), and a backup to a place that cannot be written names the target and the reason.
import { expect, spyOn, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../../src/cli'

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

test.each([['serve'], ['user'], ['backup'], ['config'], ['version']])('saltdeck %s --help prints its usage and exits 0', async (cmd) => {
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
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-cli-'))
  try {
    const env = { SALTDECK_ADMIN_PASSWORD: 'cli-test-password', SALTDECK_ARGON2_MEMORY_KIB: '1024', SALTDECK_DATA_DIR: join(dir, 'data') }
    // A data directory with a database: `config` opens nothing, so create one the way `user list` would find it.
    const { openDataDir } = await import('../../src/server')
    const { loadConfig } = await import('../../src/config')
    const deps = await openDataDir(loadConfig(env))
    deps.db.$client.close()
    const r = await run(['backup', '/nonexistent-dir/x.db'], env)
    expect(r.code).toBe(1)
    expect(r.text).toBe('saltdeck backup: cannot write the backup to /nonexistent-dir/x.db: the directory /nonexistent-dir does not exist')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
