/**
 * drizzle-kit configuration for PostgreSQL: tables derived from src/db/schema (schema-pg.ts), migrations in drizzle-pg/.
 * `bun run db:generate` writes both engines' migrations from one schema change. What drizzle-kit cannot derive (triggers,
 * extensions, seed rows, data moves a SQLite migration does by hand) goes into a PostgreSQL twin written by hand:
 * `bunx drizzle-kit generate --custom --name NAME --config drizzle.pg.config.ts`; test/pg/schema-agree.test.ts checks
 * that both sets end at the same tables, columns, indexes and triggers.
 */
import { defineConfig } from 'drizzle-kit'
export default defineConfig({ dialect: 'postgresql', schema: './drizzle-pg/schema.cjs', out: './drizzle-pg' })
