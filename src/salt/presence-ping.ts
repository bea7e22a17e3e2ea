/**
 * Saltdeck's presence ping through runner manage.status. The runner publishes its test.ping under a jid of its own
 * (salt's LocalClient.run_job with jid ""), credited to the user the master runs as, so Saltdeck cannot mark the job
 * before salt reports it. It can choose the target: manage.status passes `tgt` and `tgt_type` on to the publish, so
 * Saltdeck asks for a pcre that matches every minion id and names itself, and a test.ping to exactly that target is
 * known as Saltdeck's own wherever it is seen (the event stream, or the job cache after a restart).
 */

/** The target of the presence ping: a regular expression comment, then `.*` (every minion id). */
export const PRESENCE_TARGET = '(?#saltdeck-presence).*'
/** The target type salt is given with it. */
export const PRESENCE_TGT_TYPE = 'pcre'

/** The runner manage.status arguments of a presence tick: every minion, by the target above. */
export const presenceStatusArgs = () => ({ tgt: PRESENCE_TARGET, tgt_type: PRESENCE_TGT_TYPE })

/** Whether a job is Saltdeck's presence ping (test.ping to the presence target). */
export const isPresencePing = (j: { fun: string | null; target: string | null }) => j.fun === 'test.ping' && j.target === PRESENCE_TARGET
