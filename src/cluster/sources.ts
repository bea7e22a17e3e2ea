/** Leadership names beyond the salt sources' own (each source, by its name, has one leader: contract §15). */

/** The leadership name of fleet-wide work (alert delivery, retention): never a source's name (theirs are `[a-z0-9-]`). */
export const FLEET = '(fleet)'
