/** The logged-in user as the dashboard knows it, and the permission check that hides what they cannot use. */
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

/** The body of `GET /api/auth/me` and of a login. */
export interface Me {
  username: string
  display_name: string
  must_change_pw: boolean
  permissions: { verb: string; resource_glob: string }[]
}

/** Anchored, case-sensitive `*`/`?` glob as the server matches it (contract §4). */
function globRe(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`)
}

/** True when the user holds `verb resource` (e.g. `edit`, `settings:*`). */
export function holds(me: Me | null, verb: string, resource: string): boolean {
  return !!me?.permissions.some((p) => globRe(p.verb).test(verb) && globRe(p.resource_glob).test(resource))
}

/** Context carrying the session to every page. */
export const SessionContext = createContext<{ me: Me | null; setMe: (m: Me | null) => void }>({ me: null, setMe: () => {} })

/** Hook: the session and a bound permission check. */
export function useSession() {
  const s = useContext(SessionContext)
  return { ...s, can: (verb: string, resource: string) => holds(s.me, verb, resource) }
}
