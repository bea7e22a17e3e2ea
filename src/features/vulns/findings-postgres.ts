/**
 * The matcher's and the minion counts' reads and writes on PostgreSQL, set-based: a round trip per key, package or
 * minion (as SQLite's prepared statements do, at no cost there) made a flush or an import wait on the network once
 * per row. Reads fetch the whole batch's rows up front; writes are buffered and sent as a few statements, each row set
 * passed as one JSON parameter expanded by jsonb_to_recordset: the text stays the same whatever the row count (one
 * prepared statement, no 65,535-parameter limit, nothing to render per row), and rows go in fixed chunks of CHUNK.
 */
import { sql } from '../../db/sql'
import { jsonRows } from '../../db/json-rows'
import type { Queryable } from '../../db/engine'
import { minionPackageSets as sets, minions, packageKeys as keys, vulnAffected as affected, vulnMatches as matches, vulnMinions as vm, vulnRecords as records } from '../../db/schema'
import { setNum } from '../inventory/holder-store'
import type { ChangeIo, MatchIo, MinionSet, TallyIo } from './findings-io'
import type { EcosystemGrains, MatchedKey, StoredEntry } from './findings-store'

/** Rows per statement (and ids per read): bounds one statement's JSON text to a few MB. */
export const CHUNK = 5000

/** Runs `run` over `items` in chunks of CHUNK, each as JSON text (a NUL as U+FFFD: db/json-rows.ts); resolves to the sum of what the runs answer. */
export async function chunked<T>(items: T[], run: (json: string) => Promise<number | void>): Promise<number> {
  let n = 0
  for (let i = 0; i < items.length; i += CHUNK) n += (await run(jsonRows(items.slice(i, i + CHUNK)))) || 0
  return n
}

/** Rows of `read` over chunks of `ids`, concatenated. */
async function readChunked<I, R>(ids: I[], read: (json: string) => Promise<R[]>): Promise<R[]> {
  const out: R[] = []
  for (let i = 0; i < ids.length; i += CHUNK) for (const r of await read(jsonRows(ids.slice(i, i + CHUNK)))) out.push(r)
  return out
}

/** Matching `keyIds`: their keys, their packages' entries and (`withSeverity`) the entries' severities read now. */
export async function postgresMatchIo(q: Queryable, keyIds: number[], withSeverity: boolean): Promise<MatchIo> {
  const keyRows = await readChunked(keyIds, (json) => q.rows<MatchedKey & { id: number }>(
    sql`SELECT ${keys.id}, ${keys.name}, ${keys.version}, ${keys.sourceName} FROM ${keys} WHERE ${keys.id} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb)::bigint)`,
  ))
  const byId = new Map(keyRows.map((k) => [k.id, k]))
  const pkgs = [...new Set(keyRows.map((k) => k.source_name || k.name))]
  const entryRows = await readChunked(pkgs, (json) => q.rows<StoredEntry & { package: string }>(
    sql`SELECT ${affected.package}, ${affected.ecosystem}, ${affected.vulnId}, ${affected.ranges}, ${affected.versions} FROM ${affected}
      WHERE ${affected.package} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`,
  ))
  const byPkg = new Map<string, StoredEntry[]>()
  for (const e of entryRows) {
    const list = byPkg.get(e.package)
    if (list) list.push(e)
    else byPkg.set(e.package, [e])
  }
  const severity = new Map<string, string>()
  if (withSeverity) {
    const vulns = [...new Set(entryRows.map((e) => e.vuln_id))]
    for (const r of await readChunked(vulns, (json) => q.rows<{ id: string; severity: string }>(
      sql`SELECT ${records.id}, ${records.severity} FROM ${records} WHERE ${records.id} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`,
    ))) severity.set(r.id, r.severity)
  }
  const dropAll: number[] = []
  const dropIn: number[] = []
  let dropEcos: Set<string> | null = null
  const adds: { e: string; k: number; v: string; p: string; f: string | null }[] = []
  return {
    key: (id) => byId.get(id),
    entries: (pkg) => byPkg.get(pkg) ?? [],
    severity: (v) => severity.get(v),
    drop: (id, ecos) => {
      if (!ecos) dropAll.push(id)
      else (dropEcos = ecos), dropIn.push(id)
      return false
    },
    add: (e, k, v, p, f) => void adds.push({ e, k, v, p, f }),
    finish: async () => {
      // Drops before adds: a key's matches are made anew.
      let dropped = await chunked(dropAll, (json) => q.exec(sql`DELETE FROM ${matches} WHERE ${matches.keyId} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb)::bigint)`))
      const ecoJson = jsonRows([...(dropEcos ?? [])])
      dropped += await chunked(dropIn, (json) => q.exec(sql`DELETE FROM ${matches} WHERE ${matches.keyId} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb)::bigint)
        AND ${matches.ecosystem} IN (SELECT jsonb_array_elements_text(${ecoJson}::text::jsonb))`))
      await chunked(adds, (json) => q.exec(sql`INSERT INTO ${matches} (ecosystem, key_id, vuln_id, package, fixed)
        SELECT x.e, x.k, x.v, x.p, x.f FROM jsonb_to_recordset(${json}::text::jsonb) AS x(e text, k bigint, v text, p text, f text)
        ON CONFLICT (ecosystem, key_id, vuln_id) DO UPDATE SET package = excluded.package, fixed = excluded.fixed`))
      return dropped > 0
    },
  }
}

