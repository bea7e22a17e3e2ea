/** Running a template as a user (contract §16): its command through the same checks as POST /api/run, in batches when it says so. */
import type { AppDeps } from '../../deps'
import type { SaltClient } from '../../salt/client'
import { runForUser } from '../salt-actions/run'
import { startBatch } from '../batches/service'
import type { TemplateOut } from './service'

/** Runs `t` (on `tgt` when given) as `user`; a template with a `batch` ("5", "10%") starts a batch without waits or stop. */
export function runTemplate(deps: AppDeps, client: SaltClient, user: { userId: string; username: string }, t: TemplateOut, tgt?: string) {
  const req = { tgt: tgt ?? t.tgt, tgt_type: t.tgt_type, fun: t.fun, arg: t.arg, kwarg: t.kwarg }
  if (!t.batch) return runForUser(deps, client, user, req)
  // A template stores its batch as text: a count ("5") or a percentage ("10%").
  const batch = t.batch.endsWith('%') ? t.batch : Number(t.batch)
  return startBatch(deps, client, user, req, { batch, batch_wait: 0, batch_stop_on_failure: false })
}
