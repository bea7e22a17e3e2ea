/** Silences: alerts they cover still fire and resolve, but nothing is sent until they end. */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { dateTime } from '../../lib/format'
import { useAction, useGet } from '../../lib/hooks'
import { useSession } from '../../lib/session'
import { ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { RuleList, Silence, SilenceList } from './types'

/** The silences page. */
export function SilencesPage() {
  const { can } = useSession()
  const manage = can('manage', 'alert:*')
  const list = useGet<SilenceList>('/api/alerts/silences')
  const rules = useGet<RuleList>('/api/alerts/rules')
  const [f, setF] = useState({ rule_id: '', subject_glob: '*', hours: '2', comment: '' })
  const create = useAction()
  const end = useAction()
  const [note, setNote] = useState('')
  const ruleName = (id: string | null) => (id ? rules.data?.rules.find((r) => r.id === id)?.name ?? id : 'all rules')
  const submit = () => create.run(async () => {
    const ends = new Date(Date.now() + Number(f.hours) * 3600_000).toISOString()
    await api('POST', '/api/alerts/silences', { rule_id: f.rule_id || null, subject_glob: f.subject_glob, ends_at: ends, comment: f.comment })
    await list.reload()
    setNote(`Silenced until ${dateTime(ends)}.`)
  })
  const remove = (s: Silence) => end.run(async () => {
    await api('DELETE', `/api/alerts/silences/${s.id}`)
    await list.reload()
    setNote('Silence ended.')
  })
  const columns: Column<Silence>[] = [
    { label: 'Rule', cell: (s) => ruleName(s.rule_id) },
    { label: 'Subjects', cell: (s) => <span class="mono">{s.subject_glob}</span> },
    { label: 'Ends', cell: (s) => dateTime(s.ends_at) },
    { label: 'Comment', cell: (s) => s.comment || <span class="muted">—</span> },
    { label: 'By', cell: (s) => s.created_by },
    ...(manage ? [{ label: 'Actions', cell: (s: Silence) => <ConfirmButton label="End" name={`End silence ${s.subject_glob}`} question="End this silence?" busy={end.busy} onConfirm={() => remove(s)} /> }] : []),
  ]
  return (
    <Page title="Silences">
      <p role="status" class="ok">{note}</p>
      <ErrorBox error={list.error ?? end.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Silences" rows={list.data?.silences} columns={columns} rowKey={(s) => s.id} empty="No silences." />
      {manage ? (
        <Panel id="h-new-silence" title="New silence">
          <Form onSubmit={submit} label="New silence" class="settings-form">
            <div class="form-grid">
              <Field id="si-rule" label="Rule">
                <select id="si-rule" value={f.rule_id} onChange={(e) => setF({ ...f, rule_id: e.currentTarget.value })}>
                  <option value="">All rules</option>
                  {(rules.data?.rules ?? []).map((r) => <option value={r.id}>{r.name}</option>)}
                </select>
              </Field>
              <Field id="si-glob" label="Subjects (glob)">
                <input id="si-glob" spellcheck={false} autocomplete="off" value={f.subject_glob} onInput={(e) => setF({ ...f, subject_glob: e.currentTarget.value })} />
              </Field>
              <Field id="si-hours" label="For hours">
                <input id="si-hours" inputMode="decimal" value={f.hours} onInput={(e) => setF({ ...f, hours: e.currentTarget.value })} />
              </Field>
              <Field id="si-comment" label="Comment">
                <input id="si-comment" autocomplete="off" maxLength={500} value={f.comment} onInput={(e) => setF({ ...f, comment: e.currentTarget.value })} />
              </Field>
            </div>
            <FormFooter act={create} label="Silence" />
          </Form>
        </Panel>
      ) : null}
    </Page>
  )
}
