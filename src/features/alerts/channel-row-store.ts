/** The SQL of alert channels (alert_channels); channel-store.ts keeps what a channel means (secrets, masking, the channel API). */
import { sql } from '../../db/sql'
import type { Queryable } from '../../db/engine'
import type { Row } from '../../db/row'
import { alertChannels } from '../../db/schema'

/** A channel as stored (secrets inside `config` encrypted). */
export type ChannelRow = Row<typeof alertChannels>

/** One channel, or undefined. */
export const channelById = (q: Queryable, id: string) => q.row<ChannelRow>(sql`SELECT * FROM ${alertChannels} WHERE ${alertChannels.id} = ${id}`)

/** Every channel, by name. */
export const allChannels = (q: Queryable) => q.rows<ChannelRow>(sql`SELECT * FROM ${alertChannels} ORDER BY ${alertChannels.name}, ${alertChannels.id}`)

/** Stores a new channel. */
export async function insertChannel(q: Queryable, c: ChannelRow) {
  await q.exec(sql`INSERT INTO ${alertChannels} (id, name, type, config, enabled, created_at, updated_at)
    VALUES (${c.id}, ${c.name}, ${c.type}, ${c.config}, ${c.enabled}, ${c.created_at}, ${c.updated_at})`)
}

/** Writes a channel's changeable fields (its type and creation time stay). */
export async function updateChannelRow(q: Queryable, c: Pick<ChannelRow, 'id' | 'name' | 'config' | 'enabled' | 'updated_at'>) {
  await q.exec(sql`UPDATE ${alertChannels} SET name = ${c.name}, config = ${c.config}, enabled = ${c.enabled}, updated_at = ${c.updated_at} WHERE id = ${c.id}`)
}

/** Deletes a channel. */
export async function deleteChannelRow(q: Queryable, id: string) {
  await q.exec(sql`DELETE FROM ${alertChannels} WHERE ${alertChannels.id} = ${id}`)
}

/** The ids among these that name a channel. */
export async function knownChannelIds(q: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (!ids.length) return new Set()
  const rows = await q.rows<Pick<ChannelRow, 'id'>>(sql`SELECT ${alertChannels.id} FROM ${alertChannels} WHERE ${alertChannels.id} IN ${[...ids]}`)
  return new Set(rows.map((r) => r.id))
}

/** The ids among these that name an enabled channel. */
export async function enabledChannelIds(q: Queryable, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return []
  const rows = await q.rows<Pick<ChannelRow, 'id'>>(sql`SELECT ${alertChannels.id} FROM ${alertChannels} WHERE ${alertChannels.enabled} = 1 AND ${alertChannels.id} IN ${[...ids]}`)
  return rows.map((r) => r.id)
}

/** What the sender needs of a channel, or undefined when it is gone. */
export const channelToSend = (q: Queryable, id: string) =>
  q.row<Pick<ChannelRow, 'type' | 'config' | 'enabled'>>(sql`SELECT ${alertChannels.type}, ${alertChannels.config}, ${alertChannels.enabled} FROM ${alertChannels} WHERE ${alertChannels.id} = ${id}`)
