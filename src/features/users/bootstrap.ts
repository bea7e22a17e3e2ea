/** Every start: settings loaded, built-in roles repaired, and the first admin created when there are no users. */
import { chmodSync, writeFileSync } from 'node:fs'
import { randomInt } from 'node:crypto'
import type { AppDeps } from '../../deps'
import { ensureBuiltinRoles } from '../roles/service'
import { loadSettings } from '../settings/service'
import { adminMustChangePassword, forgetInitialPassword, hasUsers, initialPasswordFile, insertUser } from './service'

const PW_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'
/** A random 20-character password for the first admin. */
export const randomPassword = () => Array.from({ length: 20 }, () => PW_ALPHABET[randomInt(PW_ALPHABET.length)]).join('')

/**
 * Every start: loads the settings (the salt side reads them from memory), repairs the built-in roles and, on the first
 * start (no users), creates `admin` with SALTDECK_ADMIN_PASSWORD or a random password written to
 * `<data dir>/initial-admin-password`.
 */
export async function bootstrap(deps: AppDeps, dataDir: string | null, announce: (line: string) => void = console.log) {
  await loadSettings(deps)
  const roleIds = await ensureBuiltinRoles(deps)
  if (await hasUsers(deps)) {
    // Left over from a start before the admin changed that password: it opens nothing any more.
    if (dataDir && !(await adminMustChangePassword(deps))) forgetInitialPassword(dataDir)
    return
  }
  const fromEnv = deps.config.adminPassword
  const password = fromEnv ?? randomPassword()
  await insertUser(deps, { username: 'admin', display_name: 'Administrator', password, must_change_pw: !fromEnv, is_active: true }, [roleIds.admin!], true)
  if (!fromEnv) {
    if (dataDir) {
      const file = initialPasswordFile(dataDir)
      writeFileSync(file, password + '\n', { mode: 0o600 })
      chmodSync(file, 0o600)
      announce(`Created user 'admin' with password: ${password}  (also in ${file}; you must change it at first login)`)
    } else announce(`Created user 'admin' with password: ${password}  (you must change it at first login)`)
  }
}
