/** The salt sources this database knows, by name: each has one leader (contract §15). One source until the list lands. */
import type { AppDeps } from '../deps'

/** The names of the salt sources, `default` (the interface's `salt` settings section) first. */
export function saltSourceNames(_deps: AppDeps): string[] {
  return ['default']
}

/** The leadership name of fleet-wide work (alert delivery, retention): never a source's name (theirs are `[a-z0-9-]`). */
export const FLEET = '(fleet)'
