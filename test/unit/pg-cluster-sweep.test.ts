/** The test harness removes clusters whose test process died without stopping them, and only those. */
import { expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sweepStaleClusters } from '../helpers/pg-cluster'

test('a cluster directory of a dead owner goes; one of a live owner stays', () => {
  // A root of its own: the machine's other clusters are not this test's to sweep (nor to wait for).
  const root = mkdtempSync(join(tmpdir(), 'sweep-'))
  const dead = Bun.spawnSync(['true'])
  const gone = mkdtempSync(join(root, 'saltdeck-pg-'))
  writeFileSync(join(gone, 'owner.pid'), String(dead.pid))
  const kept = mkdtempSync(join(root, 'saltdeck-pg-'))
  writeFileSync(join(kept, 'owner.pid'), String(process.pid))
  const fresh = mkdtempSync(join(root, 'saltdeck-pg-'))
  try {
    sweepStaleClusters(root)
    expect(existsSync(gone)).toBe(false)
    expect(existsSync(kept)).toBe(true)
    // No owner file yet and young: its owner may be starting it.
    expect(existsSync(fresh)).toBe(true)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
