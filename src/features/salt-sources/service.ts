/**
 * The salt sources (contract §15 "Several masters"): `default` is the settings' salt section, read and written through
 * the settings service unchanged; every other source is a row of `salt_sources` holding the same document, merged by
 * the same rule (settings/service.ts `mergeSalt`: the password encrypted, and forgotten when the URL moves without one).
 */
import type { AppDeps } from '../../deps'
import { Conflict, NotFound } from '../../lib/errors'
import { iso } from '../../lib/clock'
import { credentialsOf, mergeSalt, readSettings, saltOut, updateSection } from '../settings/service'
import { forgetMinionSource } from '../minions/service'
import { DEFAULT_SOURCE } from './schema'
import { allSourceRows, insertSource, removeSource, sourceRow, writeSource, type SaltSourceRow } from './store'

type Dict = Record<string, unknown>

const notFound = () => new NotFound('Salt source')

/** A stored row as answered. */
const outOfRow = (r: SaltSourceRow) => ({ name: r.name, ...saltOut(JSON.parse(r.value) as Dict), updated_at: iso(r.updated_at) })

/** The `default` source as answered: the settings' salt section and the settings' last change. */
async function defaultOut(deps: AppDeps) {
  const s = await readSettings(deps)
  return { name: DEFAULT_SOURCE, ...s.salt, updated_at: s.updated_at }
}

/** Every source: `default` first, then the others by name. */
export async function listSources(deps: AppDeps) {
  const rows = await allSourceRows(deps.db)
  return { sources: [await defaultOut(deps), ...rows.map(outOfRow)] }
}

/** The names of every source, `default` first. */
export async function sourceNames(deps: AppDeps) {
  return [DEFAULT_SOURCE, ...(await allSourceRows(deps.db)).map((r) => r.name)]
}

/** One source; NotFound when there is none of that name. */
export async function getSource(deps: AppDeps, name: string) {
  if (name === DEFAULT_SOURCE) return defaultOut(deps)
  const r = await sourceRow(deps.db, name)
  if (!r) throw notFound()
  return outOfRow(r)
}

/** Adds a source; Conflict when the name is taken (`default` always is). */
export async function createSource(deps: AppDeps, name: string, fields: Dict) {
  const taken = () => new Conflict('Salt source name already exists')
  if (name === DEFAULT_SOURCE) throw taken()
  const value = JSON.stringify(mergeSalt(deps.secretKey, {}, fields))
  if (!(await insertSource(deps.db, name, value, deps.clock.now()))) throw taken()
  sourceChanged(deps, name)
  return getSource(deps, name)
}

/** A partial update of a source (absent or null fields stay); `default` goes through the settings' salt section. */
export async function updateSource(deps: AppDeps, name: string, patch: Dict) {
  if (name === DEFAULT_SOURCE) {
    // The settings service notifies its own change hook (onSettingsChanged 'salt'): the default source's salt side follows it.
    await updateSection(deps, 'salt', patch)
    return defaultOut(deps)
  }
  const found = await deps.db.tx(async (tx) => {
    const r = await sourceRow(tx, name)
    if (!r) return false
    await writeSource(tx, name, JSON.stringify(mergeSalt(deps.secretKey, JSON.parse(r.value) as Dict, patch)), deps.clock.now())
    return true
  })
  if (!found) throw notFound()
  sourceChanged(deps, name)
  return getSource(deps, name)
}

/**
 * Deletes a source; `default` cannot be deleted (Conflict). The jobs, runs and events it recorded keep its name; its
 * minions are no longer seen through it, so the other sources' key and presence lists speak for them again.
 */
export async function deleteSource(deps: AppDeps, name: string) {
  if (name === DEFAULT_SOURCE) throw new Conflict('Cannot delete the default salt source')
  if (!(await removeSource(deps.db, name))) throw notFound()
  await forgetMinionSource(deps, name)
  sourceChanged(deps, name)
}

/** A source's connection with its password decrypted, for that source's salt client only; null when the source is gone. */
export async function sourceCredentials(deps: AppDeps, name: string) {
  const r = await sourceRow(deps.db, name)
  return r ? credentialsOf(deps, JSON.parse(r.value) as Dict, name) : null
}

/** Tells this instance's registry, and every other instance's through the bus, that source `name` changed. */
function sourceChanged(deps: AppDeps, name: string) {
  deps.onSaltSourceChanged?.(name)
  deps.bus?.publish('salt-source', name)
}
