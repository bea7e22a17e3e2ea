/** Vulnerability routes (contract §12): the fleet list, one record, one minion's findings, the feeds and their import. */
import { Type as T } from '@sinclair/typebox'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { route } from '../../http/route'
import { OneOf, paging } from '../../http/schemas'
import { AppError, ValidationFailed, valueErrorEntry } from '../../http/errors'
import { FeedError, MAX_RECORD_BYTES, readRecords } from './osv-read'
import { importFeed } from './feeds'
import { makeStagingDir } from './staging'
import { getVuln, listFeeds, listVulns, minionVulns, SEVERITIES, VULN_SORTS } from './service'
import { FeedListOut, ImportOut, MinionVulnsOut, VulnDetailOut, VulnListOut } from './schema'

const view = { verb: 'view', resource: 'vuln:*' }
const manage = { verb: 'manage', resource: 'vuln:*' }

/** The largest feed a request may carry (contract §12). */
const MAX_UPLOAD = 512 * 1024 * 1024
/** A JSON body is parsed whole, so it is held to the size of one JSON text of a feed; larger feeds come as a zip. */
const MAX_JSON_UPLOAD = MAX_RECORD_BYTES

/** Streams a request body to a file under `dir`, stopping with 413 past `max` bytes. */
async function saveBody(request: Request, path: string, max: number) {
  const out = Bun.file(path).writer()
  let size = 0
  try {
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength
      if (size > max) throw new AppError(413, 'Request body too large')
      out.write(chunk)
    }
  } finally {
    await out.end()
  }
  if (!size) throw new ValidationFailed([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])
}

export const vulnRoutes = [
  route({
    method: 'GET', path: '/api/vulns', tag: 'vulns', summary: 'Vulnerabilities affecting the fleet, worst first (sort=severity|minions|id)', access: view,
    query: T.Object({
      q: T.Optional(T.String({ maxLength: 200 })), severity: T.Optional(OneOf(SEVERITIES)), package: T.Optional(T.String({ minLength: 1, maxLength: 512 })),
      include_unaffected: T.Optional(T.Boolean()), sort: T.Optional(OneOf(VULN_SORTS)), ...paging(500, 100),
    }),
    response: VulnListOut,
    handler: ({ deps, query }) => listVulns(deps, query),
    csv: {
      filename: 'vulnerabilities.csv', header: ['id', 'aliases', 'severity', 'summary', 'packages', 'minion_count', 'fixed_versions'],
      page: async ({ deps, query }, offset, limit) => (await listVulns(deps, { ...query, offset, limit })).vulns.map((v) => [v.id, v.aliases, v.severity, v.summary, v.packages, v.minion_count, v.fixed_versions]),
    },
  }),
  route({
    method: 'GET', path: '/api/vulns/feeds', tag: 'vulns', summary: 'The imported feeds, by ecosystem', access: view,
    response: FeedListOut,
    handler: ({ deps }) => listFeeds(deps),
  }),
  route({
    method: 'POST', path: '/api/vulns/import', tag: 'vulns', summary: 'Import an OSV feed (an all.zip, or a JSON array of records)', access: manage,
    upload: ['application/zip', 'application/json'], errors: [409, 413, 415],
    response: ImportOut,
    async handler({ deps, request }) {
      const zip = (request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/zip')
      // The body and the staging database go in one directory, removed whatever happens (and at the next start after a crash).
      const dir = makeStagingDir(deps.config.dataDir)
      try {
        const file = join(dir, zip ? 'feed.zip' : 'feed.json')
        await saveBody(request, file, zip ? MAX_UPLOAD : MAX_JSON_UPLOAD)
        // Errors name "the body", never the staging path.
        return await importFeed(deps, readRecords([{ path: file, name: 'the body' }]), zip ? 'upload (zip)' : 'upload (json)', dir)
      } catch (e) {
        if (e instanceof FeedError) throw new ValidationFailed([valueErrorEntry(['body'], e.message.replaceAll(dir, 'the staging directory'))])
        throw e
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    audit: { action: 'vuln.import', failures: true, target: () => 'feeds', detail: (_c, r) => (r ? `${r.records} records: ${r.feeds.map((f) => f.ecosystem).join(', ')}` : null) },
  }),
  route({
    method: 'GET', path: '/api/vulns/:id', tag: 'vulns', summary: 'One vulnerability with the minions it affects', access: view, errors: [404], response: VulnDetailOut,
    params: T.Object({ id: T.String({ minLength: 1, maxLength: 200 }) }), query: T.Object({ ...paging(5000, 500) }),
    handler: ({ deps, params, query }) => getVuln(deps, params.id, query),
    csv: {
      filename: 'vulnerability-minions.csv', header: ['vuln_id', 'minion_id', 'package', 'installed', 'fixed'],
      page: async ({ deps, params }, offset, limit) => (await getVuln(deps, params.id, { offset, limit })).minions.map((m) => [params.id, m.minion_id, m.package, m.installed, m.fixed]),
    },
  }),
  route({
    method: 'GET', path: '/api/minions/:minion_id/vulns', tag: 'vulns', summary: "One minion's vulnerabilities, worst first", access: view, errors: [404],
    params: T.Object({ minion_id: T.String({ minLength: 1, maxLength: 255 }) }), query: T.Object({ severity: T.Optional(OneOf(SEVERITIES)), ...paging(1000, 200) }),
    response: MinionVulnsOut,
    handler: ({ deps, params, query }) => minionVulns(deps, params.minion_id, query),
  }),
]
