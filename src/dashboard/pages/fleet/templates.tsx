/** Templates (contract §16): saved commands, private or shared; run with an optional target override, create, edit, delete. */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { parseJsonField, TARGET_TYPES } from '../../lib/fleet'
import { useAction, useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { Static } from '@sinclair/typebox'
import type { TemplateListOut, TemplateOut, TemplateRunOut } from '../../../features/templates/schema'

/** A template as the API answers it. */
export type Template = Static<typeof TemplateOut>

const EMPTY = { id: '', name: '', description: '', tgt: '', tgt_type: 'glob', fun: '', arg: '', kwarg: '', shared: false }
type Draft = typeof EMPTY

/** The Templates page: the list, a Run form per template, and the create/edit form. */
export function TemplatesPage() {
  const { me, canSome, can } = useSession()
  const mayExecute = canSome('execute', 'salt')
  const list = useGet<Static<typeof TemplateListOut>>('/api/templates')
  const [draft, setDraft] = useState<Draft>(EMPTY)
  const [running, setRunning] = useState<Template | null>(null)
  const [override, setOverride] = useState('')
  const [started, setStarted] = useState<{ name: string; jid: string; minions: string[] } | null>(null)
  const [note, setNote] = useState('')
  const save = useAction()
  const run = useAction()
  const del = useAction()
  const mayChange = (t: Template) => mayExecute && (t.owner === me?.username || can('manage', 'template:*'))
  const edit = (t: Template) => setDraft({ id: t.id, name: t.name, description: t.description, tgt: t.tgt, tgt_type: t.tgt_type, fun: t.fun,
    arg: t.arg.length ? JSON.stringify(t.arg) : '', kwarg: Object.keys(t.kwarg).length ? JSON.stringify(t.kwarg) : '', shared: t.shared })
  const submit = () => save.run(async () => {
    const body = { name: draft.name, description: draft.description, tgt: draft.tgt.trim(), tgt_type: draft.tgt_type, fun: draft.fun.trim(), shared: draft.shared,
      arg: parseJsonField(draft.arg, 'array', 'Arguments') ?? [], kwarg: parseJsonField(draft.kwarg, 'object', 'Keyword arguments') ?? {} }
    if (draft.id) await api('PATCH', `/api/templates/${draft.id}`, body)
    else await api('POST', '/api/templates', body)
    await list.reload()
    setNote(draft.id ? `Template ${draft.name} saved.` : `Template ${draft.name} created.`)
    setDraft(EMPTY)
  })
  const runIt = () => run.run(async () => {
    if (!running) return
    setStarted(null)
    const r = await api<Static<typeof TemplateRunOut>>('POST', `/api/templates/${running.id}/run`, override.trim() ? { tgt: override.trim() } : {})
    setStarted({ name: running.name, ...r })
  })
  const remove = (t: Template) => del.run(async () => {
    await api('DELETE', `/api/templates/${t.id}`)
    await list.reload()
    setNote(`Template ${t.name} deleted.`)
  })
  const columns: Column<Template>[] = [
    { label: 'Name', cell: (t) => <><strong>{t.name}</strong>{t.description ? <div class="muted">{t.description}</div> : null}</> },
    { label: 'Command', cell: (t) => <span class="mono">{t.fun} on {t.tgt} ({t.tgt_type})</span> },
    { label: 'Shared', cell: (t) => (t.shared ? 'shared' : 'private') },
    { label: 'Owner', cell: (t) => t.owner ?? '—' },
    {
      label: 'Actions',
      cell: (t) => (
        <span class="actions">
          {mayExecute ? <button type="button" aria-label={`Run ${t.name}`} onClick={() => { setRunning(t); setOverride(''); setStarted(null); run.clear() }}>Run…</button> : null}
          {mayChange(t) ? <button type="button" aria-label={`Edit ${t.name}`} onClick={() => edit(t)}>Edit</button> : null}
          {mayChange(t) ? <ConfirmButton label="Delete" name={`Delete ${t.name}`} question={`Delete template ${t.name}?`} busy={del.busy} onConfirm={() => remove(t)} /> : null}
        </span>
      ),
    },
  ]
  return (
    <Page title="Templates">
      <p role="status" class="ok">{note}</p>
      <ErrorBox error={list.error ?? del.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Templates" rows={list.data?.templates} columns={columns} rowKey={(t) => t.id} empty="No templates yet." />
      {running ? (
        <Panel id="h-run-template" title={`Run ${running.name}`}>
          <Form label={`Run ${running.name}`} onSubmit={runIt}>
            <p class="muted">Runs <span class="mono">{running.fun}</span> with your own permissions.</p>
            <Field id="tpl-run-tgt" label="Target" hint={`leave empty for the template's target: ${running.tgt} (${running.tgt_type})`}>
              <input id="tpl-run-tgt" maxLength={1024} value={override} aria-describedby="tpl-run-tgt-hint" onInput={(e) => setOverride(e.currentTarget.value)} />
            </Field>
            <ErrorBox error={run.error} />
            {started ? (
              <p role="status" class="ok">
                Job <a href={href(`/jobs/${encodeURIComponent(started.jid)}`)}>{started.jid}</a> started on {started.minions.length} minion{started.minions.length === 1 ? '' : 's'}.
              </p>
            ) : null}
            <div class="form-actions">
              <button type="submit" class="primary" disabled={run.busy}>Run</button>
              <button type="button" onClick={() => setRunning(null)}>Close</button>
            </div>
          </Form>
        </Panel>
      ) : null}
      {mayExecute ? (
        <Panel id="h-template-form" title={draft.id ? `Edit ${draft.name}` : 'New template'}>
          <Form label={draft.id ? 'Edit template' : 'New template'} onSubmit={submit} class="settings-form">
            <div class="form-grid">
              <Field id="tpl-name" label="Name">
                <input id="tpl-name" required maxLength={128} autocomplete="off" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
              </Field>
              <Field id="tpl-description" label="Description">
                <input id="tpl-description" maxLength={1024} autocomplete="off" value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
              </Field>
              <Field id="tpl-tgt" label="Target">
                <input id="tpl-tgt" required maxLength={1024} value={draft.tgt} onInput={(e) => setDraft({ ...draft, tgt: e.currentTarget.value })} />
              </Field>
              <Field id="tpl-tgt-type" label="Target type">
                <select id="tpl-tgt-type" value={draft.tgt_type} onChange={(e) => setDraft({ ...draft, tgt_type: e.currentTarget.value })}>
                  {TARGET_TYPES.map((t) => <option value={t}>{t}</option>)}
                </select>
              </Field>
              <Field id="tpl-fun" label="Function">
                <input id="tpl-fun" required maxLength={255} pattern="[A-Za-z0-9_.]+" value={draft.fun} onInput={(e) => setDraft({ ...draft, fun: e.currentTarget.value })} />
              </Field>
              <Field id="tpl-arg" label="Arguments (JSON array)">
                <input id="tpl-arg" class="mono" value={draft.arg} onInput={(e) => setDraft({ ...draft, arg: e.currentTarget.value })} />
              </Field>
              <Field id="tpl-kwarg" label="Keyword arguments (JSON object)">
                <input id="tpl-kwarg" class="mono" value={draft.kwarg} onInput={(e) => setDraft({ ...draft, kwarg: e.currentTarget.value })} />
              </Field>
              <label class="check"><input id="tpl-shared" type="checkbox" checked={draft.shared} onChange={(e) => setDraft({ ...draft, shared: e.currentTarget.checked })} /> Shared with every user</label>
            </div>
            <FormFooter act={save} label={draft.id ? 'Save' : 'Create'} />
            {draft.id ? <button type="button" onClick={() => setDraft(EMPTY)}>Cancel</button> : null}
          </Form>
        </Panel>
      ) : null}
    </Page>
  )
}
