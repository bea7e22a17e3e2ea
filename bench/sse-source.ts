/**
 * A salt-api stand-in for the ingest benchmark: /login and an /events stream that writes job events as fast as the
 * reader takes them (pull-driven, so the reader's speed is what is measured), or at a steady rate when one is given
 * (the read benchmark's background ingest). Run: bun bench/sse-source.ts <port> [events per second]
 */
const port = Number(process.argv[2] ?? 0)
const RATE = Number(process.argv[3] ?? 0)
const enc = new TextEncoder()
// Job ids from the current time, as salt makes them: a second run of the source must not repeat the first's jids
// (the ingest stores a job's events once).
let jidN = BigInt(new Date().toISOString().replace(/\D/g, '').slice(0, 14) + '000000')
const MINIONS = 50
// The job's targeted minions, as salt lists them in salt/job/<jid>/new: the ingest stores a return from the bus only
// for a minion its job was published to (features/jobs/trust.ts) and holds the rest for the job cache, which this
// stand-in does not answer; without the list every return would be held and dropped, and only job.new stored.
const TARGETED = JSON.stringify(Array.from({ length: MINIONS }, (_, m) => `web-${m}`))

/** One chunk: a job.new and its 50 returns, in salt-api's wire format (3006 naive _stamp). */
function chunk(): Uint8Array {
  const jid = String(jidN++)
  const stamp = new Date().toISOString().replace('Z', '000')
  let s = `tag: salt/job/${jid}/new\ndata: {"data": {"jid": "${jid}", "tgt_type": "glob", "tgt": "web-*", "user": "root", "fun": "test.ping", "arg": [], "minions": ${TARGETED}, "missing": [], "_stamp": "${stamp}"}, "tag": "salt/job/${jid}/new"}\n\n`
  for (let m = 0; m < MINIONS; m++)
    s += `tag: salt/job/${jid}/ret/web-${m}\ndata: {"data": {"cmd": "_return", "id": "web-${m}", "success": true, "return": true, "retcode": 0, "jid": "${jid}", "fun": "test.ping", "fun_args": [], "user": "root", "_stamp": "${stamp}"}, "tag": "salt/job/${jid}/ret/web-${m}"}\n\n`
  return enc.encode(s)
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  idleTimeout: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname
    if (path === '/login') return Response.json({ return: [{ token: 'a'.repeat(40), expire: Date.now() / 1000 + 86400, start: Date.now() / 1000, user: 'bench', eauth: 'sharedsecret', perms: [] }] })
    if (path === '/events' && RATE > 0) {
      // One job (51 events) every 51/RATE seconds, on a timer: the stream carries RATE events a second.
      let timer: ReturnType<typeof setInterval>
      return new Response(new ReadableStream({
        start(c) {
          c.enqueue(enc.encode('retry: 400\n'))
          const every = (1000 * (MINIONS + 1)) / RATE
          let due = performance.now()
          timer = setInterval(() => {
            for (; due <= performance.now(); due += every) c.enqueue(chunk())
          }, Math.max(5, Math.floor(every)))
        },
        cancel() {
          clearInterval(timer)
        },
      }), { headers: { 'content-type': 'text/event-stream;charset=utf-8' } })
    }
    if (path === '/events') {
      let first = true
      return new Response(new ReadableStream({
        pull(c) {
          if (first) c.enqueue(enc.encode('retry: 400\n'))
          first = false
          for (let i = 0; i < 20; i++) c.enqueue(chunk())
        },
      }, { highWaterMark: 4 }), { headers: { 'content-type': 'text/event-stream;charset=utf-8' } })
    }
    if (path === '/') return Response.json({ return: [{}] })
    return new Response('not found', { status: 404 })
  },
})
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }))
