#!/usr/bin/env bun
/**
 * Failover time of the salt source's leadership (contract §15: another instance leads within 15 s).
 *
 *   bun bench/failover.ts [--rounds 5]
 *
 * Starts a throwaway PostgreSQL cluster (test/helpers/pg-cluster.ts), the fake salt-api of the tests and two
 * `saltdeck serve` on one database. Each round: the leader is killed with SIGKILL (or, on odd rounds, its lock
 * connection is ended with pg_terminate_backend), and the time is taken until the other instance is listed as the
 * leader of `default` by GET /api/cluster (after a cut: until a live session holds the lock in pg_locks, and until the
 * old leader logs that its work stopped), and until a job salt's job cache got during the gap is stored. The killed
 * instance is started again for the next round. Prints each round, the load average, and the median and maximum.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseFlags } from '../src/cli'
import { openPostgres } from '../src/db/client'
import { sql } from '../src/db/sql'
import { LEADER_LOCK_CLASS } from '../src/db/cluster-pg'
import { startCluster, stopCluster } from '../test/helpers/pg-cluster'
import { startServe, type Served } from '../test/helpers/serve'
import { FakeSalt, newJid } from '../test/helpers/fake-salt'

const F = parseFlags(process.argv.slice(2), [])
const ROUNDS = Number(F.rounds ?? 5)
const cluster = startCluster()
const admin = openPostgres(cluster.url())
await admin.exec(sql.raw('CREATE DATABASE saltdeck_failover'))
await admin.close()
const url = cluster.url('saltdeck_failover')
const root = mkdtempSync(join(tmpdir(), 'saltdeck-failover-'))
const salt = new FakeSalt().start().addMinions(['web-01', 'web-02'])
const env = {
  SALTDECK_DATABASE_URL: url, SALTDECK_ADMIN_PASSWORD: 'failover-admin-pw', SALTDECK_ARGON2_MEMORY_KIB: '1024',
  SALTDECK_SALT_URL: salt.url, SALTDECK_SALT_USERNAME: 'saltdeck', SALTDECK_SALT_PASSWORD: 's3cr3t', SALTDECK_SALT_EAUTH: 'sharedsecret',
}
let n = 0
async function instance(): Promise<Served> {
  const dir = join(root, `i${n++}`)
  if (n > 1) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    copyFileSync(join(root, 'i0', 'secret.key'), join(dir, 'secret.key'))
  }
  return startServe(dir, env)
}
const idOf = (s: Served) => /instance"?[:=]"([0-9a-f-]+)"/.exec(s.output())![1]!
let token = ''
const api = async (s: Served, path: string) => (await fetch(s.url + path, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<any>
const leaderOf = async (s: Served) => ((await api(s, '/api/cluster')).instances as any[]).filter((i) => i.leads.includes('default')).map((i) => i.id)

let live = [await instance(), await instance()]
const r = await fetch(`${live[0]!.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'failover-admin-pw' }) })
token = r.headers.get('set-cookie')!.match(/saltdeck_session=([^;]+)/)![1]!
const pg = openPostgres(url)
const rounds: { how: string; led: number; stored: number; load: number }[] = []
for (let i = 0; i < ROUNDS; i++) {
  // Settle: one leader listed, then act on it.
  let leader: string[] = []
  for (const t0 = Date.now(); Date.now() - t0 < 20_000; await Bun.sleep(100)) if ((leader = await leaderOf(live[1]!)).length === 1) break
  const old = live.find((s) => idOf(s) === leader[0])!
  const other = live.find((s) => s !== old)!
  const how = i % 2 === 0 ? 'kill -9' : 'pg_terminate_backend'
  const lostBefore = (old.output().match(/leadership lost/g) ?? []).length
  let cutPids: number[] = []
  const t0 = performance.now()
  if (how === 'kill -9') {
    old.proc.kill('SIGKILL')
    await old.proc.exited
  } else {
    const pids = await pg.rows<{ pid: number }>(sql.raw(`SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = ${LEADER_LOCK_CLASS}`))
    cutPids = pids.map((p) => p.pid)
    for (const p of pids) await pg.exec(sql.raw(`SELECT pg_terminate_backend(${p.pid})`))
  }
  const jid = newJid()
  salt.jobs.set(jid, { fun: 'test.ping', tgt: 'web-02', user: 'root', minions: ['web-02'], returns: { 'web-02': true }, start: Date.now() })
  let led = NaN
  let stored = NaN
  let stopped = NaN
  for (; performance.now() - t0 < 30_000; await Bun.sleep(20)) {
    if (how === 'kill -9') {
      const l = await leaderOf(other)
      if (Number.isNaN(led) && l.length === 1 && l[0] !== leader[0]) led = performance.now() - t0
    } else {
      // The truth of a cut: the old session's work stops (its log), and a live session holds the lock again.
      if (Number.isNaN(stopped) && (old.output().match(/leadership lost/g) ?? []).length > lostBefore) stopped = performance.now() - t0
      const held = await pg.rows<{ pid: number }>(sql.raw(`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = ${LEADER_LOCK_CLASS} AND objid = hashtext('default')::oid AND granted`))
      if (Number.isNaN(led) && held.length === 1 && !cutPids.includes(held[0]!.pid)) led = performance.now() - t0
    }
    if (Number.isNaN(stored)) {
      const res = await fetch(`${other.url}/api/jobs/${jid}`, { headers: { authorization: `Bearer ${token}` } })
      if (res.status === 200) stored = performance.now() - t0
    }
    if (!Number.isNaN(led) && !Number.isNaN(stored) && (how === 'kill -9' || !Number.isNaN(stopped))) break
  }
  rounds.push({ how, led, stored, load: loadavg()[0]! })
  const stop = how === 'kill -9' ? '' : `old leader's work stopped after ${(stopped / 1000).toFixed(2)} s, `
  console.log(`round ${i + 1}: ${how}: ${stop}led again after ${(led / 1000).toFixed(2)} s, gap job stored after ${(stored / 1000).toFixed(2)} s (load ${loadavg()[0]!.toFixed(2)})`)
  if (how === 'kill -9') live = [other, await instance()]
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const how of ['kill -9', 'pg_terminate_backend']) {
  const rs = rounds.filter((x) => x.how === how)
  if (!rs.length) continue
  console.log(`${how}: ${rs.length} rounds; led again median ${(median(rs.map((x) => x.led)) / 1000).toFixed(2)} s, max ${(Math.max(...rs.map((x) => x.led)) / 1000).toFixed(2)} s; gap job stored median ${(median(rs.map((x) => x.stored)) / 1000).toFixed(2)} s, max ${(Math.max(...rs.map((x) => x.stored)) / 1000).toFixed(2)} s`)
}
await pg.close()
for (const s of live) if (s.proc.exitCode === null) await s.stop()
salt.stop()
stopCluster(cluster)
rmSync(root, { recursive: true, force: true })
