/**
 * The SQL of a run's stored detail: state identities and comments stored once each (state_idents, state_texts), and
 * one run_details row per run. Everything runs on the Queryable it is handed.
 */
import { sql, limitOf } from '../../db/sql'
import { jsonRows } from '../../db/json-rows'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { runDetails, runs, stateIdents, stateTexts } from '../../db/schema'

/** A state identity as read back. */
export type IdentRow = Pick<Row<typeof stateIdents>, 'id' | 'key' | 'sls' | 'state_id' | 'function' | 'name'>
/** A run's detail as read back (states packed; see detail.ts). */
export type DetailRow = { states: Uint8Array | null } & Pick<Row<typeof runDetails>, 'changes' | 'errors'>

/** The id of a state identity, inserted when new. */
export async function identIdOf(q: Queryable, s: Omit<IdentRow, 'id'>): Promise<number> {
  return (await q.row<{ id: number }>(sql`INSERT INTO ${stateIdents} (key, sls, state_id, function, name) VALUES (${s.key}, ${s.sls}, ${s.state_id}, ${s.function}, ${s.name})
    ON CONFLICT (key, sls) DO UPDATE SET key = excluded.key RETURNING id`))!.id
}

/**
 * PostgreSQL only: the ids of many distinct state identities, inserted when new, in one statement (the list travels as
 * one JSON parameter, so a 20,000-state run is one round trip and one short statement text; bound as text, since
 * Bun.sql would encode a string bound as jsonb once more, as a JSON string).
 */
export function identIdsOfPg(q: Queryable, list: Omit<IdentRow, 'id'>[]): Promise<Pick<IdentRow, 'id' | 'key' | 'sls'>[]> {
  return q.rows(sql`INSERT INTO ${stateIdents} (key, sls, state_id, function, name)
    SELECT key, sls, state_id, function, name FROM jsonb_to_recordset(${jsonRows(list)}::text::jsonb) AS x(key text, sls text, state_id text, function text, name text)
    ON CONFLICT (key, sls) DO UPDATE SET key = excluded.key RETURNING id, key, sls`)
}

/** PostgreSQL only: the ids of many distinct comments, inserted when new, in one statement (one JSON parameter). */
export function textIdsOfPg(q: Queryable, texts: string[]): Promise<Pick<Row<typeof stateTexts>, 'id' | 'text'>[]> {
  return q.rows(sql`INSERT INTO ${stateTexts} (text) SELECT t FROM jsonb_array_elements_text(${jsonRows(texts)}::text::jsonb) AS x(t)
    ON CONFLICT (text) DO UPDATE SET text = excluded.text RETURNING id, text`)
}

/** The id of a comment, inserted when new. */
export async function textIdOf(q: Queryable, text: string): Promise<number> {
  return (await q.row<{ id: number }>(sql`INSERT INTO ${stateTexts} (text) VALUES (${text}) ON CONFLICT (text) DO UPDATE SET text = excluded.text RETURNING id`))!.id
}

/** Stores (or replaces) a run's detail. */
export function putDetail(q: Queryable, runId: string, minionId: string, d: DetailRow): Promise<number> {
  return q.exec(sql`INSERT INTO ${runDetails} (run_id, minion_id, states, changes, errors) VALUES (${runId}, ${minionId}, ${d.states}, ${d.changes}, ${d.errors})
    ON CONFLICT (run_id) DO UPDATE SET minion_id = excluded.minion_id, states = excluded.states, changes = excluded.changes, errors = excluded.errors`)
}

/** Drops the detail of a minion's runs past its newest `keep`. */
export function pruneDetails(q: Queryable, minionId: string, keep: number): Promise<number> {
  return q.exec(sql`DELETE FROM ${runDetails} WHERE ${runDetails.minionId} = ${minionId} AND ${runDetails.runId} NOT IN
    (SELECT ${runs.id} FROM ${runs} WHERE ${runs.minionId} = ${minionId} ORDER BY ${runs.completedAt} DESC, ${runs.jid} DESC LIMIT ${limitOf(keep)})`)
}

/** A run's detail row. */
export function detailOf(q: Queryable, runId: string): Promise<DetailRow | undefined> {
  return q.row(sql`SELECT ${runDetails.states}, ${runDetails.changes}, ${runDetails.errors} FROM ${runDetails} WHERE ${runDetails.runId} = ${runId}`)
}

/** The ids as an SQL list: integers read from a packed blob, written out (one statement text per size, as before). */
const idList = (ids: Set<number>) => sql.raw([...ids].map((n) => String(Math.trunc(n))).join(',') || '0')

/** These state identities. */
export function identsIn(q: Queryable, ids: Set<number>): Promise<IdentRow[]> {
  return q.rows(sql`SELECT ${stateIdents.id}, ${stateIdents.key}, ${stateIdents.sls}, ${stateIdents.stateId}, ${stateIdents.function}, ${stateIdents.name}
    FROM ${stateIdents} WHERE ${stateIdents.id} IN (${idList(ids)})`)
}

/** These comments. */
export function textsIn(q: Queryable, ids: Set<number>): Promise<Pick<Row<typeof stateTexts>, 'id' | 'text'>[]> {
  return q.rows(sql`SELECT ${stateTexts.id}, ${stateTexts.text} FROM ${stateTexts} WHERE ${stateTexts.id} IN (${idList(ids)})`)
}
