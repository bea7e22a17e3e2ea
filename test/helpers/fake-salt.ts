/**
 * A fake salt-api speaking rest_cherrypy as the spec's reference/salt-api.md describes, on port 0, with faults on demand:
 * down, slow, 500s, token expiry (HTML 401), malformed or partial SSE frames, huge returns, hostile ids.
 */
import type { Server } from 'bun'

/** One fake minion. */
export interface FakeMinion {
  id: string
  key: 'accepted' | 'pending' | 'rejected' | 'denied'
  online: boolean
  grains: Record<string, unknown>
  pkgs: Record<string, string[]>
  /** Source package per binary name (pkg.info_installed's `source`); the name itself when absent. */
  sources?: Record<string, string>
  /** The key's fingerprint for wheel key.finger (default: derived from the id, sha256 in hex pairs as salt shows it). */
  fingerprint?: string
  /**
   * The package attributes a pkg module that reads `attr` keeps (yumpkg, zypperpkg): with `attr` asked, pkg.list_pkgs
   * answers these, filtered as salt's format_pkg_list does; without it (aptpkg ignores `attr`), `pkgs`.
   */
  pkgAttrs?: Record<string, { epoch?: string; version: string; release?: string; arch: string }[]>
  /** What a state function returns on this minion (default: one passing state). */
  stateReturn?: unknown
}

const html = (status: number, title: string, msg: string) =>
  new Response(`<!DOCTYPE html><html><head><title>${title}</title></head><body><h2>${title}</h2><p>${msg}</p></body></html>`, {
    status, headers: { 'content-type': 'text/html;charset=utf-8' },
  })
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
const stamp = (ms = Date.now()) => new Date(ms).toISOString().replace('Z', '').padEnd(26, '0')
let jidSeq = 0
/** A 20-digit jid from the time, unique within the process. */
export const newJid = (ms = Date.now()) => new Date(ms).toISOString().replace(/\D/g, '').slice(0, 17) + String(jidSeq++ % 1000).padStart(3, '0')

/** The fingerprint the fake master reports for a minion's key when none is set: sha256 of the id, in colon-separated pairs. */
export const fakeFingerprint = (id: string) => new Bun.CryptoHasher('sha256').update(`key of ${id}`).digest('hex').match(/../g)!.join(':')

/** Python fnmatch as salt's key matching uses it (`*`, `?`, `[…]`, `[!…]`; a `[` without `]` is literal), case-sensitive. */
export function fnmatch(pattern: string, name: string): boolean {
  let re = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '*') re += '.*'
    else if (c === '?') re += '.'
    else if (c === '[') {
      let j = i + 1
      if (pattern[j] === '!') j++
      if (pattern[j] === ']') j++
      while (j < pattern.length && pattern[j] !== ']') j++
      if (j >= pattern.length) re += '\\['
      else {
        let body = pattern.slice(i + 1, j).replace(/[\\^\]]/g, '\\$&')
        if (body.startsWith('!')) body = '^' + body.slice(1)
        re += `[${body}]`
        i = j
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
  }
  try {
    return new RegExp(`^${re}$`, 's').test(name)
  } catch {
    return false // a class JavaScript refuses, such as the empty range `[z-a]`: it matches nothing in fnmatch either
  }
}

/** The fake server and its knobs. */
export class FakeSalt {
  minions = new Map<string, FakeMinion>()
  users = new Map([['saltdeck', 's3cr3t']])
  sessions = new Map<string, number>()
  jobs = new Map<string, { fun: string; tgt: unknown; user: string; minions: string[]; returns: Record<string, unknown>; start: number; arg?: unknown[] }>()
  /** Faults. */
  down = false
  delayMs = 0
  fail500 = 0
  tokenTtlMs = 12 * 3600_000
  /** The master's Salt version (runner salt.cmd test.version); the version faults below are set by hand. */
  version = '3006.28'
  /** 3008.0–3008.1: sessions die this long after login although /login promised tokenTtlMs (0 = never). */
  sessionDiesMs = 0
  /** 3008.2: GET /events answers CherryPy's plain 500 "Unrecoverable error in the server." at once. */
  eventsBroken = false
  /** 3007.0–3008.2: runner manage.status counts every accepted minion as up. */
  statusLies = false
  /** 3008 after an upgrade: runner cache.grains answers empty. */
  grainsCacheEmpty = false
  /** 3008.3+: POST /logout revokes the token. */
  logoutRevokes = false
  /** Calls answered 401 because their token was revoked or dead. */
  rejected401 = 0
  logouts = 0
  /** 3008: wheel key.delete answers the keys matching after the delete (none). */
  keyDeleteAnswersAfter = false
  calls: { client: string; fun: string; tgt?: unknown; kwarg?: Record<string, unknown> }[] = []
  /** The salt-master stopped behind a running salt-api: GET / answers, every call through the master (login too) hangs. */
  masterDown = false
  /** Calls and logins left hanging by `masterDown`. */
  hung = 0
  /** A function whose calls are held open (never answered) while set: a call "in flight" for as long as a test needs. */
  hold: string | null = null
  /** Calls held open by `hold`. */
  held = 0
  private streams = new Set<ReadableStreamDefaultController<Uint8Array>>()
  private enc = new TextEncoder()
  server!: Server<unknown>

