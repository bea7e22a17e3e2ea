/**
 * The cluster bus: news one instance tells every other instance on the same database (a settings section changed,
 * credentials changed, activity events stored). On PostgreSQL it is LISTEN/NOTIFY on one channel; on SQLite (one
 * instance by the serve lock) an in-process hub that tests can share between services.
 */

/** What travels on the bus: a topic and a short text (NOTIFY payloads stay far below PostgreSQL's 8,000 bytes). */
export interface BusMessage {
  topic: string
  data: string
}

/** Counts for /metrics. */
export interface BusStats {
  sent: number
  received: number
  /** Times the listening connection was (re)established: news may have been missed before each but the first. */
  listens: number
}

/** How an engine carries the bus: send a text on the channel, and listen to it (with news of each (re)connect). */
export interface BusTransport {
  send(text: string): Promise<void>
  listen(fn: (text: string) => void, onListen: () => void): Promise<() => Promise<void>>
}

/** The one PostgreSQL channel the bus uses. */
export const BUS_CHANNEL = 'saltdeck_cluster'

type Handler = (data: string) => void

/** One instance's end of the bus: publish to the others, subscribe to what they publish. */
export class Bus {
  readonly stats: BusStats = { sent: 0, received: 0, listens: 0 }
  private handlers = new Map<string, Set<Handler>>()
  private resync = new Set<() => void>()
  private unlisten: (() => Promise<void>) | null = null

  constructor(readonly instanceId: string, private readonly transport: BusTransport, private readonly onError: (e: unknown) => void = () => {}) {}

  /** Starts listening; resolves once the listening connection is up. */
  async start() {
    this.unlisten ??= await this.transport.listen((text) => this.receive(text), () => {
      // After the first, each listen follows a lost connection: what was said meanwhile is gone, so re-read it all.
      if (this.stats.listens++ > 0) for (const fn of [...this.resync]) fn()
    })
  }

  private receive(text: string) {
    let m: { from: string; topic: string; data: string }
    try {
      m = JSON.parse(text)
    } catch {
      return
    }
    // NOTIFY reaches the sender's own listening session too: its own news was acted on when it was made.
    if (m.from === this.instanceId) return
    this.stats.received++
    for (const fn of [...(this.handlers.get(m.topic) ?? [])]) {
      try {
        fn(m.data)
      } catch (e) {
        this.onError(e)
      }
    }
  }

  /** Tells every other instance; never throws (a lost notification is covered by the receivers' backstops). */
  publish(topic: string, data = '') {
    this.stats.sent++
    this.transport.send(JSON.stringify({ from: this.instanceId, topic, data })).catch(this.onError)
  }

  /** Calls `fn` with each message of `topic` from another instance; returns the unsubscribe function. */
  subscribe(topic: string, fn: Handler): () => void {
    let set = this.handlers.get(topic)
    if (!set) this.handlers.set(topic, (set = new Set()))
    set.add(fn)
    return () => void set.delete(fn)
  }

  /** Calls `fn` after the listening connection came back: news may have been missed, so state is read anew. */
  onResync(fn: () => void): () => void {
    this.resync.add(fn)
    return () => void this.resync.delete(fn)
  }

  /** Stops listening. */
  async stop() {
    const u = this.unlisten
    this.unlisten = null
    await u?.()
  }
}

/** An in-process transport: every bus made on one hub hears the others (SQLite's one instance hears nobody). */
export class LocalHub {
  private listeners = new Set<(text: string) => void>()

  /** A transport on this hub. */
  transport(): BusTransport {
    return {
      send: async (text) => {
        // Delivered after the publisher's synchronous work, as NOTIFY is delivered after its commit.
        queueMicrotask(() => {
          for (const l of [...this.listeners]) l(text)
        })
      },
      listen: async (fn, onListen) => {
        this.listeners.add(fn)
        onListen()
        return async () => void this.listeners.delete(fn)
      },
    }
  }
}
