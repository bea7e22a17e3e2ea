/** The fleet pages: overview, minions, activity, inventory, jobs, keys. */
import type { PageDef } from '../../lib/pages'

/** Fleet pages in navigation order. */
export const fleetPages: PageDef[] = []
