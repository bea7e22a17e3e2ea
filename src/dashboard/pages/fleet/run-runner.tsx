/**
 * The Run a runner form: POST /api/run with `client: "runner"` (contract §16), a salt runner such as state.orchestrate
 * on the master, for callers holding `execute runner:<function>`. The job's page follows it and lists an
 * orchestration's child jobs.
 */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { parseJsonField, type RunStarted } from '../../lib/fleet'
import { useAction } from '../../lib/hooks'
import { href } from '../../lib/router'
import { ErrorBox, Field, Form } from '../../lib/ui'
import { ArgFields } from './arg-fields'

/** The form, folded by default like Run command. */
export function RunRunner() {
  const [fun, setFun] = useState('')
  const [arg, setArg] = useState('')
  const [kwarg, setKwarg] = useState('')
  const [started, setStarted] = useState<string | null>(null)
  const act = useAction()
  const submit = () => act.run(async () => {
    setStarted(null)
    const body = { client: 'runner', fun: fun.trim(), arg: parseJsonField(arg, 'array', 'Arguments'), kwarg: parseJsonField(kwarg, 'object', 'Keyword arguments') }
    setStarted((await api<RunStarted>('POST', '/api/run', body)).jid)
  })
  return (
    <details class="panel run-command">
      <summary>Run a runner</summary>
      <Form label="Run a runner" onSubmit={submit}>
        <p class="muted">A salt runner runs on the master, not on minions: an orchestration reaches any minion its steps name.</p>
        <Field id="runner-fun" label="Runner function" hint='e.g. state.orchestrate (with {"mods": "orch.deploy"}), jobs.active'>
          <input id="runner-fun" required maxLength={255} pattern="[A-Za-z0-9_.]+" value={fun} aria-describedby="runner-fun-hint" onInput={(e) => setFun(e.currentTarget.value)} />
        </Field>
        <ArgFields prefix="runner" noun="Runner" arg={arg} setArg={setArg} kwarg={kwarg} setKwarg={setKwarg} argHint="optional" kwargHint='optional, e.g. {"mods": "orch.deploy"}' />
        <ErrorBox error={act.error} />
        {started ? (
          <p role="status" class="ok">Runner job <a href={href(`/jobs/${encodeURIComponent(started)}`)}>{started}</a> started on the master.</p>
        ) : null}
        <button type="submit" class="primary" disabled={act.busy}>Run runner</button>
      </Form>
    </details>
  )
}
