// Issue 20 item 4: staging files an interrupted vulnerability import left in the data directory are removed when the
// service starts; a running import of another process (a CLI import beside the service) keeps its own.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe } from '../helpers/serve'

const root = mkdtempSync(join(tmpdir(), 'saltdeck-staging-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

test('serve removes the staging directories of imports whose process is gone, and keeps a live one', async () => {
  const dataDir = join(root, 'data')
  mkdirSync(dataDir, { mode: 0o700 })
  // A process that has exited: its pid names a crashed upload's directory.
  const gone = Bun.spawn(['true'])
  await gone.exited
  const live = Bun.spawn(['sleep', '60'])
  try {
    const dirs = { crashed: `.vuln-import-${gone.pid}-abc123`, older: '.vuln-import-Xy12Zq', live: `.vuln-import-${live.pid}-def456` }
    for (const d of Object.values(dirs)) {
      mkdirSync(join(dataDir, d))
      writeFileSync(join(dataDir, d, 'feed.zip'), 'PK\u0003\u0004 an upload cut short')
    }
    const srv = await startServe(dataDir, { SALTDECK_ADMIN_PASSWORD: 'staging-test-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024' })
    try {
      expect(readdirSync(dataDir).filter((n) => n.startsWith('.vuln-import-'))).toEqual([dirs.live])
      expect(srv.output()).toContain('removed staging files of interrupted vulnerability imports')
    } finally {
      expect(await srv.stop()).toBe(0)
    }
  } finally {
    live.kill()
  }
})
