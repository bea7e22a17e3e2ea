/**
 * Salt versions: reading a version string, and the known upstream faults of salt-api and the master that bite a
 * console, each with the releases it affects, its upstream issue and what Saltdeck does about it.
 */

/** A Salt version as numbers: 3008.2 → [3008, 2]; "3007.0rc1" → [3007, 0]; null when unreadable. */
export function parseVersion(v: string | null | undefined): [number, number] | null {
  const m = /^(\d{4})(?:\.(\d+))?/.exec(String(v ?? '').trim())
  return m ? [Number(m[1]), Number(m[2] ?? 0)] : null
}

/** Whether `v` lies within [from, to] (both inclusive, as major.minor). */
export function within(v: string | null | undefined, from: string, to: string | null): boolean {
  const p = parseVersion(v)
  const a = parseVersion(from)!
  const b = to ? parseVersion(to)! : [Infinity, Infinity]
  if (!p) return false
  const cmp = (x: number[], y: number[]) => x[0]! - y[0]! || x[1]! - y[1]!
  return cmp(p, a) >= 0 && cmp(p, b) <= 0
}

/** One known upstream fault. */
export interface KnownFault {
  id: string
  /** First and last affected release; `to` null = every later release too. */
  from: string
  to: string | null
  /** The upstream issue, e.g. "saltstack/salt#69958". */
  issue: string
  /** What goes wrong, in a sentence. */
  summary: string
  /** What Saltdeck does about it, in a sentence. */
  handling: string
}

/** The faults Saltdeck knows of and handles. */
export const KNOWN_FAULTS: KnownFault[] = [
  {
    id: 'api-session-expiry', from: '3008.0', to: '3008.1', issue: 'saltstack/salt#68999',
    summary: 'salt-api invalidates a session about a minute after login, although /login promised hours.',
    handling: 'A 401 makes the client log in again once and repeat the call; the poller tick and the event stream go on without an error.',
  },
  {
    id: 'events-traceback', from: '3008.2', to: '3008.2', issue: 'saltstack/salt#69958',
    summary: 'GET /events answers "Unrecoverable error in the server." at once, so no event arrives.',
    handling: 'After three failed connections while salt-api answers, the stream is marked broken and retried every 5 minutes; the jobs and fleet pollers run every 30 s until it delivers again.',
  },
  {
    id: 'manage-status-up', from: '3007.0', to: '3008.2', issue: 'saltstack/salt#69582',
    summary: 'runner manage.status counts minions that did not answer as up.',
    handling: 'With presence method "status", presence comes from a local test.ping instead, counting only the minions that answered.',
  },
  {
    id: 'split-grains-cache', from: '3008.0', to: null, issue: 'saltstack/salt#69775',
    summary: 'The master\'s minion-data cache is split per kind and not migrated, so runner cache.grains is empty after an upgrade until minions re-sync.',
    handling: 'Grains are asked of the minions (local grains.items), never read from the master\'s cache.',
  },
  {
    id: 'key-finger-armor', from: '3008.0', to: '3008.3', issue: 'saltstack/salt#69970',
    summary: 'The master fingerprints a key with its BEGIN/END lines (salt-key -f, wheel key.finger), the minion without them, so `salt-call --local key.finger` prints another value.',
    handling: 'The Keys page gives the command that prints the master\'s value on the minion: printf %s "$(cat /etc/salt/pki/minion/minion.pub)" | sha256sum.',
  },
  {
    id: 'logout-revokes', from: '3008.3', to: null, issue: 'saltstack/salt#69067',
    summary: 'POST /logout revokes the eauth token (before, it only expired the cookie).',
    handling: 'The client forgets its token before logging out (at stop and when the salt settings change), and a call that meets the 401 logs in again.',
  },
]

/** The known faults of one master version. */
export const faultsOf = (version: string | null | undefined) => KNOWN_FAULTS.filter((f) => within(version, f.from, f.to))

/** Whether runner manage.status on this master counts silent minions as up (3007.0–3008.2). */
export const manageStatusLies = (version: string | null | undefined) => faultsOf(version).some((f) => f.id === 'manage-status-up')
