// Issue 20 item 12: a state comment is stored up to 64 Ki characters, marked as cut; a 100 MB comment from a minion
// no longer grows the database by its size twice over (the text and its unique index: 243 MB).
import { expect, test } from 'bun:test'
import { call, testWorld } from '../helpers/app'
import { normalize } from '../../src/salt/normalize'
import { applyFacts } from '../../src/features/ingest/apply'
import { notePublished } from '../../src/features/jobs/trust'
import { dbSizeBytes } from '../../src/db/client'

test('a 100 MB state comment is stored cut to 64 Ki characters with a note; the database grows by far less than the comment', async () => {
  const w = await testWorld()
  const huge = 'x'.repeat(100 * 1024 * 1024)
  const at = w.clock.now()
  const jid = new Date(at).toISOString().replace(/\D/g, '').slice(0, 17) + '001'
  const states = {
    'cmd_|-big_|-big_|-run': { name: 'big', result: false, changes: {}, comment: huge, __sls__: 'demo', __run_num__: 0, __id__: 'big', duration: 1 },
    'test_|-small_|-small_|-succeed_without_changes': { name: 'small', result: true, changes: {}, comment: 'Success!', __sls__: 'demo', __run_num__: 1, __id__: 'small', duration: 1 },
  }
  // Published to web-01, so its return from the bus is believed (contract §17).
  notePublished(w.deps, jid, 'state.apply', ['web-01'])
  const before = dbSizeBytes(w.deps.db)
  await applyFacts(w.deps, [normalize(`salt/job/${jid}/ret/web-01`, { id: 'web-01', jid, fun: 'state.apply', fun_args: [], retcode: 2, _stamp: new Date(at).toISOString().replace('Z', ''), return: states }, at)])
  const grown = dbSizeBytes(w.deps.db) - before
  expect(grown).toBeLessThan(2 * 1024 * 1024)
  const run = (await call(w, 'GET', `/api/minions/web-01/runs/${jid}`)).body
  const comment: string = run.states[0].comment
  expect(comment.length).toBeLessThan(64 * 1024 + 100)
  expect(comment.startsWith('x'.repeat(64 * 1024))).toBe(true)
  expect(comment.endsWith(`\n[… cut by Saltdeck: ${huge.length} characters in all]`)).toBe(true)
  expect(run.states[1].comment).toBe('Success!')
  // The failing states' sample comment is the same stored text.
  const failing = (await call(w, 'GET', '/api/runs/failing-states')).body
  expect(failing.items.map((i: { id: string; sample_comment: string }) => [i.id, i.sample_comment])).toEqual([['big', comment]])
})
