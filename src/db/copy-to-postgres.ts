/**
 * Moving an install (`saltdeck migrate-to-postgres`): every table of the schema copied from a SQLite database into an
 * empty, migrated PostgreSQL database in one PostgreSQL transaction, parents before children, rows streamed from SQLite
 * in batches, identity sequences moved past the copied ids, and each table's count compared before the commit. Secrets
 * are copied as they are stored (encrypted with `secret.key`): the same key reads them on PostgreSQL.
 */
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { is } from 'drizzle-orm'
import type { Queryable } from './engine'
import * as schema from './schema'
import { identityColumns } from './schema-pg'

/** One table's outcome: rows in SQLite, rows in PostgreSQL after the copy. */
export interface TableCopy {
  table: string
  source: number
  copied: number
}

/** The copy found a non-empty target, or counts that differ; nothing was committed. */
export class CopyError extends Error {}

/** PostgreSQL takes at most 65,535 parameters per statement; batches stay well under it. */
const PARAMS_PER_STATEMENT = 30_000

/**
 * PostgreSQL-only columns that hold a SQLite table's rowid (schema-pg.ts PG_ONLY_COLUMNS): a minion's number is its
 * package-set row's rowid, which the holder index's bits and vuln_minions refer to, so it is copied, not renumbered.
 */
const ROWID_COLUMN: Record<string, string> = { minion_package_sets: 'num' }
/** The rowid's name in the copy's SELECT, apart from every column's. */
const ROWID_NAME = '__saltdeck_rowid'

/** The schema's tables, parents before the tables whose foreign keys point at them. */
export function tablesInCopyOrder(): SQLiteTable[] {
  const tables = (Object.values(schema) as unknown[]).filter((t): t is SQLiteTable => is(t, SQLiteTable))
  const name = (t: SQLiteTable) => getTableConfig(t).name
  const byName = new Map(tables.map((t) => [name(t), t]))
  const done = new Set<string>()
  const out: SQLiteTable[] = []
  const visit = (t: SQLiteTable, path: Set<string>) => {
    const n = name(t)
    if (done.has(n) || path.has(n)) return
    path.add(n)
    for (const fk of getTableConfig(t).foreignKeys) {
      const parent = getTableConfig(fk.reference().foreignTable).name
      if (parent !== n) visit(byName.get(parent)!, path)
    }
    done.add(n)
    out.push(t)
  }
  for (const t of tables) visit(t, new Set())
  return out
}

const quote = (id: string) => `"${id.replaceAll('"', '""')}"`

/** Copies every table from `src` into the PostgreSQL database `pg` (already migrated); throws CopyError when it may not. */
export async function copyToPostgres(from: Queryable, to: Queryable, progress: (table: string, rows: number) => void = () => {}): Promise<TableCopy[]> {
  if (from.native.engine !== 'sqlite' || to.native.engine !== 'postgres') throw new CopyError('the copy goes from SQLite to PostgreSQL')
  const src = from.native.client
  const pg = to.native.client
  const tables = tablesInCopyOrder()
  const users = await pg.unsafe('SELECT count(*)::int AS n FROM users')
  if (users[0]!.n > 0) throw new CopyError('the PostgreSQL database already holds users: migrate-to-postgres copies into an empty database only')
  return pg.begin(async (tx) => {
    // Rows the migrations seeded (counters, the auth version) give way to the copied ones.
    for (const t of [...tables].reverse()) await tx.unsafe(`DELETE FROM ${quote(getTableConfig(t).name)}`)
    const result: TableCopy[] = []
    for (const t of tables) {
      const cfg = getTableConfig(t)
      const rowidAs = ROWID_COLUMN[cfg.name]
      const cols = cfg.columns.map((c) => c.name)
      // Read back by name, in the INSERT's column order; the rowid under a name no column has.
      const names = rowidAs ? [...cols, ROWID_NAME] : [...cols]
      const read = cols.map(quote).concat(rowidAs ? [`rowid AS ${ROWID_NAME}`] : [])
      if (rowidAs) cols.push(rowidAs)
      const source = (src.query(`SELECT count(*) AS n FROM ${quote(cfg.name)}`).get() as { n: number }).n
      const perBatch = Math.max(1, Math.floor(PARAMS_PER_STATEMENT / cols.length))
      const head = `INSERT INTO ${quote(cfg.name)} (${cols.map(quote).join(', ')}) OVERRIDING SYSTEM VALUE VALUES `
      const statementFor = new Map<number, string>()
      const insert = async (batch: unknown[][]) => {
        let text = statementFor.get(batch.length)
        if (!text) {
          const tuples = batch.map((_, r) => `(${cols.map((_, c) => `$${r * cols.length + c + 1}`).join(', ')})`)
          text = head + tuples.join(', ')
          statementFor.set(batch.length, text)
        }
        await tx.unsafe(text, batch.flat())
      }
      let batch: unknown[][] = []
      let copied = 0
      const flush = async () => {
        await insert(batch)
        copied += batch.length
        progress(cfg.name, copied)
        batch = []
      }
      // Row by row: a table is never held whole (2,000,000 events took the copy past a gigabyte when it was).
      for (const row of src.query(`SELECT ${read.join(', ')} FROM ${quote(cfg.name)}`).iterate() as IterableIterator<Record<string, unknown>>) {
        batch.push(names.map((n) => row[n]))
        if (batch.length === perBatch) await flush()
      }
      if (batch.length) await flush()
      // Identity columns (and the number PostgreSQL keeps where SQLite has the rowid) continue after the highest copied
      // value: an insert with an explicit value does not move their sequences.
      for (const c of [...identityColumns(t), ...(rowidAs ? [rowidAs] : [])]) {
        await tx.unsafe(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${quote(c)}) FROM ${quote(cfg.name)}), 0) + 1, false)`, [cfg.name, c])
      }
      const after = (await tx.unsafe(`SELECT count(*)::bigint AS n FROM ${quote(cfg.name)}`))[0]!.n
      result.push({ table: cfg.name, source, copied: Number(after) })
    }
    const wrong = result.filter((r) => r.source !== r.copied)
    if (wrong.length) throw new CopyError(`counts differ after the copy: ${wrong.map((r) => `${r.table} ${r.source} → ${r.copied}`).join(', ')}`)
    return result
  }) as Promise<TableCopy[]>
}
