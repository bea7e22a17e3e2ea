/** Schedules (contract §16): templates run on a cron in a time zone as their creator; next and last run, enable and disable. */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { useAction, useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { When } from '../../lib/when'
import { ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { Static } from '@sinclair/typebox'
import type { ScheduleListOut, ScheduleOut, TemplateListOut } from '../../../features/templates/schema'

/** A schedule as the API answers it. */
type Schedule = Static<typeof ScheduleOut>

/** The Schedules page: the list with next and last runs, enable/disable, and a form creating one from a template. */
export function SchedulesPage() {
  const { me, canSome, can } = useSession()
  const mayExecute = canSome('execute', 'salt')
  const list = useGet<Static<typeof ScheduleListOut>>('/api/schedules')
  const templates = useGet<Static<typeof TemplateListOut>>(mayExecute ? '/api/templates' : null)
  const [f, setF] = useState({ name: '', template_id: '', cron: '0 3 * * *', timezone: 'UTC' })
  const [note, setNote] = useState('')
  const create = useAction()
  const change = useAction()
  const mayChange = (s: Schedule) => mayExecute && (s.created_by === me?.username || can('manage', 'template:*'))
  const submit = () => create.run(async () => {
    const tid = f.template_id || templates.data?.templates[0]?.id || ''
    await api('POST', '/api/schedules', { ...f, template_id: tid })
    await list.reload()
    setNote(`Schedule ${f.name} created.`)
    setF({ ...f, name: '' })
  })
  const toggle = (s: Schedule) => change.run(async () => {
    await api('PATCH', `/api/schedules/${s.id}`, { enabled: !s.enabled })
    await list.reload()
    setNote(`Schedule ${s.name} ${s.enabled ? 'disabled' : 'enabled'}.`)
  })
  const remove = (s: Schedule) => change.run(async () => {
    await api('DELETE', `/api/schedules/${s.id}`)
    await list.reload()
    setNote(`Schedule ${s.name} deleted.`)
  })
  const columns: Column<Schedule>[] = [
    { label: 'Name', cell: (s) => <strong>{s.name}</strong> },
    { label: 'Template', cell: (s) => s.template_name ?? s.template_id },
    { label: 'When', cell: (s) => <span class="mono">{s.cron} ({s.timezone})</span> },
    { label: 'State', cell: (s) => (s.enabled ? 'enabled' : 'disabled') },
    { label: 'Next run', cell: (s) => (s.next_run_at ? <When ts={s.next_run_at} /> : <span class="muted">—</span>) },
    {
      label: 'Last run',
      cell: (s) => (
        <>
          {s.last_run_at ? <When ts={s.last_run_at} /> : <span class="muted">never</span>}
          {s.last_jid ? <> · <a href={href(`/jobs/${encodeURIComponent(s.last_jid)}`)}>{s.last_jid}</a></> : null}
          {s.last_error ? <div class="bad">{s.last_error}</div> : null}
        </>
      ),
    },
    { label: 'As', cell: (s) => s.created_by ?? '—' },
    {
      label: 'Actions',
      cell: (s) => (mayChange(s) ? (
        <span class="actions">
          <button type="button" aria-label={`${s.enabled ? 'Disable' : 'Enable'} ${s.name}`} disabled={change.busy} onClick={() => toggle(s)}>{s.enabled ? 'Disable' : 'Enable'}</button>
          <ConfirmButton label="Delete" name={`Delete ${s.name}`} question={`Delete schedule ${s.name}?`} busy={change.busy} onConfirm={() => remove(s)} />
        </span>
      ) : null),
    },
  ]
  return (
    <Page title="Schedules">
      <p class="muted">A schedule runs its template as the user who created it, with that user's permissions at the time. A run missed while Saltdeck was down is not made up.</p>
      <p role="status" class="ok">{note}</p>
      <ErrorBox error={list.error ?? change.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Schedules" rows={list.data?.schedules} columns={columns} rowKey={(s) => s.id} empty="No schedules yet." />
      {mayExecute ? (
        <Panel id="h-new-schedule" title="New schedule">
          <Form label="New schedule" onSubmit={submit} class="settings-form">
            <div class="form-grid">
              <Field id="sch-name" label="Name">
                <input id="sch-name" required maxLength={128} autocomplete="off" value={f.name} onInput={(e) => setF({ ...f, name: e.currentTarget.value })} />
              </Field>
              <Field id="sch-template" label="Template">
                <select id="sch-template" required value={f.template_id} onChange={(e) => setF({ ...f, template_id: e.currentTarget.value })}>
                  {(templates.data?.templates ?? []).map((t) => <option value={t.id}>{t.name}</option>)}
                </select>
              </Field>
              <Field id="sch-cron" label="Cron" hint="five fields: minute hour day-of-month month day-of-week">
                <input id="sch-cron" required class="mono" maxLength={255} value={f.cron} aria-describedby="sch-cron-hint" onInput={(e) => setF({ ...f, cron: e.currentTarget.value })} />
              </Field>
              <Field id="sch-tz" label="Time zone" hint="an IANA zone, e.g. Europe/Berlin">
                <input id="sch-tz" required maxLength={64} value={f.timezone} aria-describedby="sch-tz-hint" onInput={(e) => setF({ ...f, timezone: e.currentTarget.value })} />
              </Field>
            </div>
            <FormFooter act={create} label="Create" />
          </Form>
        </Panel>
      ) : null}
    </Page>
  )
}
