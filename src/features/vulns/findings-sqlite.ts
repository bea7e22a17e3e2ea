/**
 * The matcher's and the minion counts' reads and writes on SQLite: each a prepared statement of findings-store.ts run
 * at once, synchronously (bun:sqlite answers in microseconds, so reading a batch up front or buffering writes would
 * only add work), prepared once per connection.
 */
import type { Queryable } from '../../db/engine'
import { perHandle } from '../../db/per-handle'
import type { ChangeIo, MatchIo, MinionSet, TallyIo } from './findings-io'
import { dropKeyMatches, ecosystemGrains, matchStatements, setOfMinion, minionChangeWrites, storedEcosystem, tallyWrites, type EcosystemGrains, type MatchedKey, type StoredEntry } from './findings-store'

const done = () => Promise.resolve()

/** Matching keys through prepared statements; it knows at once whether a drop removed rows. */
export const sqliteMatchIo = perHandle((q: Queryable): MatchIo => {
  const s = matchStatements(q)
  return {
    key: (id) => s.key.get<MatchedKey>(id) as MatchedKey | undefined,
    entries: (pkg) => s.entries.all<StoredEntry>(pkg) as StoredEntry[],
    severity: (v) => (s.rank.get<{ severity: string }>(v) as { severity: string } | undefined)?.severity,
    drop: (id, ecos) => {
      if (!ecos) return (s.drop.run(id) as number) > 0
      let gone = false
      for (const e of ecos) if ((s.dropIn.run(id, e) as number) > 0) gone = true
      return gone
    },
    add: (e, k, v, p, f) => void s.add.write(e, k, v, p, f),
    finish: () => Promise.resolve(false),
  }
})

/** Minions' changes through prepared statements. */
export const sqliteChangeIo = perHandle((q: Queryable): ChangeIo => {
  const w = minionChangeWrites(q)
  const stored = storedEcosystem(q)
  const grains = ecosystemGrains(q)
  return {
    stored: (num) => stored.get<{ e: string | null }>(num) as { e: string | null } | undefined,
    grains: (id) => grains.get<EcosystemGrains>(id) as EcosystemGrains | undefined,
    bump: (v, d) => void w.bump.write(v, d),
    summary: (n, m, e, c, wst) => void w.summary.write(n, m, e, c, wst),
    finish: done,
  }
})

/** A tally's writes through prepared statements. */
export const sqliteTallyIo = perHandle((q: Queryable): TallyIo => {
  const w = tallyWrites(q)
  return {
    minion: (n, c, wst) => void w.minion.write(n, c, wst),
    clear: () => void w.clear.write(),
    count: (v, n) => void w.count.write(v, n),
    finish: done,
  }
})

/** The sets of `minionIds` that exist, in that order. */
export function sqliteSetsOf(q: Queryable, minionIds: string[]): MinionSet[] {
  const one = setOfMinion(q)
  const out: MinionSet[] = []
  for (const minionId of minionIds) {
    const r = one.get<{ num: number; keys: Uint8Array }>(minionId) as { num: number; keys: Uint8Array } | undefined
    if (r) out.push({ num: r.num, minionId, keys: r.keys })
  }
  return out
}

/** Drops every match of the keys `ids`; rows removed. */
export function sqliteDropKeys(q: Queryable, ids: number[]): number {
  const drop = dropKeyMatches(q)
  let n = 0
  for (const id of ids) n += drop.run(id) as number
  return n
}
