/**
 * Whether this instance's secret key is the one the database's secrets are sealed under (contract §15): every instance
 * on one database needs the same key, and one with another would store secrets the others cannot read and fail to read
 * theirs. The first instance seals a known text under its key in the settings row `key_check`; every start opens it.
 */
import type { AppDeps } from '../../deps'
import { decrypt, encrypt } from '../../lib/secret'
import { insertSectionOnce, sectionRow } from './store'

/** The settings row holding the sealed text (not a settings section: never listed or changed through the API). */
export const KEY_CHECK_SECTION = 'key_check'
const PLAIN = 'saltdeck secret key check'

/** What the operator reads when the key does not match. */
export const WRONG_KEY = 'the secret key does not open the secrets stored in this database: every instance needs the same key (copy secret.key from the data directory of the instance that first used this database, or point SALTDECK_SECRET_KEY_FILE at it)'

/** Whether `sealed` opens under `key`. */
function opens(key: Uint8Array, sealed: string, plain?: string): boolean {
  try {
    const text = decrypt(key, sealed)
    return plain === undefined || text === plain
  } catch {
    return false
  }
}

/**
 * Throws WRONG_KEY when the key does not open the stored check (or, on an install from before the check, the stored
 * salt password); seals the check first when there is none and `write` is allowed.
 */
export async function checkSecretKey(deps: AppDeps, write: boolean): Promise<void> {
  let row = await sectionRow(deps.db, KEY_CHECK_SECTION)
  if (!row) {
    const salt = await sectionRow(deps.db, 'salt')
    const sealed = salt ? (JSON.parse(salt.value) as { password_enc?: unknown }).password_enc : undefined
    if (typeof sealed === 'string' && !opens(deps.secretKey, sealed)) throw new Error(WRONG_KEY)
    if (!write) return
    await insertSectionOnce(deps.db, KEY_CHECK_SECTION, JSON.stringify({ sealed: encrypt(deps.secretKey, PLAIN) }), deps.clock.now())
    // Another instance starting at the same moment may have sealed its own first: the stored one decides.
    row = await sectionRow(deps.db, KEY_CHECK_SECTION)
  }
  const stored = row ? (JSON.parse(row.value) as { sealed?: unknown }).sealed : undefined
  if (typeof stored !== 'string' || !opens(deps.secretKey, stored, PLAIN)) throw new Error(WRONG_KEY)
}
