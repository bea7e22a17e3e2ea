/** In-process counters for /metrics: requests by route, method and status, with their summed durations. */

/** Request counters of one running service. */
export class Metrics {
  private requests = new Map<string, { route: string; method: string; status: number; count: number; seconds: number }>()
  private signIns = new Map<string, { provider: string; outcome: string; count: number }>()
  /** Full garbage collections the memory guard asked for because RSS passed its soft limit. */
  memoryCollections = 0
  /** Seconds the serving thread spent asking for them in all, and the longest ask: the pause a request could meet. */
  memoryCollectionSeconds = 0
  memoryCollectionLongest = 0

  /** Counts one of the memory guard's full collections and its length. */
  memoryCollection(seconds: number) {
    this.memoryCollections++
    this.memoryCollectionSeconds += seconds
    this.memoryCollectionLongest = Math.max(this.memoryCollectionLongest, seconds)
  }

  /** Counts one answered request under its route pattern (never the raw path: ids would explode the label set). */
  request(route: string, method: string, status: number, seconds: number) {
    const key = `${method} ${route} ${status}`
    const r = this.requests.get(key)
    if (r) {
      r.count++
      r.seconds += seconds
    } else this.requests.set(key, { route, method, status, count: 1, seconds })
  }

  /** Counts one sign-in attempt by provider (local, ldap, oidc) and outcome. */
  signIn(provider: string, outcome: string) {
    const key = `${provider} ${outcome}`
    const r = this.signIns.get(key)
    if (r) r.count++
    else this.signIns.set(key, { provider, outcome, count: 1 })
  }

  /** Every sign-in counter, sorted for a stable exposition. */
  signInRows() {
    return [...this.signIns.values()].sort((a, b) => a.provider.localeCompare(b.provider) || a.outcome.localeCompare(b.outcome))
  }

  /** Every request counter, sorted for a stable exposition. */
  requestRows() {
    return [...this.requests.values()].sort((a, b) => a.route.localeCompare(b.route) || a.method.localeCompare(b.method) || a.status - b.status)
  }
}

/** Escapes a label value for the Prometheus text format. */
const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

/** Builds the Prometheus text exposition, one family at a time. */
export class Exposition {
  private lines: string[] = []

  /** Adds a family's HELP and TYPE and its samples. */
  family(name: string, type: 'counter' | 'gauge', help: string, samples: [labels: Record<string, string | number>, value: number][]) {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
    for (const [labels, value] of samples) {
      const l = Object.entries(labels).map(([k, v]) => `${k}="${esc(String(v))}"`).join(',')
      this.lines.push(`${name}${l ? `{${l}}` : ''} ${Number.isFinite(value) ? value : 0}`)
    }
    return this
  }

  /** The document, newline-terminated as the format wants. */
  text() {
    return this.lines.join('\n') + '\n'
  }
}
