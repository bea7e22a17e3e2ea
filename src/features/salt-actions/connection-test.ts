/**
 * The salt connection test: a login and a cheap call with a given connection, told in Saltdeck's own sentences. What
 * the address answered (a page, a banner) is never repeated: the test must not read other servers for whoever presses it.
 */
import { SaltClient, type SaltCreds } from '../../salt/client'
import { SaltNotConfigured, SaltRejected, SaltUnavailable } from '../../salt/errors'

/** The outcome of a connection test (contract §5). */
export interface ConnectionTest {
  ok: boolean
  detail: string
  minion_count: number | null
}

/** What a failed step says: the status salt-api answered or why it could not be reached, never its body. */
export function failureDetail(e: unknown, step: 'login' | 'keys'): string {
  if (e instanceof SaltNotConfigured) return e.detail
  if (e instanceof SaltUnavailable) return e.httpStatus ? `salt-api answered ${e.httpStatus}: unavailable.` : `salt-api could not be reached: ${e.reason}.`
  if (e instanceof SaltRejected) {
    const s = e.httpStatus
    if (s >= 300 && s < 400) return `salt-api answered ${s}, a redirect, which Saltdeck does not follow (it would carry the password elsewhere): enter the address it points to.`
    if (step === 'login' && s === 401) return 'salt-api answered 401: the username, password or eauth was not accepted.'
    if (s >= 200 && s < 300) return step === 'login' ? `The address answered ${s}, but not as salt-api does.` : 'Logged in, but salt-api refused key.list_all: the user needs @wheel rights.'
    return `salt-api answered ${s}.`
  }
  return 'salt-api\'s answer could not be read.'
}

/**
 * Tries a login and a cheap call with the given connection: the answer says how it went.
 * Retries a 5xx twice, quickly: salt-api 3006 answers concurrent requests with a 500 now and then (its threads race on
 * the master's `.root_key` file), and a button that says "failed" on a healthy master would mislead the operator.
 */
export async function testConnection(creds: SaltCreds, outboundAllow: string | null): Promise<ConnectionTest> {
  const c = new SaltClient(() => creds, { attempts: 3, backoffMs: 250, timeoutMs: 5_000, outboundAllow })
  let step: 'login' | 'keys' = 'login'
  try {
    await c.login()
    step = 'keys'
    const keys = (await c.wheel('key.list_all')) as { minions?: unknown[] }
    const n = Array.isArray(keys?.minions) ? keys.minions.length : 0
    return { ok: true, detail: `Connected to salt-api as ${creds.username}; ${n} accepted minion${n === 1 ? '' : 's'}.`, minion_count: n }
  } catch (e) {
    return { ok: false, detail: failureDetail(e, step), minion_count: null }
  }
}
