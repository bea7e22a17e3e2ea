/** Every table of the database, for drizzle and drizzle-kit. */
export * from './auth'
export * from './system'
export * from './fleet'
export * from './inventory'
export * from './alerts'
export * from './vulns'
export * from './preferences'
export * from './batches'
