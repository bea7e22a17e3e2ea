/** The alert rules page: the rules, and for managers a form that creates one, edit, enable/disable and delete. */
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { errorsByField } from '../../lib/form-values'
import { useAction, useGet } from '../../lib/hooks'
import { useSession } from '../../lib/session'
import { ApiError } from '../../lib/api'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import { KINDS, type Channel, type ChannelList, type Rule, type RuleList } from './types'
import { blankRule, createBody, FLEET_KINDS, formOf, MIN_SEVERITIES, minionsText, patchBody, RUN_KINDS, TIMED, type RuleForm } from './rule-form'

/**
 * The form that creates a rule, or edits one (`rule` given; its kind stays). After a create it starts blank again, so
 * the next rule does not inherit the last one's minion glob. Without a channel it says that nothing will be sent and
 * asks once more before saving.
 */
function RuleEditor({ channels, rule, onSaved, onCancel }: { channels: Channel[]; rule?: Rule; onSaved: (r: Rule) => void; onCancel?: () => void }) {
  const [f, setF] = useState<RuleForm>(() => (rule ? formOf(rule) : blankRule()))
  const [sure, setSure] = useState(false)
  const act = useAction()
  useEffect(() => { setF(rule ? formOf(rule) : blankRule()); setSure(false) }, [rule?.id])
  const set = (p: Partial<RuleForm>) => { setSure(false); setF((x) => ({ ...x, ...p })) }
  const bad = errorsByField(act.error instanceof ApiError && act.error.status === 422 ? act.error.detail : undefined)
  const noChannel = f.channel_ids.length === 0
  const fleet = FLEET_KINDS.includes(f.kind)
  const id = rule ? `er-${rule.id}` : 'ar'
  const submit = () => act.run(async () => {
    // The API takes a rule without a channel (contract §11): its alerts are listed but sent nowhere. Ask first.
    if (noChannel && !sure) return setSure(true)
    const saved = rule
      ? await api<Rule>('PATCH', `/api/alerts/rules/${rule.id}`, patchBody(f))
      : await api<Rule>('POST', '/api/alerts/rules', createBody(f))
    if (!rule) setF(blankRule())
    setSure(false)
    onSaved(saved)
  })
  return (
    <Form onSubmit={submit} label={rule ? `Edit rule ${rule.name}` : 'New alert rule'} class="settings-form">
      <div class="form-grid">
        <Field id={`${id}-name`} label="Name">
          <input id={`${id}-name`} autocomplete="off" required maxLength={128} value={f.name} aria-invalid={bad.name ? true : undefined} onInput={(e) => set({ name: e.currentTarget.value })} />
        </Field>
        <Field id={`${id}-kind`} label="When">
          <select id={`${id}-kind`} value={f.kind} disabled={!!rule} onChange={(e) => set({ kind: e.currentTarget.value })}>
            {Object.entries(KINDS).map(([k, v]) => <option value={k}>{v}</option>)}
          </select>
        </Field>
        {fleet ? null : (
          <Field id={`${id}-glob`} label="Minions (glob)">
            <input id={`${id}-glob`} autocomplete="off" spellcheck={false} value={f.minion_glob} aria-invalid={bad.minion_glob ? true : undefined} onInput={(e) => set({ minion_glob: e.currentTarget.value })} />
          </Field>
        )}
        {RUN_KINDS.includes(f.kind) ? (
          <Field id={`${id}-fun`} label="Functions (glob)">
            <input id={`${id}-fun`} autocomplete="off" spellcheck={false} value={f.fun_glob} onInput={(e) => set({ fun_glob: e.currentTarget.value })} />
          </Field>
        ) : null}
        {TIMED[f.kind] ? (
          <Field id={`${id}-for`} label="For minutes" hint={`1 to ${TIMED[f.kind]![1]}; default ${TIMED[f.kind]![0]}.`}>
            <input id={`${id}-for`} inputMode="numeric" value={f.for_minutes} aria-describedby={`${id}-for-hint`} onInput={(e) => set({ for_minutes: e.currentTarget.value })} />
          </Field>
        ) : null}
        {f.kind === 'vulnerable' ? (
          <Field id={`${id}-sev`} label="At or above severity">
            <select id={`${id}-sev`} value={f.min_severity} onChange={(e) => set({ min_severity: e.currentTarget.value })}>
              {MIN_SEVERITIES.map((v) => <option value={v}>{v}</option>)}
            </select>
          </Field>
        ) : null}
        <Field id={`${id}-renotify`} label="Re-send while firing (minutes)" hint="0 = never.">
          <input id={`${id}-renotify`} inputMode="numeric" value={f.renotify} aria-describedby={`${id}-renotify-hint`} onInput={(e) => set({ renotify: e.currentTarget.value })} />
        </Field>
      </div>
      {fleet ? <p class="muted">This rule is about the whole fleet, not a minion: it takes no minion glob.</p> : null}
      <fieldset class="check-grid">
        <legend>Channels</legend>
        {channels.length ? channels.map((c) => (
          <label class="check">
            <input type="checkbox" checked={f.channel_ids.includes(c.id)}
              onChange={(e) => set({ channel_ids: e.currentTarget.checked ? [...f.channel_ids, c.id] : f.channel_ids.filter((x) => x !== c.id) })} />
            {c.name} <span class="muted">({c.type})</span>
          </label>
        )) : <p class="muted">No channels yet: add one under Channels to be told.</p>}
      </fieldset>
      {noChannel ? (
        <p class="warn-text" role={sure ? 'alert' : undefined}>
          No channel: nothing will be sent. The rule's alerts are only listed here.{sure ? ` Press "${rule ? 'Save without a channel' : 'Create without a channel'}" to save it anyway.` : ''}
        </p>
      ) : null}
      <FormFooter act={act} label={sure ? (rule ? 'Save without a channel' : 'Create without a channel') : rule ? 'Save rule' : 'Create rule'} />
      {onCancel ? <button type="button" onClick={onCancel}>Cancel</button> : null}
    </Form>
  )
}

