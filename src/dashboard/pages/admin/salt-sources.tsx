/** Salt sources page (contract §15 "Several masters"): every salt-api Saltdeck reads, `default` being the salt settings. */
import { useState } from 'preact/hooks'
import type { Static } from '@sinclair/typebox'
import { api, ApiError } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { dateTime } from '../../lib/format'
import { errorsByField, saltChanges } from '../../lib/form-values'
import { useAction, useGet } from '../../lib/hooks'
import { EAUTH_VALUES, PRESENCE_METHODS } from '../../lib/settings-fields'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Table, type Column } from '../../lib/ui'
import type { SaltSourceListOut, SaltSourceOut } from '../../../features/salt-sources/schema'

type Source = Static<typeof SaltSourceOut>
type Fields = { name: string; url: string; username: string; password: string; verify: boolean; eauth: string; presence_method: string }

const blank: Fields = { name: '', url: '', username: '', password: '', verify: true, eauth: 'pam', presence_method: 'present' }
const formOf = (s: Source): Fields => ({ name: s.name, url: s.url ?? '', username: s.username ?? '', password: '', verify: s.verify, eauth: s.eauth, presence_method: s.presence_method })

/** The add or edit form of one source: its name only when adding (a name never changes). */
function SourceForm({ editing, onDone }: { editing: Source | null; onDone: (note: string) => void }) {
  const [form, setForm] = useState<Fields>(editing ? formOf(editing) : blank)
  const [note, setNote] = useState('')
  const save = useAction()
  const set = (patch: Partial<Fields>) => {
    setNote('')
    setForm((f) => ({ ...f, ...patch }))
  }
  const bad = errorsByField(save.error instanceof ApiError && save.error.status === 422 ? save.error.detail : undefined)
  const submit = () => save.run(async () => {
    if (editing) {
      const body = saltChanges(editing, form)
      if (!Object.keys(body).length) return setNote('No changes to save.')
      await api('PUT', `/api/admin/salt-sources/${editing.name}`, body)
      return onDone(`Salt source ${editing.name} saved.`)
    }
    const { password, ...rest } = form
    await api('POST', '/api/admin/salt-sources', password ? form : rest)
    setForm(blank)
    onDone(`Salt source ${form.name} added.`)
  })
  const id = (f: string) => `src-${f}`
  return (
    <Form onSubmit={submit} label={editing ? `Edit salt source ${editing.name}` : 'New salt source'} noValidate class="settings-form">
      <div class="form-grid">
        {editing ? null : (
          <Field id={id('name')} label="Name" hint="1 to 64 of a-z, 0-9 and -; it cannot change later.">
            <input id={id('name')} autocomplete="off" spellcheck={false} maxLength={64} value={form.name} aria-describedby={`${id('name')}-hint`}
              aria-invalid={bad.name ? true : undefined} onInput={(e) => set({ name: e.currentTarget.value })} />
          </Field>
        )}
        <Field id={id('url')} label="salt-api URL">
          <input id={id('url')} type="url" autocomplete="off" spellcheck={false} value={form.url} aria-invalid={bad.url ? true : undefined}
            onInput={(e) => set({ url: e.currentTarget.value })} />
        </Field>
        <Field id={id('user')} label="Username">
          <input id={id('user')} autocomplete="off" spellcheck={false} value={form.username} aria-invalid={bad.username ? true : undefined}
            onInput={(e) => set({ username: e.currentTarget.value })} />
        </Field>
        <Field id={id('pass')} label="Password" hint={editing ? `${editing.password_set ? 'A password is stored.' : 'No password is stored.'} Leave empty to keep it; a new URL without a password forgets it.` : 'Stored encrypted, never shown again.'}>
          <input id={id('pass')} type="password" autocomplete="new-password" value={form.password} aria-describedby={`${id('pass')}-hint`}
            aria-invalid={bad.password ? true : undefined} onInput={(e) => set({ password: e.currentTarget.value })} />
        </Field>
        <Field id={id('eauth')} label="Authentication back end (eauth)">
          <select id={id('eauth')} value={form.eauth} onChange={(e) => set({ eauth: e.currentTarget.value })}>
            {EAUTH_VALUES.map((v) => <option value={v}>{v}</option>)}
          </select>
        </Field>
        <Field id={id('presence')} label="Presence method">
          <select id={id('presence')} value={form.presence_method} onChange={(e) => set({ presence_method: e.currentTarget.value })}>
            {PRESENCE_METHODS.map((v) => <option value={v}>{v}</option>)}
          </select>
        </Field>
      </div>
      <div class="check-grid">
        <label class="check">
          <input type="checkbox" checked={form.verify} onChange={(e) => set({ verify: e.currentTarget.checked })} />
          Verify TLS certificates
        </label>
      </div>
      <FormFooter act={save} note={note} label={editing ? 'Save' : 'Add source'} />
    </Form>
  )
}

/** The salt sources page. */
export function SaltSourcesPage() {
  const list = useGet<Static<typeof SaltSourceListOut>>('/api/admin/salt-sources')
  const [editing, setEditing] = useState<Source | null>(null)
  const [note, setNote] = useState('')
  const remove = useAction()
  const done = (text: string) => {
    setEditing(null)
    void list.reload().then(() => setNote(text))
  }
  const drop = (s: Source) => remove.run(async () => {
    await api('DELETE', `/api/admin/salt-sources/${s.name}`)
    done(`Salt source ${s.name} deleted.`)
  })
  const columns: Column<Source>[] = [
    { label: 'Name', cell: (s) => s.name },
    { label: 'salt-api URL', cell: (s) => s.url ?? <span class="muted">not set</span> },
    { label: 'Username', cell: (s) => s.username ?? '' },
    { label: 'Password', cell: (s) => s.password_set ? <Badge tone="ok">stored</Badge> : <Badge tone="warn">none</Badge> },
    { label: 'Changed', cell: (s) => dateTime(s.updated_at) },
    {
      label: 'Action',
      cell: (s) => (
        <span class="row-actions">
          <button type="button" aria-label={`Edit ${s.name}`} onClick={() => { setNote(''); setEditing(s) }}>Edit</button>
          {s.name === 'default' ? null : (
            <ConfirmButton label="Delete" name={`Delete ${s.name}`} busy={remove.busy} onConfirm={() => drop(s)}
              question={`Delete salt source ${s.name}? Its pollers and stream stop; what it recorded keeps its name.`} />
          )}
        </span>
      ),
    },
  ]
  return (
    <Page title="Salt sources">
      <p>Each salt source is one salt-api (one master, or one salt master cluster). <strong>default</strong> is the salt connection of the Settings page.</p>
      <div role="status">{note ? <p class="ok">{note}</p> : null}</div>
      <ErrorBox error={list.error} />
      <ErrorBox error={remove.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Salt sources" rows={list.data?.sources} columns={columns} rowKey={(s) => s.name} />
      <section class="panel top-gap" aria-labelledby="h-source-form">
        <h2 id="h-source-form">{editing ? `Edit ${editing.name}` : 'New salt source'}</h2>
        <SourceForm key={editing?.name ?? '+'} editing={editing} onDone={done} />
        {editing ? <p><button type="button" onClick={() => setEditing(null)}>Cancel</button></p> : null}
      </section>
    </Page>
  )
}
