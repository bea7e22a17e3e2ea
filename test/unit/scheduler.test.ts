// Contract §17: a tick that throws, before or after its first await, ends its run — run-now never answers 409 after
// a failed tick — and its error is counted.
import { expect, test } from 'bun:test'
import { Scheduler, type Poller } from '../../src/pollers/scheduler'
import { ManualClock } from '../../src/lib/clock'
import { Logger } from '../../src/lib/log'
import { PollerBusy } from '../../src/lib/errors'
import { SaltMasterDown, SaltUnavailable } from '../../src/salt/errors'

const quiet = new Logger('json', () => {}, true)
const poller = (name: string, tick: () => Promise<number>): Poller => ({ name, intervalSeconds: () => 60, initialDelaySeconds: () => 60, tick })

test.each([
  ['synchronously, before its first await', () => { throw new Error('attempt to write a readonly database') }],
  ['after an await', async () => { await Bun.sleep(1); throw new Error('attempt to write a readonly database') }],
] as [string, () => Promise<number>][])('a tick that throws %s ends its run; run-now works after it', async (_, tick) => {
  let ticks = 0
  const s = new Scheduler({ clock: new ManualClock(), log: quiet }, [poller('inventory', () => (++ticks === 3 ? Promise.resolve(7) : tick()))])
  await s.runNow('inventory')
  expect(s.status()[0]).toMatchObject({ running: false, runs: 1, errors: 1, last_error: 'attempt to write a readonly database' })
  // Not busy: the failed tick's run is over, so run-now starts another one (and another after that one fails too).
  await s.runNow('inventory')
  expect(s.status()[0]).toMatchObject({ running: false, runs: 2, errors: 2 })
  await s.runNow('inventory')
  expect(s.status()[0]).toMatchObject({ running: false, runs: 3, errors: 2, last_error: null, items_processed: 7 })
})

test('a tick still running answers PollerBusy to run-now', async () => {
  let release!: () => void
  const held = new Promise<number>((r) => (release = () => r(1)))
  const s = new Scheduler({ clock: new ManualClock(), log: quiet }, [poller('grains', () => held)])
  const first = s.runNow('grains')
  expect(() => s.runNow('grains')).toThrow(PollerBusy)
  release()
  await first
  await s.runNow('grains')
})

test('errors caused by salt-api not answering clear when it answers again, and those pollers run at once; others stay', async () => {
  let up = false
  const s = new Scheduler({ clock: new ManualClock(), log: quiet }, [
    poller('grains', async () => { if (!up) throw new SaltUnavailable('connection refused'); return 2 }),
    poller('inventory', async () => { throw new Error('disk I/O error') }),
  ])
  await s.run('grains')
  await s.run('inventory')
  expect(s.status().map((p) => p.last_error)).toEqual(['Salt API unavailable', 'disk I/O error'])
  up = true
  expect(s.saltAnswers()).toEqual(['grains'])
  expect(s.status().map((p) => p.last_error)).toEqual([null, 'disk I/O error'])
  await s.stop()
  expect(s.status()[0]).toMatchObject({ runs: 2, errors: 1, items_processed: 2 })
})

test('a tick that found nothing logs at debug (hidden unless SALTDECK_LOG_DEBUG); one that found items logs at info', async () => {
  const lines: string[] = []
  const log = new Logger('json', (l) => lines.push(l))
  let items = 0
  const s = new Scheduler({ clock: new ManualClock(), log }, [poller('alerts', () => Promise.resolve(items))])
  await s.runNow('alerts')
  expect(lines).toEqual([])
  log.debugOn = true
  await s.runNow('alerts')
  expect(lines.map((l) => JSON.parse(l))).toMatchObject([{ level: 'debug', msg: 'poller tick', poller: 'alerts', items: 0 }])
  lines.length = 0
  log.debugOn = false
  items = 3
  await s.runNow('alerts')
  expect(lines.map((l) => JSON.parse(l))).toMatchObject([{ level: 'info', msg: 'poller tick', poller: 'alerts', items: 3 }])
})