  /** Starts on 127.0.0.1, port 0. */
  start() {
    this.server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: (req) => this.handle(req) })
    return this
  }
  get url() {
    return `http://127.0.0.1:${this.server.port}`
  }
  stop() {
    for (const c of this.streams) try { c.close() } catch { /* closed */ }
    this.server.stop(true)
  }

  /** Adds minions web-01.. with Debian grains and a few packages. */
  addMinions(ids: string[], over: Partial<FakeMinion> = {}) {
    for (const id of ids)
      this.minions.set(id, {
        id, key: 'accepted', online: true,
        grains: { id, os: 'Debian', os_family: 'Debian', osrelease: '12', saltversion: '3006.10', ipv4: ['127.0.0.1', '10.0.0.5'] },
        pkgs: { bash: ['5.2.15-2+b2'], coreutils: ['9.1-1'], openssl: ['3.0.11-1~deb12u2'] },
        ...over,
      })
    return this
  }

  /** Sends raw text to every open /events stream (tests use it for malformed and partial frames). */
  sendRaw(text: string) {
    for (const c of this.streams) c.enqueue(this.enc.encode(text))
  }
  /** Publishes one event as salt-api writes it. */
  publish(tag: string, data: Record<string, unknown>) {
    this.sendRaw(`tag: ${tag}\ndata: ${JSON.stringify({ data: { ...data, _stamp: data._stamp ?? stamp() }, tag })}\n\n`)
  }
  /**
   * A minion's own schedule with return_job, as salt does it: the master writes the job and the return to its job cache
   * and fires the return (with the schedule's name, and no `new` event). Returns the jid.
   */
  scheduleReturn(id: string, fun: string, ret: unknown, schedule = 'demo-schedule') {
    const jid = newJid()
    this.jobs.set(jid, { fun, tgt: id, user: 'root', minions: [id], returns: { [id]: ret }, start: Date.now() })
    this.publish(`salt/job/${jid}/ret/${id}`, { cmd: '_return', id, jid, fun, fun_args: [], schedule, retcode: 0, success: true, return: ret })
    return jid
  }
  /** Ends every open stream (token expiry, salt-api restart). */
  closeStreams() {
    for (const c of this.streams) try { c.close() } catch { /* closed */ }
    this.streams.clear()
  }
  get streamCount() {
    return this.streams.size
  }
  /** Expires every session: the next call gets the HTML 401. */
  expireSessions() {
    this.sessions.clear()
  }

  private authed(req: Request) {
    const tok = req.headers.get('x-auth-token') ?? /session_id=([^;]+)/.exec(req.headers.get('cookie') ?? '')?.[1]
    const exp = tok ? this.sessions.get(tok) : undefined
    return exp !== undefined && exp > Date.now()
  }

  private async handle(req: Request): Promise<Response> {
    if (this.down) return html(503, '503 Service Unavailable', 'Salt Master is not available.')
    if (this.delayMs) await Bun.sleep(this.delayMs)
    const path = new URL(req.url).pathname
    if (req.method === 'GET' && path === '/') return json({ return: 'Welcome', clients: ['local', 'local_async', 'runner', 'wheel'] })
    if (req.method === 'POST' && path === '/logout') {
      this.logouts++
      const tok = req.headers.get('x-auth-token')
      if (tok && this.logoutRevokes) this.sessions.delete(tok)
      return json({ return: 'Your token has been cleared' })
    }
    if (this.fail500 > 0 && path !== '/events') {
      this.fail500--
      return json({ status: 500, return: 'An unexpected error occurred' }, 500)
    }
    if (this.masterDown && req.method === 'POST' && (path === '/' || path === '/login')) {
      this.hung++
      return new Promise<Response>(() => {})
    }
    if (req.method === 'POST' && path === '/login') {
      const b = (await req.json().catch(() => ({}))) as Record<string, string>
      if (b.eauth !== "sharedsecret" || !b.password || this.users.get(String(b.username)) !== b.password) return html(401, '401 Unauthorized', 'Could not authenticate using provided credentials')
      const token = Array.from(crypto.getRandomValues(new Uint8Array(20)), (x) => x.toString(16).padStart(2, '0')).join('')
      const start = Date.now() / 1000
      this.sessions.set(token, Date.now() + (this.sessionDiesMs || this.tokenTtlMs))
      return new Response(JSON.stringify({ return: [{ token, expire: start + this.tokenTtlMs / 1000, start, user: b.username, eauth: b.eauth, perms: ['.*', '@runner', '@wheel'] }] }), {
        headers: { 'content-type': 'application/json', 'x-auth-token': token, 'set-cookie': `session_id=${token}; Max-Age=36000; Path=/` },
      })
    }
    if (!this.authed(req)) {
      this.rejected401++
      return html(401, '401 Unauthorized', 'No permission -- see authorization schemes')
    }
    if (req.method === 'GET' && path === '/events' && this.eventsBroken)
      return new Response('Unrecoverable error in the server.\nTraceback (most recent call last):\n  File "cherrypy/_cpwsgi.py", line 236, in __init__\n', { status: 500, headers: { 'content-type': 'text/plain' } })
    if (req.method === 'GET' && path === '/events') {
      if (new URL(req.url).search) return html(400, '400 Bad Request', 'Query parameters are not accepted; use the X-Auth-Token header')
      let ctl!: ReadableStreamDefaultController<Uint8Array>
      const body = new ReadableStream<Uint8Array>({
        start: (c) => {
          ctl = c
          this.streams.add(c)
          c.enqueue(this.enc.encode('retry: 400\n'))
        },
        cancel: () => void this.streams.delete(ctl),
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream;charset=utf-8', 'cache-control': 'no-cache' } })
    }
    if (req.method === 'POST' && path === '/') {
      const chunks = (await req.json()) as Record<string, any>[]
      if (this.hold && chunks.some((c) => c.fun === this.hold)) {
        this.held++
        return new Promise<Response>(() => {})
      }
      const out = []
      for (const c of chunks) {
        this.calls.push({ client: c.client, fun: c.fun, tgt: c.tgt, kwarg: c.kwarg })
        const r = this.lowstate(c)
        if (r instanceof Response) return r
        out.push(r)
      }
      return json({ return: out })
    }
    return html(404, '404 Not Found', 'Nothing matches the given URI')
  }

  /** Minions a target selects (glob or list). */
  match(tgt: unknown, tgtType = 'glob'): FakeMinion[] {
    const accepted = [...this.minions.values()].filter((m) => m.key === 'accepted')
    if (tgtType === 'list') {
      const ids = new Set(Array.isArray(tgt) ? tgt : String(tgt).split(','))
      return accepted.filter((m) => ids.has(m.id))
    }
    const re = new RegExp(`^${String(tgt).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`)
    return accepted.filter((m) => re.test(m.id))
  }

  /**
   * The master's check_minions for a runner: glob, list and pcre on accepted keys; grain (`key:glob`) on the cached
   * grains (none while grainsCacheEmpty); compound of `G@`, `L@`, `E@` and globs with and/or/not and parentheses.
   */
  checkMinions(tgt: unknown, tgtType: string): FakeMinion[] {
    const accepted = [...this.minions.values()].filter((m) => m.key === 'accepted')
    const grain = (m: FakeMinion, expr: string) => {
      if (this.grainsCacheEmpty) return false
      const i = expr.indexOf(':')
      const v = m.grains[expr.slice(0, i)]
      return (Array.isArray(v) ? v : [v]).some((x) => x !== undefined && fnmatch(expr.slice(i + 1), String(x)))
    }
    const term = (m: FakeMinion, t: string) =>
      t.startsWith('G@') ? grain(m, t.slice(2)) : t.startsWith('L@') ? t.slice(2).split(',').includes(m.id) : t.startsWith('E@') ? new RegExp(t.slice(2)).test(m.id) : fnmatch(t, m.id)
    const compound = (m: FakeMinion, words: string[]): boolean => {
      let i = 0
      const or = (): boolean => { let v = and(); while (words[i] === 'or') { i++; const r = and(); v = v || r } return v }
      const and = (): boolean => { let v = not(); while (words[i] === 'and') { i++; const r = not(); v = v && r } return v }
      const not = (): boolean => { if (words[i] === 'not') { i++; return !not() } if (words[i] === '(') { i++; const v = or(); i++; return v } return term(m, words[i++]!) }
      return or()
    }
    if (tgtType === 'list') {
      const ids = new Set(Array.isArray(tgt) ? tgt.map(String) : String(tgt).split(','))
      return accepted.filter((m) => ids.has(m.id))
    }
    if (tgtType === 'pcre') return accepted.filter((m) => new RegExp(String(tgt)).test(m.id))
    if (tgtType === 'grain') return accepted.filter((m) => grain(m, String(tgt)))
    if (tgtType === 'compound') return accepted.filter((m) => compound(m, String(tgt).replace(/[()]/g, ' $& ').trim().split(/\s+/)))
    if (tgtType === 'glob') return accepted.filter((m) => fnmatch(String(tgt), m.id))
    return []
  }

  /** What one minion returns for a function. */
  private exec(m: FakeMinion, fun: string, kwarg: Record<string, unknown> = {}, arg: unknown[] = []): unknown {
    if (fun === 'test.ping') return true
    if (fun === 'saltutil.kill_job') return true
    if (fun === 'grains.items') return m.grains
    if (fun === 'grains.get') return m.grains[String(arg[0])] ?? ''
    if (fun === 'pkg.info_installed') {
      // As aptpkg with failhard=False: dpkg-query fails for the whole call when one name is not installed, answering {}.
      const names = arg.map(String)
      if (names.some((n) => !m.pkgs[n])) return {}
      return Object.fromEntries(names.map((n) => [n, { name: n, version: m.pkgs[n]![0], source: m.sources?.[n] ?? n }]))
    }
    if (fun === 'pkg.list_pkgs' && kwarg.attr && m.pkgAttrs) {
      // format_pkg_list: the fields asked (a list or a comma-joined string), plus version and arch, whatever was asked.
      const asked = new Set([...(Array.isArray(kwarg.attr) ? kwarg.attr.map(String) : String(kwarg.attr).split(',')), 'version', 'arch'])
      return Object.fromEntries(Object.entries(m.pkgAttrs).map(([n, vs]) => [n, vs.map((v) => Object.fromEntries(Object.entries(v).filter(([k]) => asked.has(k))))]))
    }
    if (fun === 'pkg.list_pkgs') return kwarg.versions_as_list ? m.pkgs : Object.fromEntries(Object.entries(m.pkgs).map(([k, v]) => [k, v.join(',')]))
    if (fun.startsWith('state.'))
      return m.stateReturn ?? { 'test_|-ok_|-ok_|-succeed_without_changes': { name: 'ok', result: true, comment: 'Success!', changes: {}, duration: 0.5, __run_num__: 0 } }
    return `'${fun}' is not available.`
  }

  private lowstate(c: Record<string, any>): unknown {
    const enabled = ['local', 'local_async', 'runner', 'runner_async', 'wheel']
    if (!enabled.includes(c.client)) return html(400, '400 Bad Request', `Client disabled: '${c.client}'. Add to 'netapi_enable_clients' master config option to enable.`)
    if (c.client === 'local' || c.client === 'local_async') {
      const targets = this.match(c.tgt, c.tgt_type)
      // Salt takes the caller's jid when it sends one.
      const jid = typeof c.jid === 'string' && c.jid ? c.jid : newJid()
      const job = { fun: c.fun, tgt: c.tgt, user: 'saltdeck', minions: targets.map((m) => m.id), returns: {} as Record<string, unknown>, start: Date.now(), arg: (c.arg ?? []) as unknown[] }
      this.jobs.set(jid, job)
      const ret = (m: FakeMinion) => (m.online ? this.exec(m, c.fun, c.kwarg, c.arg) : false)
      if (c.client === 'local') {
        const out: Record<string, unknown> = {}
        for (const m of targets) out[m.id] = job.returns[m.id] = ret(m)
        return out
      }
      if (!targets.length) return {}
      this.publish(`salt/job/${jid}/new`, { jid, tgt_type: c.tgt_type ?? 'glob', tgt: c.tgt, user: 'saltdeck', fun: c.fun, arg: c.arg ?? [], minions: job.minions, missing: [] })
      queueMicrotask(() => {
        for (const m of targets.filter((t) => t.online)) {
          const r = (job.returns[m.id] = ret(m))
          const failed = r && typeof r === 'object' && Object.values(r as object).some((s: any) => s?.result === false)
          const retcode = Array.isArray(r) ? 1 : failed ? 2 : 0
          this.publish(`salt/job/${jid}/ret/${m.id}`, { cmd: '_return', id: m.id, success: retcode === 0, return: r, retcode, jid, fun: c.fun, fun_args: c.arg ?? [] })
        }
      })
      return { jid, minions: job.minions }
    }
    if (c.client === 'runner') return this.runner(c.fun, c.kwarg ?? {})
    if (c.client === 'runner_async') return this.runnerAsync(c.fun, c.arg ?? [], c.kwarg ?? {})
    const r = this.wheelCall(c.fun, c)
    const jid = newJid()
    return { tag: `salt/wheel/${jid}`, data: { fun: `wheel.${c.fun}`, jid, user: 'saltdeck', _stamp: stamp(), return: r, success: !(typeof r === 'string') } }
  }

  /** Orchestrations by sls name: each step a job the master publishes (salt.state / salt.function), as salt/states/saltmod.py does. */
  orchestrations: Record<string, { id: string; tgt: string; fun: string; arg: unknown[] }[]> = {
    'orch.demo': [{ id: 'orch-demo', tgt: 'web-*', fun: 'state.sls', arg: ['demo'] }, { id: 'orch-ping', tgt: 'db-01', fun: 'test.ping', arg: [] }],
  }

  /**
   * runner_async: answers {tag, jid} at once; the runner then runs and its return lands in the job cache under the
   * master's id as the whole runner event, as salt's mixins store_job keeps it. state.orchestrate publishes each step
   * as a job of its own and names it `__jid__` in the step's result.
   */
  private runnerAsync(fun: string, arg: unknown[], kwarg: Record<string, any>) {
    const jid = newJid()
    const job = { fun: `runner.${fun}`, tgt: 'master_master', user: 'saltdeck', minions: ['master_master'], returns: {} as Record<string, unknown>, start: Date.now(), arg }
    this.jobs.set(jid, job)
    setTimeout(() => {
      let ret: unknown
      let success = true
      if (fun === 'state.orchestrate' || fun === 'state.orch') {
        const steps = this.orchestrations[String(kwarg.mods ?? arg[0])]
        if (!steps) (ret = { data: { master_master: ["No matching sls found for 'orch' in env 'base'"] }, outputter: 'highstate', retcode: 1 }), (success = false)
        else {
          const results: Record<string, unknown> = {}
          steps.forEach((s, i) => {
            const pub = this.lowstate({ client: 'local_async', tgt: s.tgt, fun: s.fun, arg: s.arg }) as { jid: string }
            results[`salt_|-${s.id}_|-${s.id}_|-${s.fun.startsWith('state.') ? 'state' : 'function'}`] = { __id__: s.id, name: s.id, result: true, comment: 'States ran successfully.', changes: {}, __run_num__: i, __jid__: pub.jid }
          })
          ret = { data: { master_master: results }, outputter: 'highstate', retcode: 0 }
        }
      } else if (fun === 'test.arg') ret = { args: arg, kwargs: kwarg }
      else (ret = this.runner(fun, kwarg)), (success = !(typeof ret === 'string' && ret.startsWith('Exception')))
      job.returns.master_master = { fun: `runner.${fun}`, jid, user: 'saltdeck', fun_args: arg, return: ret, success, _stamp: stamp() }
    }, 50)
    return { tag: `salt/run/${jid}`, jid }
  }

  private runner(fun: string, kw: Record<string, any>): unknown {
    const accepted = [...this.minions.values()].filter((m) => m.key === 'accepted')
    if (fun === 'manage.present' || fun === 'manage.alived') return accepted.filter((m) => m.online).map((m) => m.id).sort()
    if (fun === 'manage.status') {
      if (this.statusLies) return { up: accepted.map((m) => m.id).sort(), down: [] }
      return { up: accepted.filter((m) => m.online).map((m) => m.id).sort(), down: accepted.filter((m) => !m.online).map((m) => m.id).sort() }
    }
    if (fun === 'salt.cmd' && kw.fun === 'test.version') return this.version
    // MasterPillarUtil: salt's check_minions on the target, then each matched minion's cached grains ({} when none).
    if (fun === 'cache.grains') {
      if (kw.tgt === undefined) return "Passed invalid arguments: grains() missing 1 required positional argument: 'tgt'"
      return Object.fromEntries(this.checkMinions(kw.tgt, kw.tgt_type ?? 'glob').map((m) => [m.id, this.grainsCacheEmpty ? {} : m.grains]))
    }
    if (fun === 'jobs.list_jobs') {
      const out: Record<string, unknown> = {}
      for (const [jid, j] of this.jobs) {
        const d = new Date(j.start)
        const startTime = `${d.getUTCFullYear()}, ${d.toUTCString().slice(8, 11)} ${String(d.getUTCDate()).padStart(2, '0')} ${d.toISOString().slice(11, 19)}.${String(d.getUTCMilliseconds()).padStart(3, '0')}000`
        out[jid] = { Function: j.fun, Arguments: j.arg ?? [], Target: j.tgt, 'Target-type': 'glob', User: j.user, StartTime: startTime }
      }
      return out
    }
    if (fun === 'jobs.lookup_jid') {
      const j = this.jobs.get(String(kw.jid))
      if (!j) return {}
      return j.fun.startsWith('state.') ? { outputter: 'highstate', data: j.returns } : j.returns
    }
    if (fun === 'jobs.list_job') {
      const j = this.jobs.get(String(kw.jid))
      if (!j) return { jid: kw.jid, Error: 'Cannot contact returner or no job with this jid', Result: {} }
      const Result = Object.fromEntries(Object.entries(j.returns).map(([m, r]) => [m, { return: r, retcode: Array.isArray(r) ? 1 : 0, success: !Array.isArray(r) }]))
      return { jid: kw.jid, Function: j.fun, Arguments: j.arg ?? [], Target: j.tgt, 'Target-type': 'glob', User: j.user, Minions: j.minions, Result }
    }
    if (fun === 'jobs.active') return {}
    return `Exception occurred in runner ${fun}: unknown`
  }

  private wheelCall(fun: string, c: Record<string, any>): unknown {
    const by = (k: FakeMinion['key']) => [...this.minions.values()].filter((m) => m.key === k).map((m) => m.id).sort()
    if (fun === 'key.name_match') return Object.fromEntries([...this.minions.values()].filter((m) => fnmatch(String(c.match), m.id)).map((m) => [m.key, [m.id]]))
    if (fun === 'key.list_all') return { minions: by('accepted'), minions_pre: by('pending'), minions_rejected: by('rejected'), minions_denied: by('denied'), local: ['master.pem', 'master.pub'] }
    if (fun === 'key.finger') {
      // salt's Key.name_match: a list of globs, or a string split at commas; every key directory that has a match.
      const globs: string[] = Array.isArray(c.match) ? c.match.map(String) : String(c.match ?? '').split(',')
      const dirs = { accepted: 'minions', pending: 'minions_pre', rejected: 'minions_rejected', denied: 'minions_denied' } as const
      const out: Record<string, Record<string, string>> = {}
      for (const m of [...this.minions.values()].sort((a, b) => (a.id < b.id ? -1 : 1)))
        if (globs.some((g) => fnmatch(g, m.id))) (out[dirs[m.key]] ??= {})[m.id] = m.fingerprint ?? fakeFingerprint(m.id)
      return out
    }
    const m = this.minions.get(String(c.match))
    if (fun === 'key.accept' || fun === 'key.reject') {
      if (!m) return {}
      m.key = fun === 'key.accept' ? 'accepted' : 'rejected'
      this.publish('salt/key', { result: true, act: fun === 'key.accept' ? 'accept' : 'reject', id: m.id })
      return { [fun === 'key.accept' ? 'minions' : 'minions_rejected']: [m.id] }
    }
    if (fun === 'key.delete') {
      if (!m) return {}
      this.minions.delete(m.id)
      this.publish('salt/key', { result: true, act: 'delete', id: m.id })
      return this.keyDeleteAnswersAfter ? {} : { minions: [m.id] }
    }
    return `Exception occurred in wheel ${fun}: unknown`
  }
}
