/**
 * The Run command form: POST /api/run with target, target type, function and JSON arguments. It lists what the
 * caller's grants allow (GET /api/run/scope), refuses a function no grant allows before sending, and shows the server's
 * sentence when salt's matching reaches a minion the grants do not cover (contract §14).
 */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { parseJsonField, runTarget, TARGET_TYPES } from '../../lib/fleet'
import { useAction, useGet } from '../../lib/hooks'
import { exactFunctions, functionNote, grantText, type RunGrant } from '../../lib/run-scope'
import { href } from '../../lib/router'
import { ErrorBox, Field, Form } from '../../lib/ui'

/** The form, folded by default so the job list stays first on small screens. */
export function RunCommand() {
  const [tgt, setTgt] = useState('')
  const [tgtType, setTgtType] = useState('glob')
  const [fun, setFun] = useState('')
  const [arg, setArg] = useState('')
  const [kwarg, setKwarg] = useState('')
  const [started, setStarted] = useState<{ jid: string; minions: string[] } | null>(null)
  const act = useAction()
  const scope = useGet<{ grants: RunGrant[] }>('/api/run/scope')
  const grants = scope.data?.grants ?? []
  const note = scope.data ? functionNote(grants, fun) : null
  const everything = grants.some((g) => g.resource_glob.replace(/^salt:/, '') === '*' && g.target_glob === '*')
  const submit = () => act.run(async () => {
    setStarted(null)
    const body = {
      tgt: runTarget(tgt, tgtType), tgt_type: tgtType, fun: fun.trim(),
      arg: parseJsonField(arg, 'array', 'Arguments'), kwarg: parseJsonField(kwarg, 'object', 'Keyword arguments'),
    }
    setStarted(await api<{ jid: string; minions: string[] }>('POST', '/api/run', body))
  })
  return (
    <details class="panel run-command">
      <summary>Run command</summary>
      <Form label="Run command" onSubmit={submit}>
        {scope.data && !everything ? (
          <p id="run-scope" class="muted">You may run: {grants.map(grantText).join('; ')}. Salt expands the target first; a run that reaches any other minion is refused.</p>
        ) : null}
        <div class="grid-2">
          <Field id="run-tgt" label="Target" hint={tgtType === 'list' ? 'minion ids separated by commas' : 'e.g. web* or G@os:Debian'}>
            <input id="run-tgt" required maxLength={1024} value={tgt} aria-describedby="run-tgt-hint" onInput={(e) => setTgt(e.currentTarget.value)} />
          </Field>
          <Field id="run-tgt-type" label="Target type">
            <select id="run-tgt-type" value={tgtType} onChange={(e) => setTgtType(e.currentTarget.value)}>
              {TARGET_TYPES.map((t) => <option value={t}>{t}</option>)}
            </select>
          </Field>
          <Field id="run-fun" label="Function" hint={note?.text ?? 'e.g. test.ping, state.apply'}>
            <input id="run-fun" required maxLength={255} pattern="[A-Za-z0-9_.]+" value={fun} aria-describedby="run-fun-hint" list="run-fun-list"
              aria-invalid={note && !note.allowed ? 'true' : undefined} onInput={(e) => setFun(e.currentTarget.value)} />
            <datalist id="run-fun-list">{exactFunctions(grants).map((f) => <option value={f} />)}</datalist>
          </Field>
        </div>
        <Field id="run-arg" label="Arguments (JSON array)" hint='optional, e.g. ["nginx"]'>
          <textarea id="run-arg" rows={2} class="mono" value={arg} aria-describedby="run-arg-hint" onInput={(e) => setArg(e.currentTarget.value)} />
        </Field>
        <Field id="run-kwarg" label="Keyword arguments (JSON object)" hint='optional, e.g. {"test": true}'>
          <textarea id="run-kwarg" rows={2} class="mono" value={kwarg} aria-describedby="run-kwarg-hint" onInput={(e) => setKwarg(e.currentTarget.value)} />
        </Field>
        <ErrorBox error={act.error} />
        {started ? (
          <p role="status" class="ok">
            Job <a href={href(`/jobs/${encodeURIComponent(started.jid)}`)}>{started.jid}</a> started on {started.minions.length} minion{started.minions.length === 1 ? '' : 's'}.
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={act.busy || (!!note && !note.allowed)}>Run</button>
      </Form>
    </details>
  )
}
