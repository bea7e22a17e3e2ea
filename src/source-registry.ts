/**
 * The one registry of salt sources at runtime (contract §15 "Several masters"): the `default` source's runtime (the salt
 * settings section; it also does the fleet-wide work) and one runtime per other source, each with its own salt client,
 * event stream and pollers, started, restarted and stopped as sources are added, changed and removed.
 */
import type { AppDeps, SourceSide } from './deps'
import type { SaltCreds } from './salt/client'
import { SaltRuntime, SOURCE_POLLERS, type RuntimeOptions } from './runtime'
import { sourceCredentials, sourceNames } from './features/salt-sources/service'
import { DEFAULT_SOURCE } from './features/salt-sources/schema'

/** A source's connection before it is read (or after it is gone): nothing to log in with. */
const NONE: SaltCreds = { url: null, username: null, password: null, verify: true, eauth: 'pam' }

/**
 * Where a source's runtime runs its work: alone, at once (tests, SQLite's one instance); in a cluster, on the instance
 * that gains the source's leadership (server.ts competes for it and withdraws when the source is removed).
 */
export interface SourceHost {
  run(name: string, rt: SaltRuntime): Promise<void> | void
  withdraw(name: string): Promise<void> | void
}

/** Runs every source's work here, now. */
const ALONE: SourceHost = { run: (_name, rt) => rt.start(), withdraw: () => {} }

/** Every salt source's runtime; the `default` one is built by the caller and lent to the registry. */
export class SourceRegistry {
  private running = new Map<string, SaltRuntime>()
  private creds = new Map<string, SaltCreds>()
  /** Changes applied one at a time, in order: a quick add-then-delete never leaves a runtime behind. */
  private queue: Promise<unknown> = Promise.resolve()

  /** `options` shape every other source's runtime (tests shorten timings). */
  constructor(readonly deps: AppDeps, readonly primary: SaltRuntime, private options: RuntimeOptions = {}, private host: SourceHost = ALONE) {
    primary.others = () => [...this.running.values()]
  }

  /** The running sides, `default` first. */
  sides(): SourceSide[] {
    return this.primary.sources()
  }

  /** One source's runtime (`default`: the primary), or undefined when it does not run. */
  runtime(name: string): SaltRuntime | undefined {
    return name === DEFAULT_SOURCE ? this.primary : this.running.get(name)
  }

  /** Starts a runtime for every stored source beyond `default` (the caller starts the primary). */
  start() {
    return this.enqueue(async () => {
      for (const name of await sourceNames(this.deps)) if (name !== DEFAULT_SOURCE) await this.apply(name)
    })
  }

  /** A source was added, changed or removed: its runtime starts, re-reads its connection, or stops. */
  changed(name: string) {
    return this.enqueue(() => this.apply(name))
  }

  /**
   * After the bus lost notices (its connection came back): each source added, changed or removed meanwhile is applied,
   * and the others are left running as they are.
   */
  resync() {
    return this.enqueue(async () => {
      const stored = new Set(await sourceNames(this.deps))
      for (const name of [...this.running.keys()]) if (!stored.has(name)) await this.drop(name)
      for (const name of stored) {
        if (name === DEFAULT_SOURCE) continue
        const same = this.running.has(name) && JSON.stringify(await sourceCredentials(this.deps, name)) === JSON.stringify(this.creds.get(name))
        if (!same) await this.apply(name)
      }
    })
  }

  /** A settings section changed: the pollers' timing applies to every source (the salt section is the primary's alone). */
  settingsChanged(section: string) {
    if (section !== 'pollers') return Promise.resolve()
    return this.enqueue(async () => {
      for (const rt of this.running.values()) await rt.settingsChanged(section)
    })
  }

  /** Stops every other source's runtime (the caller stops the primary). */
  stop() {
    return this.enqueue(async () => {
      for (const name of [...this.running.keys()]) await this.drop(name)
    })
  }

  private enqueue(step: () => Promise<void>) {
    const next = this.queue.then(step, step)
    this.queue = next.catch((e) => this.deps.log.error('salt source change failed', { error: e instanceof Error ? e.message : String(e) }))
    return this.queue as Promise<void>
  }

  private async apply(name: string) {
    if (name === DEFAULT_SOURCE) return
    const creds = await sourceCredentials(this.deps, name)
    if (!creds) return this.drop(name)
    this.creds.set(name, creds)
    const rt = this.running.get(name)
    // A changed connection: a new login, a new stream and the pollers rescheduled, as the salt section's change does.
    if (rt) return rt.settingsChanged('salt')
    const made = new SaltRuntime(this.deps, { ...this.options, source: name, only: SOURCE_POLLERS, credentials: () => this.creds.get(name) ?? NONE })
    this.running.set(name, made)
    this.deps.log.info('salt source started', { source: name })
    await this.host.run(name, made)
  }

  private async drop(name: string) {
    const rt = this.running.get(name)
    this.running.delete(name)
    this.creds.delete(name)
    if (!rt) return
    await this.host.withdraw(name)
    await rt.stop()
    this.deps.log.info('salt source stopped', { source: name })
  }
}
