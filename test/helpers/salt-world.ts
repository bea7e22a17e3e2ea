/** A test world wired to a fake salt-api: settings point at it and a SaltRuntime is attached (not started). */
import { FakeSalt } from './fake-salt'
import { call, testWorld } from './app'
import { SaltRuntime } from '../../src/runtime'
import { updateSection } from '../../src/features/settings/service'
import { applyFacts } from '../../src/features/ingest/apply'
import { noFacts } from '../../src/salt/facts'
import type { AppDeps } from '../../src/deps'

/** Builds the world (over a database file when `dbPath` is given); pollers are triggered by hand with rt.scheduler.run(name). */
export async function saltWorld(minions = ['web-01', 'web-02', 'db-01'], dbPath?: string) {
  const w = await testWorld({}, dbPath)
  const salt = new FakeSalt().start().addMinions(minions)
  updateSection(w.deps, 'salt', { url: salt.url, username: 'saltdeck', password: 's3cr3t', eauth: 'sharedsecret' })
  const rt = new SaltRuntime(w.deps, { client: { backoffMs: 1, sleep: async () => {} }, streamBackoff: { firstMs: 10, maxMs: 40, probeMs: 20, brokenRetryMs: 200 }, probeMs: 50, masterTimeoutMs: 5000 })
  // The stream is read on the main thread here, with the test's clock; test/salt-fake/event-worker.test.ts covers the worker.
  rt.stream.useWorker = false
  w.deps.salt = rt
  w.deps.onSettingsChanged = (s) => void rt.settingsChanged(s)
  const get = async (path: string) => (await call(w, 'GET', path)).body
  return { ...w, salt, rt, get, async close() { await rt.stop(); salt.stop() } }
}

/** Makes a minion known to Saltdeck with an accepted key, as the keys poller would (starts are recorded for known minions only). */
export async function known(w: { deps: AppDeps }, id: string) {
  await applyFacts(w.deps, [{ ...noFacts(), keys: [{ minionId: id, act: 'accept', ts: w.deps.clock.now() }] }])
}
