/**
 * Drains the deliveries (contract §11): due ones are sent with bounded concurrency and a deadline each; a failure is
 * retried after 30 s, doubling to 1 h, for 24 h; every attempt is recorded. A channel has at most one attempt under way,
 * so a slow or stuck receiver holds one slot and the other channels' deliveries go on. All state is in the database, so
 * a restart (or kill -9) resumes where it stopped, and a channel that is down for hours costs rows, not memory.
 */
import type { AppDeps } from '../../deps'
import { channelSecrets } from './channel-store'

/** What sends one notification to one channel. */
export type SendFn = (type: string, config: Record<string, unknown>, body: unknown, opts: { publicUrl: string | null; timeoutMs: number; outboundAllow: string | null }) => Promise<{ ok: boolean; detail: string }>

/** The first retry waits this long; each next one twice as long, up to RETRY_MAX_MS; after GIVE_UP_MS a delivery fails. */
export const RETRY_FIRST_MS = 30_000
export const RETRY_MAX_MS = 3600_000
export const GIVE_UP_MS = 24 * 3600_000

/** How long past its deadline an attempt may run before the sender records it failed and frees its slot anyway. */
export const DEADLINE_GRACE_MS = 2000

/** The wait before the next attempt after `attempts` failed ones. */
export const retryDelay = (attempts: number) => Math.min(RETRY_FIRST_MS * 2 ** Math.max(0, attempts - 1), RETRY_MAX_MS)

interface Due {
  id: string
  notification_id: string
  channel_id: string
  attempts: number
  created_at: number
}

/** The sender of one service. */
export class DeliverySender {
  private timer: ReturnType<typeof setInterval> | null = null
  /** The attempt under way per channel id. */
  private inflight = new Map<string, Promise<void>>()

  /** `timeoutMs` is one attempt's whole deadline (connect, greeting, send, answer). */
  constructor(private deps: AppDeps, private send: SendFn, private opts: { concurrency: number; timeoutMs: number; everyMs: number } = { concurrency: 4, timeoutMs: 10_000, everyMs: 1000 }) {}

  /** Checks for due deliveries every `everyMs`. */
  start() {
    this.timer ??= setInterval(() => void this.tick(), this.opts.everyMs)
  }

  /** Stops checking and waits for the sends under way. */
  async stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await Promise.all(this.inflight.values())
  }

  /**
   * Starts sending the due deliveries, up to the concurrency and one per channel (the channel's oldest due one; none
   * for a channel with an attempt under way); resolves when those sends are done.
   */
  async tick() {
    const free = this.opts.concurrency - this.inflight.size
    if (free <= 0) return
    const due = this.deps.db.$client
      .query<Due, [number, string, number]>(
        `SELECT id, notification_id, channel_id, attempts, created_at FROM (
           SELECT *, row_number() OVER (PARTITION BY channel_id ORDER BY next_attempt_at, id) AS nth FROM alert_deliveries
           WHERE status = 'pending' AND next_attempt_at <= ?1 AND channel_id NOT IN (SELECT value FROM json_each(?2)))
         WHERE nth = 1 ORDER BY next_attempt_at LIMIT ?3`,
      )
      .all(this.deps.clock.now(), JSON.stringify([...this.inflight.keys()]), free)
    const started = due.map((d) => {
      const p = this.deliver(d).finally(() => this.inflight.delete(d.channel_id))
      this.inflight.set(d.channel_id, p)
      return p
    })
    await Promise.all(started)
  }

  /** A send, bounded: a channel that overruns its own deadline is cut off here, so no attempt holds a slot for long. */
  private bounded(send: Promise<{ ok: boolean; detail: string }>) {
    const limit = this.opts.timeoutMs + DEADLINE_GRACE_MS
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<{ ok: boolean; detail: string }>((ok) => {
      timer = setTimeout(() => ok({ ok: false, detail: `The attempt did not finish within ${Math.round(limit / 1000)} s.` }), limit)
    })
    return Promise.race([send, late]).finally(() => clearTimeout(timer))
  }

  /** One attempt of one delivery, and its record. */
  private async deliver(d: Due) {
    const db = this.deps.db.$client
    const channel = db.query<{ type: string; config: string; enabled: number }, [string]>('SELECT type, config, enabled FROM alert_channels WHERE id = ?1').get(d.channel_id)
    const body = db.query<{ body: string }, [string]>('SELECT body FROM alert_notifications WHERE id = ?1').get(d.notification_id)?.body
    let result: { ok: boolean; detail: string }
    if (!channel || !body) result = { ok: false, detail: 'The channel or the notification no longer exists.' }
    else if (!channel.enabled) result = { ok: false, detail: 'The channel is disabled.' }
    else {
      try {
        result = await this.bounded(this.send(channel.type, channelSecrets(this.deps, JSON.parse(channel.config)), JSON.parse(body), { publicUrl: this.deps.config.publicUrl, timeoutMs: this.opts.timeoutMs, outboundAllow: this.deps.config.outboundAllow }))
      } catch (e) {
        result = { ok: false, detail: `Sending failed: ${(e as Error).message}` }
      }
    }
    const now = this.deps.clock.now()
    const attempts = d.attempts + 1
    const gone = !channel || !body
    const giveUp = gone || now - d.created_at >= GIVE_UP_MS
    db.transaction(() => {
      db.query('INSERT INTO alert_attempts (delivery_id, at, ok, detail) VALUES (?1, ?2, ?3, ?4)').run(d.id, now, result.ok ? 1 : 0, result.detail)
      if (result.ok) db.query("UPDATE alert_deliveries SET status = 'sent', attempts = ?2, sent_at = ?3, last_error = NULL, next_attempt_at = NULL WHERE id = ?1").run(d.id, attempts, now)
      else
        db.query('UPDATE alert_deliveries SET status = ?2, attempts = ?3, last_error = ?4, next_attempt_at = ?5 WHERE id = ?1').run(
          d.id, giveUp ? 'failed' : 'pending', attempts, result.detail, giveUp ? null : now + retryDelay(attempts),
        )
    })()
    if (!result.ok) this.deps.log.warn('alert delivery failed', { delivery: d.id, channel: d.channel_id, attempts, error: result.detail })
  }
}
