/**
 * Salt facts: what salt said happened, in salt's own terms, read from the event stream or from runner and wheel replies.
 * Plain data with no storage meaning; the features decide what to keep of them.
 */

/** A job salt started (`salt/job/<jid>/new`, or an entry of the job cache). */
export interface JobStarted {
  jid: string
  fun: string
  target: string | null
  tgtType: string | null
  user: string | null
  /** The arguments as salt gave them; undefined when the source did not say. */
  arg?: unknown
  /** The minions salt expected to answer; null when the source did not say. */
  minions: string[] | null
  /** When the job started (epoch ms). */
  startedAt: number
  /** When salt reported it (epoch ms). */
  ts: number
}

/** One minion's return of a job (`salt/job/<jid>/ret/<id>`, or a job cache lookup). */
export interface JobReturned {
  jid: string
  minionId: string
  fun: string
  ret: unknown
  retcode: number | null
  success: boolean | null
  /** When it was received (epoch ms). */
  ts: number
  /** `_stamp` of the return event (epoch ms), when there was one. */
  stampMs: number | null
  /** The arguments the return reports (`fun_args`); undefined when it does not say. */
  funArgs?: unknown
}

/** What salt does to a minion key; `denied` is a second key offered under an accepted id. */
export type KeyAct = 'pend' | 'accept' | 'reject' | 'delete' | 'denied'

/** A key state change reported by salt. */
export interface KeyChange {
  minionId: string
  act: KeyAct
  ts: number
}

/** A key's fingerprint as the master reports it (wheel key.finger), with the key state whose directory holds it. */
export interface KeyFingerprint {
  minionId: string
  act: Exclude<KeyAct, 'delete'>
  fingerprint: string
}

/** A minion seen coming online or going away. */
export interface PresenceChange {
  minionId: string
  online: boolean
  ts: number
}

/** A batch of salt facts, in the order salt reported them. */
export interface SaltFacts {
  jobs: JobStarted[]
  returns: JobReturned[]
  keys: KeyChange[]
  presence: PresenceChange[]
  /** A full present list (salt/presence/present, manage.present): every other accepted minion is offline. */
  presentList?: { ids: string[]; ts: number }
  /** The complete key list (wheel key.list_all): a stored key missing from it was deleted. */
  keyList?: { keys: { minionId: string; act: KeyAct }[]; ts: number }
  /** Key fingerprints (wheel key.finger); each belongs to the key of the state it names. */
  keyFingerprints?: KeyFingerprint[]
  /** Minion starts (salt sends `salt/minion/<id>/start` and the legacy `minion_start` for one start). */
  starts: { minionId: string; ts: number }[]
}

/** An empty batch. */
export const noFacts = (): SaltFacts => ({ jobs: [], returns: [], keys: [], presence: [], starts: [] })
