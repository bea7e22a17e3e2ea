/**
 * What the matcher and the minion counts read and write, per engine. The logic (findings.ts, watch.ts) runs as one
 * synchronous loop over what these answer: on SQLite each read and write is a prepared statement run at once
 * (findings-sqlite.ts); on PostgreSQL the reads are fetched for the whole batch beforehand and the writes buffered and
 * sent as a few set-based statements at `finish` (findings-postgres.ts), instead of a round trip per row.
 */
import type { EcosystemGrains, MatchedKey, StoredEntry } from './findings-store'

/** Matching keys: a key, a package's entries, a record's severity; a key's matches dropped, a match added. */
export interface MatchIo {
  key(id: number): MatchedKey | undefined
  entries(pkg: string): StoredEntry[]
  severity(vulnId: string): string | undefined
  /** Drops a key's matches (in `ecosystems`, or all); true when it knows now that rows went (SQLite). */
  drop(id: number, ecosystems: Set<string> | null): boolean
  add(ecosystem: string, keyId: number, vulnId: string, pkg: string, fixed: string | null): void
  /** Sends what was buffered; true when buffered drops removed rows. */
  finish(): Promise<boolean>
}

/** Minions' changes: the ecosystem each was counted under and its grains; a record's count moved, a summary written. */
export interface ChangeIo {
  /** The ecosystem a minion's findings were counted under; undefined when never counted. */
  stored(num: number): { e: string | null } | undefined
  grains(minionId: string): EcosystemGrains | undefined
  bump(vulnId: string, delta: number): void
  summary(num: number, minionId: string, ecosystem: string | null, count: number, worst: number): void
  /** Sends what was buffered. */
  finish(): Promise<void>
}

/** A tally's writes: a minion's summary, every count cleared then the counted ones set. */
export interface TallyIo {
  minion(num: number, count: number, worst: number): void
  clear(): void
  count(vulnId: string, n: number): void
  finish(): Promise<void>
}

/** A minion's stored set: its number, its id and its key ids (encoded). */
export interface MinionSet {
  num: number
  minionId: string
  keys: Uint8Array
}
