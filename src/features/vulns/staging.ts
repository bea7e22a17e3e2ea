/**
 * Where a vulnerability import keeps its files while it runs (an upload's body, the staging database): a directory
 * `.vuln-import-<pid>-XXXXXX` in the data directory, removed when the import ends, and at the next start when a crash
 * left it behind.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from '../../lib/log'
import { processAlive } from '../../lib/process-alive'

const PREFIX = '.vuln-import-'

/** A new staging directory of this process: in the data directory (a feed may be far larger than a RAM-backed /tmp likes), else the system's temp dir. */
export function makeStagingDir(dataDir: string): string {
  return mkdtempSync(join(existsSync(dataDir) ? dataDir : tmpdir(), `${PREFIX}${process.pid}-`))
}

/**
 * Removes the staging directories in `dataDir` that no running import owns: this process's own (it has started no
 * import yet) and those of processes that are gone. A CLI import running beside the service keeps its directory.
 */
export function removeStaleStaging(dataDir: string, log: Logger): number {
  if (!existsSync(dataDir)) return 0
  let removed = 0
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith(PREFIX)) continue
    const pid = Number(/^\.vuln-import-(\d+)-/.exec(name)?.[1] ?? NaN)
    // A name without a pid comes from a version that did not write one: no import of this process can own it.
    if (Number.isInteger(pid) && pid !== process.pid && processAlive(pid)) continue
    rmSync(join(dataDir, name), { recursive: true, force: true })
    removed++
  }
  if (removed) log.info('removed staging files of interrupted vulnerability imports', { directories: removed })
  return removed
}