/** Minions' changes for `changes`: their counted ecosystems and grains read now, the counts and summaries buffered. */
export async function postgresChangeIo(q: Queryable, changes: { num: number; minionId: string }[]): Promise<ChangeIo> {
  const stored = new Map<number, { e: string | null }>()
  for (const r of await readChunked(changes.map((c) => c.num), (json) => q.rows<{ num: number; e: string | null }>(
    sql`SELECT ${vm.minionNum} AS num, ${vm.ecosystem} AS e FROM ${vm} WHERE ${vm.minionNum} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb)::bigint)`,
  ))) stored.set(r.num, { e: r.e })
  const grains = new Map<string, EcosystemGrains>()
  for (const r of await readChunked([...new Set(changes.map((c) => c.minionId))], (json) => q.rows<EcosystemGrains & { id: string }>(
    sql`SELECT ${minions.id}, ${minions.os}, ${minions.osrelease}, (${minions.grains}::jsonb ->> 'osmajorrelease') AS major FROM ${minions}
      WHERE ${minions.id} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`,
  ))) grains.set(r.id, r)
  const deltas = new Map<string, number>()
  const summaries = new Map<number, { n: number; m: string; e: string | null; c: number; w: number }>()
  return {
    stored: (num) => stored.get(num),
    grains: (id) => grains.get(id),
    bump: (v, d) => void deltas.set(v, (deltas.get(v) ?? 0) + d),
    // The last summary of a minion wins, as the per-row upserts would leave it (one statement cannot upsert a row twice).
    summary: (n, m, e, c, w) => void summaries.set(n, { n, m, e, c, w }),
    finish: async () => {
      await writeCounts(q, deltas, true)
      await chunked([...summaries.values()], (json) => q.exec(sql`INSERT INTO ${vm} (minion_num, minion_id, ecosystem, vuln_count, worst)
        SELECT x.n, x.m, x.e, x.c, x.w FROM jsonb_to_recordset(${json}::text::jsonb) AS x(n bigint, m text, e text, c bigint, w bigint)
        ON CONFLICT (minion_num) DO UPDATE SET minion_id = excluded.minion_id, ecosystem = excluded.ecosystem, vuln_count = excluded.vuln_count, worst = excluded.worst`))
    },
  }
}

/** Writes records' counts: added to (`relative`) or set to the map's values. */
async function writeCounts(q: Queryable, counts: Map<string, number>, relative: boolean) {
  const rows: { v: string; d: number }[] = []
  for (const [v, d] of counts) if (d || !relative) rows.push({ v, d })
  await chunked(rows, (json) => relative
    ? q.exec(sql`UPDATE ${records} SET minion_count = ${records.minionCount} + x.d FROM jsonb_to_recordset(${json}::text::jsonb) AS x(v text, d bigint) WHERE ${records.id} = x.v`)
    : q.exec(sql`UPDATE ${records} SET minion_count = x.d FROM jsonb_to_recordset(${json}::text::jsonb) AS x(v text, d bigint) WHERE ${records.id} = x.v`))
}

/** A tally's writes, buffered: the summaries, then every count cleared and the counted ones set. */
export function postgresTallyIo(q: Queryable): TallyIo {
  const rows: { n: number; c: number; w: number }[] = []
  const counts = new Map<string, number>()
  let clear = false
  return {
    minion: (n, c, w) => void rows.push({ n, c, w }),
    clear: () => void (clear = true),
    count: (v, n) => void counts.set(v, n),
    finish: async () => {
      await chunked(rows, (json) => q.exec(sql`UPDATE ${vm} SET vuln_count = x.c, worst = x.w FROM jsonb_to_recordset(${json}::text::jsonb) AS x(n bigint, c bigint, w bigint)
        WHERE ${vm.minionNum} = x.n`))
      if (clear) await q.exec(sql`UPDATE ${records} SET minion_count = 0 WHERE ${records.minionCount} <> 0`)
      await writeCounts(q, counts, false)
    },
  }
}

/** The sets of `minionIds` that exist. */
export async function postgresSetsOf(q: Queryable, minionIds: string[]): Promise<MinionSet[]> {
  return readChunked(minionIds, (json) => q.rows<MinionSet>(
    sql`SELECT ${setNum(q)} AS num, ${sets.minionId} AS "minionId", ${sets.keys} FROM ${sets} WHERE ${sets.minionId} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb))`,
  ))
}

/** Drops every match of the keys `ids`; rows removed. */
export async function postgresDropKeys(q: Queryable, ids: number[]): Promise<number> {
  return chunked(ids, (json) => q.exec(sql`DELETE FROM ${matches} WHERE ${matches.keyId} IN (SELECT jsonb_array_elements_text(${json}::text::jsonb)::bigint)`))
}
