/**
 * The real salt-api captures the tests read (Salt 3006.10, rest_cherrypy): byte-identical copies, in test/fixtures/salt-3006,
 * of the spec's fixtures/salt-3006 files that some test uses (that folder's README says how they were recorded).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const SALT_FIXTURES = join(import.meta.dir, '..', 'fixtures', 'salt-3006')

/** A fixture file as text (events.sse is the raw /events stream). */
export const fixtureText = (name: string) => readFileSync(join(SALT_FIXTURES, name), 'utf8')

/** A `*.json` capture: the lowstate sent, the HTTP status and the answer's body. */
export const fixture = (name: string) => JSON.parse(fixtureText(name)) as { request: any; status: number; response: any }

/** The per-minion map of a `local` client answer. */
export const returnsOf = <V = unknown>(name: string) => fixture(name).response.return[0] as Record<string, V>
