/**
 * A salt-api (rest_cherrypy) client: login with the stored eauth, token reuse, one re-login on 401,
 * exponential backoff on network errors and 5xx, per-call timeouts and typed errors.
 */
import { SaltNotConfigured, SaltRejected, SaltUnavailable, type SaltError } from './errors'
import { checkUrl, networkReason } from '../lib/outbound'

/** Credentials and TLS switch of the salt connection. */
export interface SaltCreds {
  url: string | null
  username: string | null
  password: string | null
  eauth: string
  verify: boolean
}

/** Tuning of retries and timeouts (tests shorten them), and SALTDECK_OUTBOUND_ALLOW for the destination check. */
export interface ClientOptions {
  timeoutMs: number
  attempts: number
  backoffMs: number
  sleep: (ms: number) => Promise<void>
  outboundAllow: string | null
}

const DEFAULTS: ClientOptions = { timeoutMs: 30_000, attempts: 3, backoffMs: 500, sleep: (ms) => Bun.sleep(ms), outboundAllow: null }

/** Whether an answer came from salt-api itself: 502–504 are a proxy's word that salt-api is not there. */
const fromSaltApi = (status: number) => status < 502 || status > 504

/** The short human reason of a salt-api error body (CherryPy HTML page or `{"return": ...}` JSON). */
export function shortReason(status: number, body: string): string {
  const p = /<p>([\s\S]*?)<\/p>/i.exec(body)?.[1] ?? /<title>([\s\S]*?)<\/title>/i.exec(body)?.[1]
  let text = p?.replace(/<[^>]+>/g, '').trim()
  if (!text) {
    try {
      const j = JSON.parse(body) as { return?: unknown }
      if (typeof j.return === 'string') text = j.return
    } catch {
      // Not JSON: a plain-text page (CherryPy's "Unrecoverable error in the server.") says it on its first line.
      if (!body.trimStart().startsWith('<')) text = body.split('\n').find((l) => l.trim())?.trim()
    }
  }
  text = (text || `HTTP ${status}`).replace(/\s+/g, ' ')
  return text.length > 200 ? text.slice(0, 200) + '…' : text
}

/** Arguments of a local job; `jid` chooses the job's id (salt accepts one from its caller), so it can be noted first. */
export interface JobOptions {
  arg?: unknown[]
  kwarg?: Record<string, unknown>
  tgt_type?: string
  jid?: string
}

/** A lowstate chunk: client, fun and the client's arguments. */
export type Lowstate = Record<string, unknown> & { client: string; fun: string }

/** Whether salt-api answered lately: `up` null before the first exchange; `since` is when it last changed. */
export interface Reachability {
  up: boolean | null
  since: number | null
  error: string | null
}

/** The client; `creds` is read at every login so settings changes apply without a restart. */
export class SaltClient {
  private token: string | null = null
  /** The salt-api the token was issued by (logout goes there even after the settings changed). */
  private tokenUrl: string | null = null
  private expires = 0
  private opts: ClientOptions
  private reach: Reachability = { up: null, since: null, error: null }

  constructor(private creds: () => SaltCreds, opts: Partial<ClientOptions> = {}, private now: () => number = Date.now) {
    this.opts = { ...DEFAULTS, ...opts }
  }

  /** Forgets the token (the salt settings changed). */
  reset() {
    this.token = null
    this.expires = 0
  }

  /**
   * Logs the session out and forgets it first, so no call goes on with a token salt revokes (3008.3+ revokes it on
   * /logout, #69067): a call in flight that meets the 401 logs in again. Best effort; never throws.
   */
  async logout() {
    const token = this.token
    const url = this.tokenUrl
    this.reset()
    if (!token || !url) return
    try {
      await checkUrl(url, this.opts.outboundAllow)
      const res = await fetch(new URL('logout', url), {
        method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json', 'x-auth-token': token }, body: '{}',
        signal: AbortSignal.timeout(5000), tls: { rejectUnauthorized: this.creds().verify }, redirect: 'manual',
      } as RequestInit)
      await res.body?.cancel()
    } catch {
      /* salt-api gone: the token expires on its own */
    }
  }

  /** Whether salt-api answered lately (any call, probe or stream). */
  reachability(): Reachability {
    return { ...this.reach }
  }

  /** Told when salt-api starts or stops answering (not before the first exchange). */
  onReachChange: (up: boolean) => void = () => {}

  /** Records an exchange's outcome: an answer other than 502–504 means salt-api is there. */
  noteReach(up: boolean, error: string | null = null) {
    if (this.reach.up === up) {
      if (!up) this.reach.error = error
      return
    }
    const was = this.reach.up
    this.reach = { up, since: this.now(), error: up ? null : error }
    if (was !== null) this.onReachChange(up)
  }

  /** Whether salt-api answers at all: GET / without a token, 2 s at most; any answer below 500 counts. */
  async probe(): Promise<boolean> {
    try {
      const res = await this.send('', { method: 'GET', headers: {} }, 2000, undefined, true)
      await res.body?.cancel()
      return res.status < 500
    } catch {
      return false
    }
  }

