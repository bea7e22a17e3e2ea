/**
 * A salt-api stand-in for the inventory benchmark: N minions × P packages, deterministic; `POST /bench/generation`
 * bumps the generation, which changes the version of 1% of each minion's packages. Run: bun bench/pkg-source.ts N P
 */
const N = Number(process.argv[2] ?? 50_000)
const P = Number(process.argv[3] ?? 1500)
const POOL = 20_000
let generation = 0

/** A small deterministic hash. */
const h = (a: number, b: number) => (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35)) >>> 0
const id = (i: number) => `m-${String(i).padStart(5, '0')}`

/** One minion's pkg.list_pkgs (versions_as_list) as JSON text: P names from the pool, skewed to the common ones. */
function pkgsJson(i: number): string {
  const parts: string[] = []
  const seen = new Set<number>()
  for (let k = 0; seen.size < P; k++) {
    const r = h(i, k) / 2 ** 32
    const name = Math.floor(POOL * r * r)
    if (seen.has(name)) continue
    seen.add(name)
    // 1% of packages move to a new version in each generation.
    const bumped = h(i * 7 + name, generation) % 100 === 0 ? generation : 0
    parts.push(`"pkg-${name}": ["${1 + (h(name, 1) % 3)}.${h(i, name) % 2}.${bumped}"]`)
  }
  return `{${parts.join(', ')}}`
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  idleTimeout: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname
    if (path === '/login') return Response.json({ return: [{ token: 'b'.repeat(40), expire: Date.now() / 1000 + 86400, start: Date.now() / 1000, user: 'bench', eauth: 'sharedsecret', perms: [] }] })
    if (path === '/bench/generation') return Response.json({ generation: ++generation })
    if (path !== '/') return new Response('not found', { status: 404 })
    const [c] = (await req.json()) as { fun: string; tgt: string[] }[]
    const tgt = c!.tgt
    if (c!.fun === 'grains.get') return Response.json({ return: [Object.fromEntries(tgt.map((m) => [m, Number(m.slice(2)) % 10 < 7 ? 'Debian' : 'RedHat']))] })
    if (c!.fun === 'pkg.list_pkgs') return new Response(`{"return": [{${tgt.map((m) => `"${m}": ${pkgsJson(Number(m.slice(2)))}`).join(', ')}}]}`, { headers: { 'content-type': 'application/json' } })
    return Response.json({ return: [{}] })
  },
})
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}`, minions: N, packages: P, ids: [id(0), id(N - 1)] }))
