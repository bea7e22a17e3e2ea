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
  /** True when `minions` is the publish's own list (`salt/job/<jid>/new` from the master, or salt-api's answer to a publish). */
  published?: boolean
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
  /** The schedule a minion's own scheduled job names (`schedule`); such a job has no publish. */
  schedule?: string | null
}

/** Why an event from the bus is no fact at all: a malformed jid, or a minion's event under a tag only the master fires. */
export type RefusalReason = 'jid' | 'forged'

/** An event refused by the normaliser, for the count and the log (the tag as salt gave it). */
export interface Refusal {
  reason: RefusalReason
  tag: string
}

/** What an event that is only a hint asks for: a keys or a presence tick (salt/auth, salt/presence/*, minion starts). */
export type Hint = 'keys' | 'presence'

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

/** A minion's grains as it answered local grains.items (a poller's reply: salt's own, never a bus claim). */
export interface MinionGrains {
  id: string
  grains: Record<string, unknown>
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
  /** Grains the minions answered (the grains poller, a newcomer's fill). */
  grains?: MinionGrains[]
  /**
   * True for facts read from the event bus: claims, since any minion can fire any tag there (`event.fire_master`);
   * the features store of them only what they can trust. Facts from runner and wheel replies are salt's own.
   */
  bus?: boolean
  /** Events the normaliser refused. */
  refused?: Refusal[]
  /** Events that only ask Saltdeck to look (a keys or presence tick). */
  hints?: Hint[]
}

/** An empty batch. */
export const noFacts = (): SaltFacts => ({ jobs: [], returns: [], keys: [], presence: [], starts: [] })