  private base(): SaltCreds & { url: string } {
    const c = this.creds()
    if (!c.url || !c.username || !c.password) throw new SaltNotConfigured()
    return c as SaltCreds & { url: string }
  }

  /**
   * One HTTP exchange with timeout; network failures and a refused destination become SaltUnavailable (the reason in
   * Saltdeck's own words). A redirect is never followed: it would carry the login's password or the token elsewhere.
   */
  private async send(path: string, init: RequestInit & { headers: Record<string, string> }, timeoutMs = this.opts.timeoutMs, to?: string, probe = false): Promise<Response> {
    const c = this.base()
    // A password or a token goes only to the address it was given for (`to`), even on a retry after the settings changed.
    const url = to ?? this.root(c.url)
    try {
      await checkUrl(url, this.opts.outboundAllow)
      const res = await fetch(new URL(path, url), {
        ...init,
        headers: { accept: 'application/json', ...init.headers },
        signal: init.signal ?? AbortSignal.timeout(timeoutMs),
        tls: { rejectUnauthorized: c.verify },
        redirect: 'manual',
      } as RequestInit)
      this.noteReach(fromSaltApi(res.status), `HTTP ${res.status}`)
      return res
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw new SaltUnavailable('aborted')
      const reason = networkReason(e)
      // A call that times out says nothing of salt-api itself: with the salt-master stopped salt-api takes the request
      // and waits on the master. GET / (answered by salt-api alone) settles which of the two is gone.
      if ((e as Error).name === 'TimeoutError' && !probe) void this.probe()
      else this.noteReach(false, reason)
      throw new SaltUnavailable(reason)
    }
  }

  /**
   * Whether the salt-master answers: one wheel key.name_match of a name no key has (the master's request server reads
   * its key directories, asking no minion), login included, within `timeoutMs`, no retry. `api` says whether salt-api
   * itself answered; a failure with `api` true is the master's.
   */
  async masterAnswers(timeoutMs: number): Promise<{ up: true } | { up: false; api: boolean; error: string }> {
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      const c = this.base()
      let url = this.tokenUrl
      let token = this.now() < this.expires ? this.token : null
      if (!token || !url) {
        url = this.root(c.url)
        const res = await this.send('login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: c.username, password: c.password, eauth: c.eauth }), signal }, undefined, url)
        const text = await res.text()
        // Credentials salt refused were still judged by the master (eauth goes through it).
        if (res.status === 401 || res.status === 403) return { up: true }
        if (!res.ok) return { up: false, api: await this.answersAlone(res.status), error: `salt-api answered HTTP ${res.status}` }
        const r = (JSON.parse(text) as { return: { token: string; expire: number }[] }).return[0]!
        ;[this.token, this.tokenUrl, this.expires, token] = [r.token, url, r.expire * 1000 - 60_000, r.token]
      }
      const res = await this.send('', { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-token': token }, body: JSON.stringify([{ client: 'wheel', fun: 'key.name_match', match: 'saltdeck-master-check' }]), signal }, undefined, url)
      await res.body?.cancel()
      if (res.status === 401) this.token = null
      if (res.status < 500) return { up: true }
      return { up: false, api: await this.answersAlone(res.status), error: `salt-api answered HTTP ${res.status}` }
    } catch (e) {
      if (e instanceof SaltNotConfigured) throw e
      const timedOut = signal.aborted
      const api = timedOut ? await this.probe() : false
      return { up: false, api, error: timedOut ? `no answer within ${timeoutMs / 1000} s` : e instanceof SaltUnavailable || e instanceof SaltRejected ? e.reason : 'unreadable answer' }
    }
  }

  /**
   * After a failed call through the master: whether salt-api itself still answers, so the failure is the master's. A
   * gateway status is salt-api's own absence; any other error is confirmed by GET /, because a salt-api on its way
   * down may still answer a call with an error and then nothing (that is salt-api going, not the master).
   */
  private async answersAlone(status: number) {
    return fromSaltApi(status) && (await this.probe())
  }

  /** Retries network errors and 5xx with exponential backoff; other answers pass through. */
  private async withRetry(fn: () => Promise<Response>): Promise<Response> {
    let delay = this.opts.backoffMs
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await fn()
        if (res.status < 500 || attempt >= this.opts.attempts) return res
        await res.body?.cancel()
      } catch (e) {
        if (!(e instanceof SaltUnavailable) || attempt >= this.opts.attempts) throw e
      }
      await this.opts.sleep(delay)
      delay *= 2
    }
  }

  private root(url: string) {
    return url.endsWith('/') ? url : url + '/'
  }

  /** Logs in and keeps the session token. */
  async login(): Promise<string> {
    return (await this.signIn()).token
  }

