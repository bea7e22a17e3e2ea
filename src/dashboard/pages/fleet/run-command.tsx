/**
 * The Run command form: POST /api/run with target, target type, function and JSON arguments. It lists what the
 * caller's grants allow (GET /api/run/scope), refuses a function no grant allows before sending, and shows the server's
 * sentence when salt's matching reaches a minion the grants do not cover (contract §14). As the target is typed it
 * shows what salt matches (POST /api/run/preview), and it asks first before a job on more than 10 minions or of cmd.*
 * (contract §16).
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { parseJsonField, runTarget, skippedSentence, type RunStarted } from '../../lib/fleet'
import { useAction, useDebounced, useGet } from '../../lib/hooks'
import { confirmReason, firstIds, recognisedType, TARGET_CHOICES } from '../../lib/run-target'
import { exactFunctions, functionNote, grantText, type RunScope } from '../../lib/run-scope'
import { href } from '../../lib/router'
import { ErrorBox, Field, Form } from '../../lib/ui'
import { ArgFields } from './arg-fields'
import type { Static } from '@sinclair/typebox'
import type { RunPreviewOut } from '../../../features/salt-actions/schema'

/** One answer of POST /api/run/preview. */
/** POST /api/run/preview. */
type Preview = Static<typeof RunPreviewOut>

/** The preview body for the form's fields: the type as recognised, the function only when it is one. */
const previewBody = (tgt: string, type: string, fun: string) => ({
  tgt: runTarget(tgt, type), tgt_type: type, ...(/^[A-Za-z0-9_.]+$/.test(fun.trim()) ? { fun: fun.trim() } : {}),
})

/** The batch options of the body: none when no batch size is given; a size is a count or a percentage ("10%"). */
function batchFields(size: string, wait: string, stop: boolean) {
  const b = size.trim()
  if (!b) return {}
  if (!/^\d+%?$/.test(b)) throw new Error('Batch size: a number of minions or a percentage such as 10%.')
  return { batch: b.endsWith('%') ? b : Number(b), batch_wait: wait.trim() ? Number(wait) : 0, batch_stop_on_failure: stop }
}

