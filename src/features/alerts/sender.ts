/**
 * Drains the deliveries (contract §11): due ones are sent with bounded concurrency and a deadline each; a failure is
 * retried after 30 s, doubling to 1 h, for 24 h; every attempt is recorded. A channel has at most one attempt under way,
 * so a slow or stuck receiver holds one slot and the other channels' deliveries go on. All state is in the database, so
 * a restart (or kill -9) resumes where it stopped, and a channel that is down for hours costs rows, not memory.
 */
import type { AppDeps } from '../../deps'
import { channelSecrets } from './channel-store'
import { channelToSend } from './channel-row-store'
import { claimDue, notificationBody, recordAttempt, type DueDelivery } from './outbox-store'

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

/**
 * How long past an attempt's cut-off its claim holds: a live sender records the attempt within it; one killed
 * mid-attempt leaves the delivery due again after the deadline, the grace and this (at least once, and soon: a
 * restart or another instance sends it some 15 s after the claim).
 */
export const CLAIM_MARGIN_MS = 3000

/** The sender of one service. */
export class DeliverySender {
  private timer: ReturnType<typeof setInterval> | null = null
  /** The attempt under way per channel id. */
  private inflight = new Map<string, Promise<void>>()
  /** The claim under way: one at a time, so two ticks never start two attempts to one channel. */
  private claiming: Promise<void> | null = null

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
    // A failed claim was the tick's to report; stopping only waits for it.
    await this.claiming?.catch(() => {})
    await Promise.all(this.inflight.values())
  }

  /**
   * Starts sending the due deliveries, up to the concurrency and one per channel (the channel's oldest due one; none
   * for a channel with an attempt under way); resolves when those sends are done.
   */
  async tick() {
    // A tick while another is claiming leaves it to that one (the claim reads which channels are busy).
    if (this.claiming) return
    let started: Promise<void>[] = []
    this.claiming = (async () => {
      const free = this.opts.concurrency - this.inflight.size
      if (free <= 0) return
      const now = this.deps.clock.now()
      const due = await claimDue(this.deps.db, now, [...this.inflight.keys()], free, now + this.opts.timeoutMs + DEADLINE_GRACE_MS + CLAIM_MARGIN_MS)
      // Marked busy before the claim ends: the next claim leaves these channels alone.
      started = due.map((d) => {
        const p = this.deliver(d).finally(() => this.inflight.delete(d.channel_id))
        this.inflight.set(d.channel_id, p)
        return p
      })
    })()
    try {
      await this.claiming
    } finally {
      this.claiming = null
    }
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
  private async deliver(d: DueDelivery) {
    const db = this.deps.db
    const channel = await channelToSend(db, d.channel_id)
    const body = await notificationBody(db, d.notification_id)
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
    await db.tx((tx) =>
      recordAttempt(tx, { id: d.id, at: now, ok: result.ok, detail: result.detail, attempts, nextAt: result.ok || giveUp ? null : now + retryDelay(attempts) }))
    if (!result.ok) this.deps.log.warn('alert delivery failed', { delivery: d.id, channel: d.channel_id, attempts, error: result.detail })
  }
}
