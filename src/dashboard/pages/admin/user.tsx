/** One user: details, edit, password, roles and delete (contract §3). */
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { dateTime } from '../../lib/format'
import { changedFields } from '../../lib/form-values'
import { useAction, useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { href, navigate } from '../../lib/router'
import { useSession } from '../../lib/session'
import { ErrorBox, Field, Form, FormFooter, Loading, Page, Panel } from '../../lib/ui'
import type { RoleList, User, UserRoles } from './types'
import { UserState } from './users'

/** Display name and active flag. */
function EditUser({ u, onSaved }: { u: User; onSaved: () => void }) {
  const base = { display_name: u.display_name, is_active: u.is_active }
  const [f, setF] = useState(base)
  const [note, setNote] = useState('')
  const act = useAction()
  useEffect(() => setF(base), [u.display_name, u.is_active])
  const submit = () => act.run(async () => {
    setNote('')
    const body = changedFields(base, f)
    if (!Object.keys(body).length) return setNote('No changes to save.')
    await api<User>('PATCH', `/api/users/${u.id}`, body)
    onSaved()
    setNote('Saved.')
  })
  return (
    <Form onSubmit={submit} label="Edit user" class="settings-form">
      <div class="form-grid">
        <Field id="eu-display" label="Display name">
          <input id="eu-display" maxLength={128} value={f.display_name} onInput={(e) => { setNote(''); setF({ ...f, display_name: e.currentTarget.value }) }} />
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={f.is_active} onChange={(e) => { setNote(''); setF({ ...f, is_active: e.currentTarget.checked }) }} />
        Active (can log in)
      </label>
      <FormFooter act={act} note={note} />
    </Form>
  )
}

/** Sets a new password for the user (ends their sessions). */
function SetPassword({ u, onDone }: { u: User; onDone: () => void }) {
  const [pw, setPw] = useState('')
  const [must, setMust] = useState(true)
  const [note, setNote] = useState('')
  const act = useAction()
  const submit = () => act.run(async () => {
    setNote('')
    await api('POST', `/api/users/${u.id}/password`, { new_password: pw, must_change_pw: must })
    setPw('')
    setNote('Password set. The user\'s sessions were ended.')
    onDone()
  })
  return (
    <Form onSubmit={submit} label="Set password" class="settings-form">
      <input type="text" name="username" autocomplete="username" value={u.username} hidden readOnly />
      <div class="form-grid">
        <Field id="sp-pass" label="New password" hint="8 to 1024 characters.">
          <input id="sp-pass" type="password" autocomplete="new-password" required minLength={8} maxLength={1024} aria-describedby="sp-pass-hint" value={pw}
            onInput={(e) => { setNote(''); setPw(e.currentTarget.value) }} />
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={must} onChange={(e) => setMust(e.currentTarget.checked)} />
        Must change password at next login
      </label>
      <FormFooter act={act} note={note} label="Set password" />
    </Form>
  )
}

/** The user's roles as checkboxes over every role. */
function UserRoles({ u, manage, onSaved }: { u: User; manage: boolean; onSaved: () => void }) {
  const { can } = useSession()
  const assigned = useGet<UserRoles>(`/api/users/${u.id}/roles`)
  const all = useGet<RoleList>(manage && can('view', 'role:*') ? '/api/roles' : null)
  const [picked, setPicked] = useState<Set<string>>(new Set())
  const [note, setNote] = useState('')
  const act = useAction()
  useEffect(() => setPicked(new Set(assigned.data?.roles.map((r) => r.id) ?? [])), [assigned.data])
  const toggle = (id: string, on: boolean) => {
    setNote('')
    setPicked((p) => {
      const n = new Set(p)
      if (on) n.add(id)
      else n.delete(id)
      return n
    })
  }
  const submit = () => act.run(async () => {
    setNote('')
    await api('PUT', `/api/users/${u.id}/roles`, { role_ids: [...picked] })
    await assigned.reload()
    setNote('Roles saved.')
    onSaved()
  })
  if (!all.data)
    return (
      <>
        <ErrorBox error={assigned.error ?? all.error} />
        <p>{assigned.data ? assigned.data.roles.map((r) => r.name).join(', ') || 'No roles.' : ''}</p>
      </>
    )
  return (
    <Form onSubmit={submit} label="Roles" class="settings-form">
      <fieldset class="checks">
        <legend>Roles of {u.username}</legend>
        <div class="check-grid">
          {all.data.roles.map((r) => (
            <label class="check" key={r.id}>
              <input type="checkbox" checked={picked.has(r.id)} onChange={(e) => toggle(r.id, e.currentTarget.checked)} />
              {r.name}
            </label>
          ))}
        </div>
      </fieldset>
      <FormFooter act={act} note={note} label="Save roles" />
    </Form>
  )
}

/** The user detail page. */
export function UserPage({ params }: PageProps) {
  const { can } = useSession()
  const manage = can('manage_user', 'user:*')
  const got = useGet<User>(`/api/users/${encodeURIComponent(params.id!)}`)
  const del = useAction()
  const u = got.data
  const remove = () => del.run(async () => {
    await api('DELETE', `/api/users/${u!.id}`)
    navigate('/users')
  })
  return (
    <Page title={u ? `User ${u.username}` : 'User'} actions={<a href={href('/users')}>All users</a>}>
      <ErrorBox error={got.error} />
      <Loading when={got.loading && !u} />
      {u ? (
        <>
          <Panel id="h-user" title="Details">
            <dl class="summary">
              <div><dt>Username</dt><dd>{u.username}</dd></div>
              <div><dt>Display name</dt><dd>{u.display_name || '—'}</dd></div>
              <div><dt>State</dt><dd><UserState u={u} /></dd></div>
              <div><dt>Created</dt><dd>{dateTime(u.created_at)}</dd></div>
              <div><dt>Updated</dt><dd>{dateTime(u.updated_at)}</dd></div>
            </dl>
          </Panel>
          {manage ? (
            <Panel id="h-edit" title="Edit">
              <EditUser u={u} onSaved={got.reload} />
            </Panel>
          ) : null}
          <Panel id="h-roles" title="Roles">
            <UserRoles u={u} manage={manage} onSaved={got.reload} />
          </Panel>
          {manage ? (
            <>
              <Panel id="h-password" title="Set password">
                <SetPassword u={u} onDone={got.reload} />
              </Panel>
              <Panel id="h-delete" title="Delete">
                <p>Deleting a user ends their sessions and API tokens.</p>
                <ErrorBox error={del.error} />
                <ConfirmButton label="Delete" question={`Delete user ${u.username}? This cannot be undone.`} busy={del.busy} onConfirm={remove} />
              </Panel>
            </>
          ) : null}
        </>
      ) : null}
    </Page>
  )
}