/** The form, folded by default so the job list stays first on small screens. */
export function RunCommand() {
  const [tgt, setTgt] = useState('')
  const [chosenType, setTgtType] = useState('auto')
  const [fun, setFun] = useState('')
  const [arg, setArg] = useState('')
  const [kwarg, setKwarg] = useState('')
  const [batch, setBatch] = useState('')
  const [batchWait, setBatchWait] = useState('')
  const [stopOnFailure, setStopOnFailure] = useState(false)
  const [started, setStarted] = useState<RunStarted | null>(null)
  const [asking, setAsking] = useState<{ reason: string; count: number } | null>(null)
  const tgtType = recognisedType(tgt, chosenType)
  const act = useAction()
  // The preview follows the typed target after a pause; an answer to an older target is dropped.
  const key = JSON.stringify(previewBody(tgt, tgtType, fun))
  const settled = useDebounced(key, 400)
  const [preview, setPreview] = useState<{ key: string; data?: Preview; error?: string } | null>(null)
  const asked = useRef('')
  useEffect(() => {
    const body = JSON.parse(settled) as ReturnType<typeof previewBody>
    if (!body.tgt || (Array.isArray(body.tgt) && !body.tgt.length)) { asked.current = ''; setPreview(null); return }
    asked.current = settled
    api<Preview>('POST', '/api/run/preview', body).then(
      (data) => { if (asked.current === settled) setPreview({ key: settled, data }) },
      (e: Error) => { if (asked.current === settled) setPreview({ key: settled, error: e.message }) },
    )
  }, [settled])
  useEffect(() => setAsking(null), [key])
  const scope = useGet<RunScope>('/api/run/scope')
  const grants = scope.data?.grants ?? []
  const note = scope.data ? functionNote(grants, fun) : null
  const everything = grants.some((g) => g.resource_glob.replace(/^salt:/, '') === '*' && g.target_glob === '*')
  const send = (confirmed: boolean) => act.run(async () => {
    setStarted(null)
    const body = {
      tgt: runTarget(tgt, tgtType), tgt_type: tgtType, fun: fun.trim(),
      arg: parseJsonField(arg, 'array', 'Arguments'), kwarg: parseJsonField(kwarg, 'object', 'Keyword arguments'),
      ...batchFields(batch, batchWait, stopOnFailure),
    }
    if (!confirmed) {
      // Ask first on a wide or shell job: the count is the preview's, asked now when the shown one is not for these fields.
      const count = preview?.key === key && preview.data ? preview.data.count : (await api<Preview>('POST', '/api/run/preview', previewBody(tgt, tgtType, fun))).count
      const reason = confirmReason(count, fun)
      if (reason) { setAsking({ reason, count }); return }
    }
    setAsking(null)
    setStarted(await api<RunStarted>('POST', '/api/run', body))
  })
  const submit = () => send(false)
  const shown = preview?.key === key ? preview : null
  return (
    <details class="panel run-command">
      <summary>Run command</summary>
      <Form label="Run command" onSubmit={submit}>
        {scope.data && !everything ? (
          <p id="run-scope" class="muted">You may run: {grants.map(grantText).join('; ')}. Salt expands the target first; a run that reaches any other minion is refused.</p>
        ) : null}
        <div class="grid-2">
          <Field id="run-tgt" label="Target" hint={chosenType === 'auto' ? `e.g. web*, web-01,web-02 or G@os:Debian; read as ${tgtType}` : tgtType === 'list' ? 'minion ids separated by commas' : 'e.g. web*'}>
            <input id="run-tgt" required maxLength={1024} value={tgt} aria-describedby="run-tgt-hint" onInput={(e) => setTgt(e.currentTarget.value)} />
          </Field>
          <Field id="run-tgt-type" label="Target type">
            <select id="run-tgt-type" value={chosenType} onChange={(e) => setTgtType(e.currentTarget.value)}>
              {TARGET_CHOICES.map((t) => <option value={t}>{t === 'auto' ? 'recognise from the target' : t}</option>)}
            </select>
          </Field>
          <Field id="run-fun" label="Function" hint={note?.text ?? 'e.g. test.ping, state.apply'}>
            <input id="run-fun" required maxLength={255} pattern="[A-Za-z0-9_.]+" value={fun} aria-describedby="run-fun-hint" list="run-fun-list"
              aria-invalid={note && !note.allowed ? 'true' : undefined} onInput={(e) => setFun(e.currentTarget.value)} />
            <datalist id="run-fun-list">{exactFunctions(grants).map((f) => <option value={f} />)}</datalist>
          </Field>
        </div>
        <p id="run-preview" class="muted" aria-live="polite">
          {!shown ? null : shown.error ? `Cannot preview the target: ${shown.error}` : shown.data ? (
            <>
              Matches {shown.data.count} minion{shown.data.count === 1 ? '' : 's'}{shown.data.count ? ` (${firstIds(shown.data.minions, shown.data.count)})` : ''}.
              {shown.data.outside_scope.length ? ` Your roles do not cover ${shown.data.outside_scope.length}: ${firstIds(shown.data.outside_scope, shown.data.outside_scope.length)}.` : ''}
            </>
          ) : null}
        </p>
        <ArgFields prefix="run" arg={arg} setArg={setArg} kwarg={kwarg} setKwarg={setKwarg} argHint='optional, e.g. ["nginx"]' kwargHint='optional, e.g. {"test": true}' />
        <div class="grid-2">
          <Field id="run-batch" label="Batch size" hint="optional: run on this many minions at a time (e.g. 10 or 10%)">
            <input id="run-batch" maxLength={5} inputMode="numeric" value={batch} aria-describedby="run-batch-hint" onInput={(e) => setBatch(e.currentTarget.value)} />
          </Field>
          <Field id="run-batch-wait" label="Wait between slices (seconds)" hint="0 to 3600, after a slice returned">
            <input id="run-batch-wait" type="number" min={0} max={3600} disabled={!batch.trim()} value={batchWait} aria-describedby="run-batch-wait-hint" onInput={(e) => setBatchWait(e.currentTarget.value)} />
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" disabled={!batch.trim()} checked={stopOnFailure} onChange={(e) => setStopOnFailure(e.currentTarget.checked)} /> Stop the batch at the first failure
        </label>
        <ErrorBox error={act.error} />
        {started?.batch_id ? (
          <p role="status" class="ok">
            <a href={href(`/batches/${encodeURIComponent(started.batch_id)}`)}>Batch</a> started on {started.minions.length} minion{started.minions.length === 1 ? '' : 's'}, first job {started.jid}.
          </p>
        ) : started ? (
          <p role="status" class="ok">
            Job <a href={href(`/jobs/${encodeURIComponent(started.jid)}`)}>{started.jid}</a> started on {started.minions.length} minion{started.minions.length === 1 ? '' : 's'}.
          </p>
        ) : null}
        {started && skippedSentence(started.skipped_sources) ? <p role="alert" class="error">{skippedSentence(started.skipped_sources)}</p> : null}
        {asking ? (
          <div class="confirm" role="group" aria-label="Confirm the run">
            <span role="alert">Run {fun.trim()} on {asking.count} minion{asking.count === 1 ? '' : 's'}? Asked because {asking.reason}.</span>{' '}
            <button type="button" class="danger" disabled={act.busy} onClick={() => send(true)}>Yes, run</button>{' '}
            <button type="button" onClick={() => setAsking(null)}>Cancel</button>
          </div>
        ) : (
          <button type="submit" class="primary" disabled={act.busy || (!!note && !note.allowed)}>Run</button>
        )}
      </Form>
    </details>
  )
}
