/** Each user's own display preferences. */
import { sqliteTable, text, integer } from 'drizzle-orm/sqlite-core'
import { users } from './auth'

/** One row per user who chose something; a user without a row has the defaults. time_zone: 'local' or 'utc'. */
export const userPreferences = sqliteTable('user_preferences', {
  userId: text('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
  timeZone: text('time_zone').notNull().default('local'),
  updatedAt: integer('updated_at').notNull(),
})
