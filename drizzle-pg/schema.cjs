// drizzle-kit's view of the PostgreSQL tables: one export per table, as drizzle-kit looks for them. The tables are
// derived from the SQLite definitions in src/db/schema (src/db/schema-pg.ts), so none is written here.
module.exports = require('../src/db/schema-pg.ts').pgTables
