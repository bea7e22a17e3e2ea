/** SQL of the settings feature: one JSON document per section, and the `meta` row whose updated_at is the last change. */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { settings } from '../../db/schema'

/** A stored section. */
export type SettingsRow = Row<typeof settings>

/** Every stored section (meta included). */
export const allSections = (q: Queryable) => q.rows<SettingsRow>(sql`SELECT * FROM ${settings}`)

/** One stored section, or undefined. */
export const sectionRow = (q: Queryable, section: string) => q.row<SettingsRow>(sql`SELECT * FROM ${settings} WHERE ${settings.section} = ${section}`)

/** Writes a section's JSON document and moves the meta row's updated_at. */
export async function writeSection(q: Queryable, section: string, value: string, now: number) {
  await q.exec(sql`INSERT INTO ${settings} (section, value, updated_at) VALUES (${section}, ${value}, ${now})
    ON CONFLICT (section) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`)
  await q.exec(sql`INSERT INTO ${settings} (section, value, updated_at) VALUES ('meta', '{}', ${now})
    ON CONFLICT (section) DO UPDATE SET updated_at = excluded.updated_at`)
}

/** Writes a row only when none is stored under `section` yet (no change of the meta row: nothing an operator set). */
export async function insertSectionOnce(q: Queryable, section: string, value: string, now: number) {
  await q.exec(sql`INSERT INTO ${settings} (section, value, updated_at) VALUES (${section}, ${value}, ${now}) ON CONFLICT (section) DO NOTHING`)
}
