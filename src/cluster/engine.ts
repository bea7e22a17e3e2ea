/**
 * The bus's transport and the leadership locks of the configured engine: PostgreSQL's NOTIFY/LISTEN and advisory
 * locks (db/cluster-pg.ts), or, on SQLite (one instance per data directory), an in-process hub and locks always granted.
 */
import type { Db } from '../db/client'
import { pgListen, pgLocks, pgNotify } from '../db/cluster-pg'
import { BUS_CHANNEL, LocalHub, type BusTransport } from './bus'
import { alwaysGranted, type TryLock } from './leadership'

/** What the cluster needs of an engine. */
export interface ClusterEngine {
  transport: BusTransport
  tryLock: TryLock
  close(): Promise<void>
}

/** The cluster engine of `db`; `hub` joins SQLite services of one process (tests) on one in-process bus. */
export function clusterEngine(db: Db, hub = new LocalHub()): ClusterEngine {
  if (db.native.engine !== 'postgres') return { transport: hub.transport(), tryLock: alwaysGranted, close: async () => {} }
  const locks = pgLocks(db)
  return {
    transport: { send: (text) => pgNotify(db, BUS_CHANNEL, text), listen: (fn, onListen) => pgListen(db, BUS_CHANNEL, fn, onListen) },
    tryLock: (name) => locks.tryLock(name),
    // Held locks go with their connections, which the pool closes with the engine.
    close: async () => {},
  }
}
