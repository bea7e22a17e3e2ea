/**
 * Peak RSS of a served process during OSV imports (issue 20 item 4). Starts `saltdeck serve` on a fresh data dir and
 * POSTs to /api/vulns/import, reading the server's VmHWM (its high-water mark since start) from /proc after each:
 *   1. the zip bomb of the issue: 100 records of 16 MiB each at ~1000:1, a 1.6 MB zip (refused: 422);
 *   2. the largest upload the bounds let through: a zip of ~500 MiB (the contract's largest is 512 MiB), 8 MiB records
 *      (the largest entry) of 760,000 random version strings each (120 entries, 0.94 GiB inflated, every version staged);
 *   3. records of 300,000 range events each (8 entries of 8 MiB: about the most objects one entry parses into).
 * Run: bun bench/vuln-import-rss.ts [--cwd DIR] [--only 1,2,3]   (DIR: another checkout, e.g. the code before the fix)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort } from './harness'
import { deflate, zipBytes, type Deflated } from '../test/helpers/zip'

const MiB = 1024 * 1024
const cwdArg = process.argv.indexOf('--cwd')
const CWD = resolve(cwdArg > 0 ? process.argv[cwdArg + 1]! : '.')
const PASSWORD = 'bench-rss-pw'
const root = mkdtempSync(join(tmpdir(), 'vuln-rss-'))

/** A record of `size` bytes of JSON whose affected entry carries what `fill` writes (an array's elements). */
function record(id: string, size: number, key: 'versions' | 'events', item: (i: number) => string): string {
  const head = key === 'versions'
    ? `{"id":"${id}","affected":[{"package":{"ecosystem":"Debian:12","name":"openssl"},"versions":[`
    : `{"id":"${id}","affected":[{"package":{"ecosystem":"Debian:12","name":"openssl"},"ranges":[{"type":"ECOSYSTEM","events":[`
  const tail = key === 'versions' ? ']}]}' : ']}]}]}'
  const parts: string[] = []
  let n = head.length + tail.length
  for (let i = 0; ; i++) {
    const s = (i ? ',' : '') + item(i)
    if (n + s.length > size) break
    parts.push(s), (n += s.length)
  }
  return head + parts.join('') + tail
}
const rnd = () => Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0')

function writeZip(name: string, d: Deflated, count: number): string {
  const file = join(root, name)
  writeFileSync(file, zipBytes(Array.from({ length: count }, (_, i) => ({ name: `R-${String(i).padStart(4, '0')}.json`, deflated: d }))))
  return file
}

const rssOf = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (k: string) => Math.round(Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))![1]) / 1024)
  return { rss_mb: mb('VmRSS'), peak_mb: mb('VmHWM') }
}

const ALL = [
  { name: 'zip bomb of issue 20 (100 x 16 MiB at ~1000:1)', file: writeZip('bomb.zip', deflate('{"id":"BOMB-1","details":"' + 'a'.repeat(16 * MiB - 28) + '"}'), 100) },
  { name: 'largest upload: 120 x 8 MiB of random versions', file: writeZip('versions.zip', deflate(record('V-1', 8 * MiB - 1024, 'versions', () => `"${rnd()}"`)), 120) },
  { name: '8 x 8 MiB of range events', file: writeZip('events.zip', deflate(record('E-1', 8 * MiB - 1024, 'events', () => `{"introduced":"${rnd()}"}`)), 8) },
]
const only = process.argv.indexOf('--only')
const cases = only > 0 ? ALL.filter((_, i) => process.argv[only + 1]!.split(',').includes(String(i + 1))) : ALL

const port = freePort()
const proc = Bun.spawn(['bun', 'run', 'src/main.ts', 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', join(root, 'data')], {
  cwd: CWD, stdout: 'ignore', stderr: 'inherit', env: { ...process.env, SALTDECK_ADMIN_PASSWORD: PASSWORD, SALTDECK_LOG_LEVEL: 'warn' },
})
const base = `http://127.0.0.1:${port}`
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/healthz`).catch(() => null))?.ok) break
    if (i > 200) throw new Error('serve did not start')
    await Bun.sleep(50)
  }
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  console.log(JSON.stringify({ phase: 'idle', cwd: CWD, ...rssOf(proc.pid) }))
  for (const c of cases) {
    const t0 = performance.now()
    const res = await fetch(`${base}/api/vulns/import`, { method: 'POST', headers: { 'content-type': 'application/zip', cookie, origin: base }, body: Bun.file(c.file) })
    const text = await res.text()
    console.log(JSON.stringify({
      case: c.name, zip_mb: +(Bun.file(c.file).size / 1e6).toFixed(1), status: res.status, seconds: +((performance.now() - t0) / 1000).toFixed(1),
      ...rssOf(proc.pid), answer: text.slice(0, 160),
    }))
  }
} finally {
  proc.kill()
  await proc.exited
  rmSync(root, { recursive: true, force: true })
}
