/** The logged-in user as the dashboard knows it, and the permission check that hides what they cannot use. */
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import { globRe } from './glob-re'
// The server's own reading of a grant glob, so the dashboard hides exactly what the door would refuse.
import { globCanMatchPrefix } from '../../lib/glob'
import type { Static } from '@sinclair/typebox'
import type { UserSummary } from '../../features/auth/schema'

/** The body of `GET /api/auth/me` and of a login. */
export type Me = Static<typeof UserSummary>
export { globRe }

/** True when the user holds `verb resource` (e.g. `edit`, `settings:*`). */
export function holds(me: Me | null, verb: string, resource: string): boolean {
  return !!me?.permissions.some((p) => globRe(p.verb).test(verb) && globRe(p.resource_glob).test(resource))
}

/** True when the user holds `verb` on some resource of a kind (`salt`, `key`): a scoped grant such as `execute salt:test.*`. */
export function holdsSome(me: Me | null, verb: string, kind: string): boolean {
  return !!me?.permissions.some((p) => globRe(p.verb).test(verb) && globCanMatchPrefix(p.resource_glob, `${kind}:`))
}

/** Context carrying the session to every page. */
export const SessionContext = createContext<{ me: Me | null; setMe: (m: Me | null) => void }>({ me: null, setMe: () => {} })

/** Hook: the session and a bound permission check. */
export function useSession() {
  const s = useContext(SessionContext)
  return { ...s, can: (verb: string, resource: string) => holds(s.me, verb, resource), canSome: (verb: string, kind: string) => holdsSome(s.me, verb, kind) }
}