/** The rules page. */
export function RulesPage() {
  const { can } = useSession()
  const manage = can('manage', 'alert:*')
  const list = useGet<RuleList>('/api/alerts/rules')
  const chans = useGet<ChannelList>('/api/alerts/channels')
  const act = useAction()
  const [note, setNote] = useState('')
  const [editing, setEditing] = useState<Rule | null>(null)
  const name = (id: string) => chans.data?.channels.find((c) => c.id === id)?.name ?? id
  const change = (r: Rule, enabled: boolean) => act.run(async () => {
    await api('PATCH', `/api/alerts/rules/${r.id}`, { enabled })
    await list.reload()
    setNote(`Rule ${r.name} ${enabled ? 'enabled' : 'disabled'}.`)
  })
  const remove = (r: Rule) => act.run(async () => {
    await api('DELETE', `/api/alerts/rules/${r.id}`)
    await list.reload()
    setNote(`Rule ${r.name} deleted.`)
  })
  const columns: Column<Rule>[] = [
    { label: 'Name', cell: (r) => r.name },
    { label: 'When', cell: (r) => <>{KINDS[r.kind] ?? r.kind} <span class="muted">({r.kind})</span></> },
    { label: 'Minions', cell: (r) => (minionsText(r) === null ? <span class="muted">whole fleet</span> : <span class="mono">{r.minion_glob}</span>) },
    { label: 'Parameters', cell: (r) => Object.entries(r.params).map(([k, v]) => `${k} ${v}`).join(', ') || '—' },
    { label: 'Channels', cell: (r) => r.channel_ids.map(name).join(', ') || <span class="muted">none</span> },
    { label: 'Enabled', cell: (r) => <Badge tone={r.enabled ? 'ok' : 'muted'}>{r.enabled ? 'yes' : 'no'}</Badge> },
    ...(manage ? [{
      label: 'Actions', class: 'nowrap',
      cell: (r: Rule) => (
        <>
          <button type="button" aria-label={`Edit ${r.name}`} disabled={act.busy} onClick={() => { setNote(''); setEditing(r) }}>Edit</button>{' '}
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
      {manage && editing ? (
        <Panel id="h-edit-rule" title={`Edit rule ${editing.name}`}>
          <RuleEditor channels={chans.data?.channels ?? []} rule={editing} onCancel={() => setEditing(null)}
            onSaved={(r) => { setEditing(null); void list.reload().then(() => setNote(`Rule ${r.name} saved.`)) }} />
        </Panel>
      ) : null}
      {manage ? (
        <Panel id="h-new-rule" title="New rule">
          <p class="muted">A rule judges what happens after it is created, not what is already stored.</p>
          <RuleEditor channels={chans.data?.channels ?? []} onSaved={(r) => void list.reload().then(() => setNote(`Rule ${r.name} created.`))} />
        </Panel>
      ) : null}
    </Page>
  )
}
