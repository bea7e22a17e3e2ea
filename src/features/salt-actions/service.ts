/** Key actions done through salt-api on an operator's behalf, recorded as the facts they cause. */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { noFacts } from '../../salt/facts'
import { keyActionMatched } from '../../salt/replies'
import { NotFound } from '../../lib/errors'
import { applyFacts } from '../ingest/apply'

/** Which other key lists a wheel key action may take a key from. */
const INCLUDE = { accept: { include_rejected: true, include_denied: true }, reject: { include_accepted: true, include_denied: true }, delete: {} }

/** Runs a wheel key action; the key change is recorded at once with the acting user. NotFound when no key matched. */
export async function keyAction(deps: AppDeps, client: SaltClient, who: string, id: string, act: 'accept' | 'reject' | 'delete') {
  const reply = await client.wheel(`key.${act}`, { match: id, ...INCLUDE[act] })
  if (!keyActionMatched(reply, id)) throw new NotFound('Key')
  applyFacts(deps, [{ ...noFacts(), keys: [{ minionId: id, act, ts: deps.clock.now() }] }], who)
}
