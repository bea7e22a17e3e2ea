// Issue 20 item 4 and part of 12: what an OSV import may inflate to (per entry, per import, the ratio), refused with a
// 422 before anything is inflated; no staging files left by a refused upload; errors name the file, never the
// server's staging path. The zips are real, written by test/helpers/zip.ts with Bun's zlib.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { testWorld } from '../helpers/app'
import { deflate, zipBytes } from '../helpers/zip'
import { sql } from '../../src/db/sql'
import { vulnRecords } from '../../src/db/schema'

const MiB = 1024 * 1024

async function world() {
  const dataDir = mkdtempSync(join(tmpdir(), 'vuln-bounds-'))
  return { ...(await testWorld({ dataDir })), dataDir }
}
type World = Awaited<ReturnType<typeof world>>

const postZip = async (w: World, body: Uint8Array) => {
  const res = await w.app.handle(new Request('http://localhost/api/vulns/import', {
    method: 'POST', headers: { authorization: `Bearer ${w.tokens.admin}`, 'content-type': 'application/zip' }, body,
  }))
  return { status: res.status, body: (await res.json()) as { detail: { type: string; loc: string[]; msg: string }[] } }
}
const staging = (w: World) => readdirSync(w.dataDir).filter((n) => n.startsWith('.vuln-import-'))
const feeds = async (w: World) => (await w.deps.db.row<{ n: number }>(sql`SELECT count(*) AS n FROM ${vulnRecords}`))!.n

/** A Debian record padded to `size` bytes of JSON with `pad` (its details, which the import cuts to 20,000 characters). */
function record(id: string, size: number, pad: (n: number) => string = (n) => 'a'.repeat(n)): string {
  const head = JSON.stringify({ id, affected: [{ package: { ecosystem: 'Debian:12', name: 'openssl' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }] }] }], details: '' })
  return head.slice(0, -2) + pad(size - head.length) + '"}'
}
/** Hex digits that deflate about 2 to 1: mixed into a record, they hold its ratio down. */
const hex = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(Math.ceil(n / 2)))).toString('hex').slice(0, n)

describe('OSV import bounds', () => {
  test('the zip bomb of issue 20 (100 records of 16 MiB in 1.6 MB), and one of 8 MiB records at 1000:1, are refused with 422; nothing is staged or left behind', async () => {
    const w = await world()
    const bomb = deflate(record('BOMB-1', 16 * MiB))
    const body = zipBytes(Array.from({ length: 100 }, (_, i) => ({ name: `BOMB-${i}.json`, deflated: bomb })))
    expect(body.byteLength).toBeLessThan(2 * MiB)
    const r = await postZip(w, body)
    expect(r.status).toBe(422)
    expect(r.body.detail[0]).toMatchObject({ type: 'value_error', loc: ['body'] })
    expect(r.body.detail[0]!.msg).toBe('Value error, the body:BOMB-0.json: inflates to more than 8 MiB')
    // Records within the size bound, but at a ratio no feed has: refused by the ratio.
    const small = deflate(record('BOMB-2', 8 * MiB))
    expect(small.size / small.bytes.byteLength).toBeGreaterThan(900)
    const r2 = await postZip(w, zipBytes(Array.from({ length: 100 }, (_, i) => ({ name: `BOMB-${i}.json`, deflated: small }))))
    expect(r2.status).toBe(422)
    expect(r2.body.detail[0]!.msg).toBe(`Value error, the body:BOMB-0.json: compressed more than 100 to 1 (${8 * MiB} bytes from ${small.bytes.byteLength}), refused as a zip bomb`)
    expect(await feeds(w)).toBe(0)
    expect(staging(w)).toEqual([])
  })

  test('an import that inflates past 2 GiB in all is refused before inflating anything', async () => {
    const w = await world()
    // 270 entries of 8 MiB, each under the ratio (a 60th of it random hex): 2.1 GiB in a zip of about 40 MB. The
    // central directory is checked first, so the entry past the bound is refused before any record is read.
    const part = deflate(record('MANY-1', 8 * MiB, (n) => hex(n / 60) + 'a'.repeat(n - Math.floor(n / 60))))
    expect(part.size / part.bytes.byteLength).toBeLessThan(100)
    const many = await postZip(w, zipBytes(Array.from({ length: 270 }, (_, i) => ({ name: `MANY-${String(i).padStart(3, '0')}.json`, deflated: part }))))
    expect(many.status).toBe(422)
    expect(many.body.detail[0]!.msg).toBe('Value error, the body:MANY-256.json: the import inflates to more than 2048 MiB')
    expect(await feeds(w)).toBe(0)
    expect(staging(w)).toEqual([])
  }, 60_000)

  test('import errors name the file the operator sent, never the staging path', async () => {
    const w = await world()
    const garbage = await postZip(w, new TextEncoder().encode('PK\u0003\u0004garbage'))
    expect(garbage.status).toBe(422)
    expect(garbage.body.detail[0]!.msg).toStartWith('Value error, the body: not a readable zip file')
    const badJson = await postZip(w, zipBytes([{ name: 'DSA-1.json', data: new TextEncoder().encode('{"id": ') }]))
    expect(badJson.body.detail[0]!.msg).toStartWith('Value error, the body:DSA-1.json: not valid JSON')
    for (const r of [garbage, badJson]) expect(JSON.stringify(r.body)).not.toContain(w.dataDir)
    expect(staging(w)).toEqual([])
    // A well-formed zip still imports, through the same staging.
    const ok = await postZip(w, zipBytes([{ name: 'DSA-1.json', data: new TextEncoder().encode(record('DSA-1', 400)) }]))
    expect(ok.status).toBe(200)
    expect(await feeds(w)).toBe(1)
    expect(staging(w)).toEqual([])
  })
})
