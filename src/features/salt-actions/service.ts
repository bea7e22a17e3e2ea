/** Key actions done through salt-api on an operator's behalf, recorded as the facts they cause. */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { noFacts, type KeyAct } from '../../salt/facts'
import { keyList } from '../../salt/replies'
import { SaltRejected } from '../../salt/errors'
import { NotFound } from '../../lib/errors'
import { applyFacts } from '../ingest/apply'

/** Which other key lists a wheel key action may take a key from. */
const INCLUDE = { accept: { include_rejected: true, include_denied: true }, reject: { include_accepted: true, include_denied: true }, delete: {} }
/** The key list a key is in after each action (null: in none). */
const AFTER: Record<'accept' | 'reject' | 'delete', KeyAct | null> = { accept: 'accept', reject: 'reject', delete: null }
const WORD: Record<KeyAct, string> = { accept: 'accepted', pend: 'pending', reject: 'rejected', denied: 'denied', delete: 'deleted' }

/** The list a key is in now, by salt's key list; undefined when salt has no such key. */
async function keyState(client: SaltClient, id: string, now: number) {
  return keyList(await client.wheel('key.list_all'), now).keys.find((k) => k.minionId === id)?.act
}

/**
 * Runs a wheel key action and judges it by salt's key list before and after, not by the action's reply: the replies
 * differ between versions (3008's key.delete answers the keys matching after the delete: none). NotFound when salt has
 * no such key; the change is recorded at once with the acting user.
 */
export async function keyAction(deps: AppDeps, client: SaltClient, who: string, id: string, act: 'accept' | 'reject' | 'delete') {
  if ((await keyState(client, id, deps.clock.now())) === undefined) throw new NotFound('Key')
  await client.wheel(`key.${act}`, { match: id, ...INCLUDE[act] })
  const now = (await keyState(client, id, deps.clock.now())) ?? null
  if (now !== AFTER[act]) throw new SaltRejected(`salt-api answered, but the key of ${id} is ${now ? `still ${WORD[now]}` : 'gone'}`, 200)
  await applyFacts(deps, [{ ...noFacts(), keys: [{ minionId: id, act, ts: deps.clock.now() }] }], who)
}
