/**
 * One `saltdeck serve` per data directory: an exclusive SQLite lock on `serve.lock`, held for the life of the process.
 * The lock is the operating system's (fcntl), so it goes with the process, a kill -9 included; `serve.pid` only names
 * the holder for the message and is never trusted on its own.
 */
import { Database } from 'bun:sqlite'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Why serve refuses to start: another live process holds the data directory. */
export class DataDirLocked extends Error {}

/** A held lock; `release` ends it (at a graceful stop). */
export interface ServeLock {
  release(): void
}

/** Lock handles held by this process: referenced here so a collection never closes one (and drops its lock). */
const held = new Set<Database>()

/** Takes the data directory's serve lock, or throws DataDirLocked naming the process that holds it. */
export function lockDataDir(dir: string): ServeLock {
  const db = new Database(join(dir, 'serve.lock'), { create: true })
  try {
    db.exec('PRAGMA busy_timeout = 0')
    db.exec('PRAGMA journal_mode = MEMORY')
    // In exclusive locking mode the first write's lock is kept until the connection closes: no other process can
    // read or write the file meanwhile.
    db.exec('PRAGMA locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL)')
    db.exec('DELETE FROM holder')
    db.run('INSERT INTO holder (pid) VALUES (?)', [process.pid])
    db.exec('COMMIT')
  } catch (e) {
    db.close()
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e
    const pid = holderPid(dir)
    throw new DataDirLocked(`the data directory ${dir} is in use by another saltdeck serve (${pid ? `pid ${pid}` : 'pid unknown'}); stop it first`)
  }
  held.add(db)
  writeFileSync(join(dir, 'serve.pid'), `${process.pid}\n`, { mode: 0o600 })
  return {
    release() {
      if (!held.delete(db)) return
      rmSync(join(dir, 'serve.pid'), { force: true })
      db.close()
    },
  }
}

/** The pid the holder wrote (it writes it just after taking the lock), or null when it is not there yet. */
function holderPid(dir: string): number | null {
  for (let i = 0; i < 20; i++) {
    try {
      const pid = Number(readFileSync(join(dir, 'serve.pid'), 'utf8').trim())
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) return pid
    } catch {
      // Not written yet: the holder took the lock a moment ago.
    }
    Bun.sleepSync(25)
  }
  return null
}
