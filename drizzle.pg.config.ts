/** drizzle-kit configuration for PostgreSQL: tables derived from src/db/schema (schema-pg.ts), migrations in drizzle-pg/. */
import { defineConfig } from 'drizzle-kit'
export default defineConfig({ dialect: 'postgresql', schema: './drizzle-pg/schema.cjs', out: './drizzle-pg' })
