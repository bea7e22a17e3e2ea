/** The test harness removes clusters whose test process died without stopping them, and only those. */
import { expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sweepStaleClusters } from '../helpers/pg-cluster'

test('a cluster directory of a dead owner goes; one of a live owner stays', () => {
  const dead = Bun.spawnSync(['true'])
  const gone = mkdtempSync(join(tmpdir(), 'saltdeck-pg-'))
  writeFileSync(join(gone, 'owner.pid'), String(dead.pid))
  const kept = mkdtempSync(join(tmpdir(), 'saltdeck-pg-'))
  writeFileSync(join(kept, 'owner.pid'), String(process.pid))
  const fresh = mkdtempSync(join(tmpdir(), 'saltdeck-pg-'))
  try {
    sweepStaleClusters()
    expect(existsSync(gone)).toBe(false)
    expect(existsSync(kept)).toBe(true)
    // No owner file yet and young: its owner may be starting it.
    expect(existsSync(fresh)).toBe(true)
  } finally {
    for (const d of [gone, kept, fresh]) rmSync(d, { recursive: true, force: true })
  }
})
