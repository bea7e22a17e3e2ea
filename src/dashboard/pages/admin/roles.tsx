/** Roles page: the role list and, for role managers, the new-role form (contract §4). */
import { useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { useAction, useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { Role, RoleList } from './types'

/** The form that creates a role. */
function NewRole({ onCreated }: { onCreated: (r: Role) => void }) {
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const act = useAction()
  const submit = () => act.run(async () => {
    onCreated(await api<Role>('POST', '/api/roles', { name, description }))
    setName('')
    setDescription('')
  })
  return (
    <Form onSubmit={submit} label="New role" class="settings-form">
      <div class="form-grid">
        <Field id="nr-name" label="Name">
          <input id="nr-name" autocomplete="off" required maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="nr-desc" label="Description">
          <input id="nr-desc" autocomplete="off" maxLength={255} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </Field>
      </div>
      <FormFooter act={act} label="Create role" />
    </Form>
  )
}

/** The Roles page. Roles are few (each is created by hand), so the list is not paged. */
export function RolesPage() {
  const { can } = useSession()
  const list = useGet<RoleList>('/api/roles')
  const [created, setCreated] = useState<Role | undefined>()
  const columns: Column<Role>[] = [
    { label: 'Name', cell: (r) => <a href={href(`/roles/${r.id}`)}>{r.name}</a> },
    { label: 'Description', cell: (r) => r.description || <span class="muted">—</span> },
    { label: 'Kind', cell: (r) => r.is_builtin ? <Badge tone="info">built-in</Badge> : <Badge tone="muted">custom</Badge> },
  ]
  return (
    <Page title="Roles">
      <div role="status">{created ? <p class="ok">Role <a href={href(`/roles/${created.id}`)}>{created.name}</a> created.</p> : null}</div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Roles" rows={list.data?.roles} columns={columns} rowKey={(r) => r.id} empty="No roles." />
      {can('manage_role', 'role:*') ? (
        <Panel id="h-new-role" title="New role">
          <NewRole onCreated={(r) => void list.reload().then(() => setCreated(r))} />
        </Panel>
      ) : null}
    </Page>
  )
}