test('while the master is down a poller that asks it skips its ticks (no call, no error, not counted); when it answers those run at once, others do not', async () => {
  let down = true
  const ticked: string[] = []
  const tick = (name: string) => async () => (ticked.push(name), 1)
  const s = new Scheduler({ clock: new ManualClock(), log: quiet, masterDown: () => down }, [
    { ...poller('keys', tick('keys')), needsMaster: true },
    poller('alerts', tick('alerts')),
    { ...poller('grains', tick('grains')), needsMaster: true },
  ])
  // Run now says why it does not start (the HTTP edge answers 503); a scheduled tick is skipped the same way.
  expect(() => s.runNow('keys')).toThrow(new SaltMasterDown('The salt-master does not answer: the keys poller runs once it does'))
  await s.run('keys')
  await s.runNow('alerts')
  expect(ticked).toEqual(['alerts'])
  expect(s.status().map((p) => [p.name, p.runs, p.errors, p.last_error, p.waiting_for_master])).toEqual([['keys', 0, 0, null, true], ['alerts', 1, 0, null, false], ['grains', 0, 0, null, false]])
  down = false
  expect(s.masterAnswers()).toEqual(['keys'])
  await s.stop()
  expect(ticked).toEqual(['alerts', 'keys'])
  expect(s.status()[0]).toMatchObject({ runs: 1, items_processed: 1, waiting_for_master: false })
  // Only once: a second answer finds nothing skipped.
  expect(s.masterAnswers()).toEqual([])
})

test('when the master answers, a skipped poller that asks minions waits the given time (they reconnect), stays waiting_for_master until then, and runs once', async () => {
  let down = true
  const ticked: string[] = []
  const tick = (name: string) => async () => (ticked.push(name), 1)
  const s = new Scheduler({ clock: new ManualClock(), log: quiet, masterDown: () => down }, [
    { ...poller('jobs', tick('jobs')), needsMaster: true },
    { ...poller('grains', tick('grains')), needsMaster: true, asksMinions: true },
    { ...poller('inventory', tick('inventory')), needsMaster: true, asksMinions: true },
  ])
  for (const name of ['jobs', 'grains', 'inventory']) await s.run(name)
  down = false
  expect(s.masterAnswers(300)).toEqual(['jobs', 'grains', 'inventory'])
  await Bun.sleep(50)
  expect(ticked).toEqual(['jobs'])
  expect(s.status().map((p) => p.waiting_for_master)).toEqual([false, true, true])
  // A scheduled tick that comes first runs (the master answers); the deferred one then does not repeat it.
  await s.run('inventory')
  await Bun.sleep(400)
  expect(ticked).toEqual(['jobs', 'inventory', 'grains'])
  expect(s.status().map((p) => [p.runs, p.waiting_for_master])).toEqual([[1, false], [1, false], [1, false]])
  await s.stop()
})

test('stop cancels the ticks deferred for reconnecting minions', async () => {
  let down = true
  const ticked: string[] = []
  const s = new Scheduler({ clock: new ManualClock(), log: quiet, masterDown: () => down }, [{ ...poller('grains', async () => (ticked.push('grains'), 1)), needsMaster: true, asksMinions: true }])
  await s.run('grains')
  down = false
  s.masterAnswers(100)
  await s.stop()
  await Bun.sleep(200)
  expect(ticked).toEqual([])
})

test('a poller that is off, asked to run while the master is down, runs once when it answers (as run-now said)', async () => {
  let down = true
  const ticked: string[] = []
  const s = new Scheduler({ clock: new ManualClock(), log: quiet, masterDown: () => down }, [{ ...poller('keys', async () => (ticked.push('keys'), 1)), intervalSeconds: () => 0, needsMaster: true }])
  expect(() => s.runNow('keys')).toThrow(SaltMasterDown)
  down = false
  expect(s.masterAnswers()).toEqual(['keys'])
  await s.stop()
  expect(ticked).toEqual(['keys'])
})