  /** Logs in with one reading of the settings: the password goes to the URL read with it, on every retry. */
  private async signIn(): Promise<{ token: string; url: string }> {
    const c = this.base()
    const url = this.root(c.url)
    const res = await this.withRetry(() =>
      this.send('login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: c.username, password: c.password, eauth: c.eauth }) }, undefined, url),
    )
    const text = await res.text()
    if (!res.ok) throw this.failure(res.status, text)
    try {
      const r = (JSON.parse(text) as { return: { token: string; expire: number }[] }).return[0]!
      this.token = r.token
      this.tokenUrl = url
      // Re-login a minute before salt's own expiry.
      this.expires = r.expire * 1000 - 60_000
      return { token: r.token, url }
    } catch {
      throw new SaltRejected('unexpected login answer', res.status)
    }
  }

  /** A live token, logging in when there is none or it is about to expire. */
  async session(): Promise<string> {
    return (await this.live()).token
  }

  /** A live token with the salt-api that issued it. */
  private async live(): Promise<{ token: string; url: string }> {
    if (!this.token || !this.tokenUrl || this.now() >= this.expires) return this.signIn()
    return { token: this.token, url: this.tokenUrl }
  }

  private failure(status: number, body: string): SaltError {
    const reason = shortReason(status, body)
    if (status === 503 || status === 504) return new SaltUnavailable(reason, status)
    return new SaltRejected(reason, status)
  }

  /** Runs one lowstate chunk and returns `return[0]`; on 401 logs in again once and retries. */
  async run(chunk: Lowstate, timeoutMs?: number): Promise<unknown> {
    const res = await this.answer(chunk, timeoutMs)
    const text = await res.text()
    try {
      return (JSON.parse(text) as { return: unknown[] }).return[0]
    } catch {
      throw new SaltRejected('unreadable answer', res.status)
    }
  }

  /** Runs one lowstate chunk and returns its 2xx answer with the body unread; on 401 logs in again once and retries. */
  answer(chunk: Lowstate, timeoutMs?: number): Promise<Response> {
    return this.authed((token, url) =>
      this.withRetry(() => this.send('', { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-token': token }, body: JSON.stringify([chunk]) }, timeoutMs, url)),
    )
  }

  /** Sends with a live token; a 401 (token expired or revoked on salt's side) logs in again once. Non-2xx answers throw. */
  private async authed(open: (token: string, url: string) => Promise<Response>): Promise<Response> {
    for (let relogin = 0; ; relogin++) {
      const { token, url } = await this.live()
      const res = await open(token, url)
      if (res.status === 401 && relogin === 0) {
        await res.body?.cancel()
        this.token = null
        continue
      }
      if (!res.ok) throw this.failure(res.status, await res.text())
      return res
    }
  }

  /** `local` with the answer's body unread, for answers read as a stream (pkg.list_pkgs of a batch). */
  localAnswer(tgt: string | string[], fun: string, opts: JobOptions & { timeout?: number } = {}) {
    return this.answer({ client: 'local', tgt, fun, ...opts }, opts.timeout ? (opts.timeout + 30) * 1000 : undefined)
  }

  /** The retry and timeout tuning, without the sleep function (for a client in a worker). */
  get tuning(): Omit<ClientOptions, 'sleep'> {
    return { timeoutMs: this.opts.timeoutMs, attempts: this.opts.attempts, backoffMs: this.opts.backoffMs, outboundAllow: this.opts.outboundAllow }
  }

  /** The credentials in use now. */
  credentials(): SaltCreds {
    return this.creds()
  }

  /** `local`: a synchronous job; returns {minion: return}. */
  local(tgt: string | string[], fun: string, opts: JobOptions & { timeout?: number } = {}) {
    return this.run({ client: 'local', tgt, fun, ...opts }, opts.timeout ? (opts.timeout + 30) * 1000 : undefined) as Promise<Record<string, unknown>>
  }

  /** `local_async`: starts a job; returns {jid, minions} (or {} when nothing matched). */
  localAsync(tgt: string | string[], fun: string, opts: JobOptions = {}) {
    return this.run({ client: 'local_async', tgt, fun, ...opts }) as Promise<{ jid?: string; minions?: string[] }>
  }

  /** `runner`: the runner function's own return value. */
  runner(fun: string, kwarg: Record<string, unknown> = {}) {
    return this.run({ client: 'runner', fun, kwarg })
  }

  /** `runner_async`: starts a runner job on the master; returns {jid, tag}. */
  runnerAsync(fun: string, arg: unknown[] = [], kwarg: Record<string, unknown> = {}) {
    return this.run({ client: 'runner_async', fun, arg, kwarg }) as Promise<{ jid?: string; tag?: string }>
  }

  /** `wheel`: unwraps the {tag, data: {return, success}} envelope; a failed wheel call is a SaltRejected. */
  async wheel(fun: string, args: Record<string, unknown> = {}): Promise<unknown> {
    const env = (await this.run({ client: 'wheel', fun, ...args })) as { data?: { return?: unknown; success?: boolean } }
    if (env?.data?.success === false) throw new SaltRejected(typeof env.data.return === 'string' ? env.data.return.slice(0, 200) : `${fun} failed`, 200)
    return env?.data?.return
  }

  /** Opens GET /events (SSE); the caller reads the body. A 401 logs in again once. */
  events(signal: AbortSignal): Promise<Response> {
    return this.authed((token, url) => this.send('events', { method: 'GET', headers: { 'x-auth-token': token, accept: 'text/event-stream' }, signal }, undefined, url))
  }
}
