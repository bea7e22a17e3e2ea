/** Answer schemas of the salt sources API (contract §15 "Several masters"), shared with the dashboard. */
import { Type as T } from '@sinclair/typebox'
import { SettingsOut } from '../settings/schema'

/** The source the interface's salt settings section is: it cannot be created, deleted or renamed. */
export const DEFAULT_SOURCE = 'default'

/** A source read by a store's `sourceColumn` (null: the default source), named. */
export const sourceName = (read: string | null): string => read ?? DEFAULT_SOURCE

/** A source's name: 1..64 of `[a-z0-9-]`. */
export const SourceName = T.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$' })

/** One salt source as answered: its name, the salt section's fields (the password only as `password_set`), its last change. */
export const SaltSourceOut = T.Composite([
  T.Object({ name: T.String() }),
  SettingsOut.properties.salt,
  T.Object({ updated_at: T.String({ format: 'date-time' }) }),
])

/** GET /api/admin/salt-sources: `default` first, then by name. */
export const SaltSourceListOut = T.Object({ sources: T.Array(SaltSourceOut) })
