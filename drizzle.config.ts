/** drizzle-kit configuration: schema in src/db/schema, SQL migrations in drizzle/. */
import { defineConfig } from 'drizzle-kit'
export default defineConfig({ dialect: 'sqlite', schema: './src/db/schema/index.ts', out: './drizzle' })
