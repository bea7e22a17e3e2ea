/** Users page: the user list and, for user managers, the new-user form (contract §3). */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { dateTime } from '../../lib/format'
import { useAction, useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Pager, Panel, Table, type Column } from '../../lib/ui'
import type { User, UserList } from './types'

const PAGE = 50
/** How each source reads in the list. */
const SOURCE: Record<User['source'], string> = { local: 'local', ldap: 'LDAP', oidc: 'OpenID Connect' }

/** The badges that describe a user's state. */
export function UserState({ u }: { u: User }) {
  return (
    <span class="badges">
      <Badge tone={u.is_active ? 'ok' : 'muted'}>{u.is_active ? 'active' : 'inactive'}</Badge>
      {u.must_change_pw ? <Badge tone="warn">must change password</Badge> : null}
      {u.is_builtin ? <Badge tone="info">built-in</Badge> : null}
    </span>
  )
}

/** The form that creates a user. */
function NewUser({ onCreated }: { onCreated: (u: User) => void }) {
  const blank = { username: '', display_name: '', password: '', must_change_pw: true }
  const [f, setF] = useState(blank)
  const act = useAction()
  const submit = () => act.run(async () => {
    onCreated(await api<User>('POST', '/api/users', f))
    setF(blank)
  })
  return (
    <Form onSubmit={submit} label="New user" class="settings-form">
      <div class="form-grid">
        <Field id="nu-name" label="Username" hint="Letters, digits and . _ @ -">
          <input id="nu-name" autocomplete="off" spellcheck={false} required maxLength={64} aria-describedby="nu-name-hint" value={f.username}
            onInput={(e) => setF({ ...f, username: e.currentTarget.value })} />
        </Field>
        <Field id="nu-display" label="Display name">
          <input id="nu-display" autocomplete="off" maxLength={128} value={f.display_name} onInput={(e) => setF({ ...f, display_name: e.currentTarget.value })} />
        </Field>
        <Field id="nu-pass" label="Password" hint="8 to 1024 characters.">
          <input id="nu-pass" type="password" autocomplete="new-password" required minLength={8} maxLength={1024} aria-describedby="nu-pass-hint" value={f.password}
            onInput={(e) => setF({ ...f, password: e.currentTarget.value })} />
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={f.must_change_pw} onChange={(e) => setF({ ...f, must_change_pw: e.currentTarget.checked })} />
        Must change password at first login
      </label>
      <FormFooter act={act} label="Create user" />
    </Form>
  )
}

/** The Users page. */
export function UsersPage() {
  const { can } = useSession()
  const list = useGet<UserList>('/api/users')
  const [offset, setOffset] = useState(0)
  const [created, setCreated] = useState<User | undefined>()
  // GET /api/users has no limit/offset: the list is paged here (user lists are short; see the admin report).
  const rows = list.data?.users.slice(offset, offset + PAGE)
  const columns: Column<User>[] = [
    { label: 'Username', cell: (u) => <a href={href(`/users/${u.id}`)}>{u.username}</a> },
    { label: 'Display name', cell: (u) => u.display_name },
    { label: 'Source', cell: (u) => SOURCE[u.source] ?? u.source },
    { label: 'State', cell: (u) => <UserState u={u} /> },
    { label: 'Roles', cell: (u) => u.roles.map((r) => r.name).join(', ') || <span class="muted">none</span> },
    { label: 'Created', cell: (u) => dateTime(u.created_at) },
  ]
  return (
    <Page title="Users">
      <div role="status">{created ? <p class="ok">User <a href={href(`/users/${created.id}`)}>{created.username}</a> created.</p> : null}</div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Users" rows={rows} columns={columns} rowKey={(u) => u.id} empty="No users." />
      <Pager total={list.data?.total} limit={PAGE} offset={offset} onChange={setOffset} />
      {can('manage_user', 'user:*') ? (
        <Panel id="h-new-user" title="New user">
          <NewUser onCreated={(u) => void list.reload().then(() => setCreated(u))} />
        </Panel>
      ) : null}
    </Page>
  )
}
