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

// The answer is written as bytes into one growing buffer, with each name's `"pkg-N": ["M.` prefix prepared once, so that
// this stand-in costs far less than the refresh it feeds (the first version spent ~0.3 ms per minion building strings).
const enc = new TextEncoder()
const prefix = Array.from({ length: POOL }, (_, n) => enc.encode(`"pkg-${n}": ["${1 + (h(n, 1) % 3)}.`))
const seen = new Int32Array(POOL).fill(-1)
let buf = new Uint8Array(1 << 20)
let at = 0
/** Makes room for n more bytes. */
function room(n: number) {
  if (at + n <= buf.length) return
  const next = new Uint8Array(Math.max(buf.length * 2, at + n))
  next.set(buf.subarray(0, at))
  buf = next
}
/** Appends bytes. */
function put(b: Uint8Array) {
  room(b.length)
  buf.set(b, at)
  at += b.length
}
const ascii = (s: string) => enc.encode(s)

/** One minion's pkg.list_pkgs (versions_as_list) as JSON: P names from the pool, skewed to the common ones. */
function writePkgs(i: number) {
  const tail = ascii(`.${generation}"]`)
  room(2 + P * 64)
  const b = buf
  let o = at
  b[o++] = 123 // {
  for (let k = 0, count = 0; count < P; k++) {
    const r = h(i, k) / 2 ** 32
    const name = Math.floor(POOL * r * r)
    if (seen[name] === i) continue
    seen[name] = i
    if (count++) (b[o++] = 44), (b[o++] = 32) // ", "
    const pre = prefix[name]!
    for (let j = 0; j < pre.length; j++) b[o++] = pre[j]!
    b[o++] = 48 + (h(i, name) % 2) // minor version digit
    // 1% of packages move to a new version in each generation.
    if (generation !== 0 && h(i * 7 + name, generation) % 100 === 0) for (let j = 0; j < tail.length; j++) b[o++] = tail[j]!
    else (b[o++] = 46), (b[o++] = 48), (b[o++] = 34), (b[o++] = 93) // .0"]
  }
  b[o++] = 125 // }
  at = o
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
    if (c!.fun !== 'pkg.list_pkgs') return Response.json({ return: [{}] })
    at = 0
    put(ascii('{"return": [{'))
    tgt.forEach((m, k) => {
      put(ascii(`${k ? ', ' : ''}"${m}": `))
      writePkgs(Number(m.slice(2)))
    })
    put(ascii('}]}'))
    return new Response(buf.slice(0, at), { headers: { 'content-type': 'application/json' } })
  },
})
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}`, minions: N, packages: P, ids: [id(0), id(N - 1)] }))
