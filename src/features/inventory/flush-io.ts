/**
 * What the package-set writer's flush reads and writes, by engine (the interfaces; each user picks its engine's with
 * `twin`). The flush decides every row (writer.ts, deltas.ts, holders.ts); these say how the rows reach the database. SQLite runs one prepared statement per row at once
 * (flush-sqlite.ts: no round trip, and a loop that stays synchronous), PostgreSQL gathers the rows and sends
 * multi-row statements (flush-postgres.ts: a round trip per row was 95% of its flush).
 */
import type { HolderRow } from './holder-store'
import type { StoredSet } from './set-store'

/** A set as the writer hands it to be stored (its input, not a table row: `minion_package_sets` rows are `Row<typeof minionPackageSets>`). */
export interface SetToStore {
  minionId: string
  source: string
  collectedAt: number
  keys: Uint8Array
}

/** A package key to store: name, version, arch. */
export type KeyRow = [name: string, version: string, arch: string]

/** The sets' reads and writes of one window of a flush (a few hundred minions, each once). */
export interface SetIo {
  /** Makes the minion rows the sets need (minions/ store) and reads the stored sets of these minions, by minion id. */
  read(minionIds: string[], now: number): Promise<Map<string, StoredSet>>
  /** Stores new package keys; their ids, in order. */
  insertKeys(keys: KeyRow[]): Promise<number[]>
  /** Updates stored sets and inserts new ones; the new ones' minion numbers, in order. */
  write(updates: SetToStore[], inserts: SetToStore[]): Promise<number[]>
}

/**
 * The aggregate writes of a flush (deltas.ts), one call per row: run at once (SQLite) or gathered and sent by the
 * chunk (PostgreSQL), so a result (`seenDrop`'s) is only sure after settle(). A row never overtakes one it depends on:
 * statsDrop and versionCount follow statsAdd, seenDrop follows seenAdd, recompute follows raise, recomputeAll both.
 */
export interface AggregateIo {
  versionIns(source: string, name: string, version: string, arch: string, count: number): void
  versionUpd(source: string, name: string, version: string, arch: string, count: number): void
  versionDel(source: string, name: string, version: string, arch: string): void
  /** minion_count moved by `count` (the row made, last seen `at`, when new). */
  statsAdd(source: string, name: string, count: number, at: number): void
  /** The row deleted if no minion holds the name any more. */
  statsDrop(source: string, name: string): void
  versionCount(source: string, name: string, count: number): void
  seenAdd(source: string, name: string, at: number, n: number): void
  /** The row deleted if it holds nobody any more; `emptied` is called when it was. */
  seenDrop(source: string, name: string, at: number, emptied: () => void): void
  /** last_seen raised to `at` if earlier. */
  raise(source: string, name: string, at: number): void
  /** last_seen recomputed from package_seen if it was at or before `at`. */
  recompute(source: string, name: string, at: number): void
  /** The all-sources row's last_seen recomputed from the sources' rows if it was at or before `at`. */
  recomputeAll(name: string, at: number): void
  deleteKey(id: number): void
  /** Sends what the calls gathered and waits for every write. */
  settle(): Promise<void>
}

/** The holder index's reads and writes of one apply (holders.ts). */
export interface HolderIo {
  /** The stored rows of `chunk` among `keyIds` (or all of the chunk's: SQLite reads its range in one statement). */
  rows(chunk: number, keyIds: number[]): Promise<HolderRow[]>
  put(chunk: number, keyId: number, bits: Uint8Array): void
  drop(chunk: number, keyId: number): void
  /** Sends what the calls gathered and waits for every write. */
  settle(): Promise<void>
}
