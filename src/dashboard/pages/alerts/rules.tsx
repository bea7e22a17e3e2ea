/** The alert rules page: the rules, and for managers a form that creates one, enable/disable and delete. */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { errorsByField, readInt } from '../../lib/form-values'
import { useAction, useGet } from '../../lib/hooks'
import { useSession } from '../../lib/session'
import { ApiError } from '../../lib/api'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import { KINDS, type Channel, type Rule } from './types'

const RUN_KINDS = ['run_failed', 'run_blocked', 'run_changed']
const TIMED: Record<string, [number, number]> = { minion_offline: [10, 10080], salt_unreachable: [5, 1440], master_unreachable: [2, 1440] }

/** The form that creates a rule. */
function NewRule({ channels, onCreated }: { channels: Channel[]; onCreated: (r: Rule) => void }) {
  const [f, setF] = useState({ name: '', kind: 'run_failed', minion_glob: '*', fun_glob: '*', for_minutes: '', renotify: '0', channel_ids: [] as string[] })
  const act = useAction()
  const set = (p: Partial<typeof f>) => setF((x) => ({ ...x, ...p }))
  const bad = errorsByField(act.error instanceof ApiError && act.error.status === 422 ? act.error.detail : undefined)
  const submit = () => act.run(async () => {
    const params: Record<string, unknown> = RUN_KINDS.includes(f.kind) ? { fun_glob: f.fun_glob } : TIMED[f.kind] && f.for_minutes ? { for_minutes: readInt(f.for_minutes) } : {}
    onCreated(await api<Rule>('POST', '/api/alerts/rules', { name: f.name, kind: f.kind, minion_glob: f.minion_glob, params, channel_ids: f.channel_ids, renotify_minutes: readInt(f.renotify) }))
    set({ name: '' })
  })
  return (
    <Form onSubmit={submit} label="New alert rule" class="settings-form">
      <div class="form-grid">
        <Field id="ar-name" label="Name">
          <input id="ar-name" autocomplete="off" required maxLength={128} value={f.name} aria-invalid={bad.name ? true : undefined} onInput={(e) => set({ name: e.currentTarget.value })} />
        </Field>
        <Field id="ar-kind" label="When">
          <select id="ar-kind" value={f.kind} onChange={(e) => set({ kind: e.currentTarget.value })}>
            {Object.entries(KINDS).map(([k, v]) => <option value={k}>{v} ({k})</option>)}
          </select>
        </Field>
        <Field id="ar-glob" label="Minions (glob)">
          <input id="ar-glob" autocomplete="off" spellcheck={false} value={f.minion_glob} onInput={(e) => set({ minion_glob: e.currentTarget.value })} />
        </Field>
        {RUN_KINDS.includes(f.kind) ? (
          <Field id="ar-fun" label="Functions (glob)">
            <input id="ar-fun" autocomplete="off" spellcheck={false} value={f.fun_glob} onInput={(e) => set({ fun_glob: e.currentTarget.value })} />
          </Field>
        ) : null}
        {TIMED[f.kind] ? (
          <Field id="ar-for" label="For minutes" hint={`1 to ${TIMED[f.kind]![1]}; default ${TIMED[f.kind]![0]}.`}>
            <input id="ar-for" inputMode="numeric" value={f.for_minutes} aria-describedby="ar-for-hint" onInput={(e) => set({ for_minutes: e.currentTarget.value })} />
          </Field>
        ) : null}
        <Field id="ar-renotify" label="Re-send while firing (minutes)" hint="0 = never.">
          <input id="ar-renotify" inputMode="numeric" value={f.renotify} aria-describedby="ar-renotify-hint" onInput={(e) => set({ renotify: e.currentTarget.value })} />
        </Field>
      </div>
      <fieldset class="check-grid">
        <legend>Channels</legend>
        {channels.length ? channels.map((c) => (
          <label class="check">
            <input type="checkbox" checked={f.channel_ids.includes(c.id)}
              onChange={(e) => set({ channel_ids: e.currentTarget.checked ? [...f.channel_ids, c.id] : f.channel_ids.filter((x) => x !== c.id) })} />
            {c.name} <span class="muted">({c.type})</span>
          </label>
        )) : <p class="muted">No channels yet: alerts of this rule are kept but sent nowhere.</p>}
      </fieldset>
      <FormFooter act={act} label="Create rule" />
    </Form>
  )
}

/** The rules page. */
export function RulesPage() {
  const { can } = useSession()
  const manage = can('manage', 'alert:*')
  const list = useGet<{ rules: Rule[] }>('/api/alerts/rules')
  const chans = useGet<{ channels: Channel[] }>('/api/alerts/channels')
  const act = useAction()
  const [note, setNote] = useState('')
  const name = (id: string) => chans.data?.channels.find((c) => c.id === id)?.name ?? id
  const change = (r: Rule, enabled: boolean) => act.run(async () => {
    await api('PATCH', `/api/alerts/rules/${r.id}`, { enabled })
    setNote(`Rule ${r.name} ${enabled ? 'enabled' : 'disabled'}.`)
    list.reload()
  })
  const remove = (r: Rule) => act.run(async () => {
    await api('DELETE', `/api/alerts/rules/${r.id}`)
    setNote(`Rule ${r.name} deleted.`)
    list.reload()
  })
  const columns: Column<Rule>[] = [
    { label: 'Name', cell: (r) => r.name },
    { label: 'When', cell: (r) => <>{KINDS[r.kind] ?? r.kind} <span class="muted">({r.kind})</span></> },
    { label: 'Minions', cell: (r) => <span class="mono">{r.minion_glob}</span> },
    { label: 'Parameters', cell: (r) => Object.entries(r.params).map(([k, v]) => `${k} ${v}`).join(', ') || '—' },
    { label: 'Channels', cell: (r) => r.channel_ids.map(name).join(', ') || <span class="muted">none</span> },
    { label: 'Enabled', cell: (r) => <Badge tone={r.enabled ? 'ok' : 'muted'}>{r.enabled ? 'yes' : 'no'}</Badge> },
    ...(manage ? [{
      label: 'Actions', class: 'nowrap',
      cell: (r: Rule) => (
        <>
          <button type="button" disabled={act.busy} onClick={() => change(r, !r.enabled)}>{r.enabled ? 'Disable' : 'Enable'}</button>{' '}
          <ConfirmButton label="Delete" name={`Delete ${r.name}`} question={`Delete rule ${r.name} and its alerts?`} busy={act.busy} onConfirm={() => remove(r)} />
        </>
      ),
    }] : []),
  ]
  return (
    <Page title="Alert rules">
      <p role="status" class="ok">{note}</p>
      <ErrorBox error={list.error ?? act.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Alert rules" rows={list.data?.rules} columns={columns} rowKey={(r) => r.id} empty="No rules: nothing is watched yet." />
      {manage ? (
        <Panel id="h-new-rule" title="New rule">
          <p class="muted">A rule judges what happens after it is created, not what is already stored.</p>
          <NewRule channels={chans.data?.channels ?? []} onCreated={(r) => { setNote(`Rule ${r.name} created.`); list.reload() }} />
        </Panel>
      ) : null}
    </Page>
  )
}
