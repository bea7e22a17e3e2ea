/**
 * Whether anything was committed to a SQLite database since a value was read from it, told without a statement.
 *
 * In WAL mode every connection that commits, in this process or another, rewrites the WAL-index header at the start of
 * the database's `-shm` file (SQLite's documented WAL file format: the header counts the WAL's frames and carries
 * their checksum and the WAL's salts, so each commit and each checkpoint restart changes it). A shared mapping (only
 * ever read) of that file shows the header as committers leave it; a header equal to the one seen before means no commit
 * in between. Reading it costs tens of nanoseconds; the statement it saves (a version or a generation number)
 * costs 3-5 µs, half of it the lock and stat system calls SQLite makes to begin each read (bench/RESULTS.md, session 15).
 *
 * A torn read (a header being rewritten) only ever differs from the last one, which costs one needless read. The
 * `-shm` file stays while this process holds its connection (SQLite truncates or removes it only for the first or last
 * process to use the database), so the mapping stays the file's.
 */

import { realpathSync } from 'node:fs'

/** The header's first copy: 48 bytes, read as twelve 32-bit words. */
const HEADER_WORDS = 12

/**
 * A counter that moves whenever the header of `file`'s WAL index has changed since the last call, or null when it
 * cannot be read (an in-memory database, not in WAL mode, no `-shm` file yet: then every value is read again).
 */
export function commitEpoch(file: string): () => number | null {
  // Mapped at the first call (the engine's pragmas have made the -shm file by then); never again if that fails.
  let words: Uint32Array | null | undefined
  const seen = new Uint32Array(HEADER_WORDS)
  let epoch = 0
  return () => {
    if (words === undefined) {
      words = map(file)
      if (words) seen.set(words)
    }
    if (!words) return null
    for (let i = 0; i < HEADER_WORDS; i++) {
      if (words[i] !== seen[i]) {
        seen.set(words)
        return ++epoch
      }
    }
    return epoch
  }
}

/** The WAL-index header's words of `file`, mapped shared (only ever read); null when there is no such file. */
function map(file: string): Uint32Array | null {
  if (!file || file === ':memory:') return null
  try {
    // SQLite names the -shm file after the database's real path (symbolic links followed): so does this.
    const bytes = Bun.mmap(`${realpathSync(file)}-shm`, { shared: true })
    // Byte 12 is the header's isInit flag: a file no connection has set up is not one to trust.
    if (bytes.byteLength < HEADER_WORDS * 4 || bytes[12] !== 1) return null
    return new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_WORDS)
  } catch {
    return null
  }
}
