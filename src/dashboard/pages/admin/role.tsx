/** One role: description, permissions (verb, resource glob and the minions an execute grant is scoped to) and delete (contract §4, §14). */
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { useAction, useGet } from '../../lib/hooks'
import type { PageProps } from '../../lib/pages'
import { href, navigate } from '../../lib/router'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { RoleDetail } from './types'

type Permission = RoleDetail['permissions'][number]

/** The description form. */
function EditRole({ role, onSaved }: { role: RoleDetail; onSaved: () => void }) {
  const [description, setDescription] = useState(role.description)
  const [note, setNote] = useState('')
  const act = useAction()
  useEffect(() => setDescription(role.description), [role.description])
  const submit = () => act.run(async () => {
    setNote('')
    if (description === role.description) return setNote('No changes to save.')
    await api('PATCH', `/api/roles/${role.id}`, { description })
    setNote('Saved.')
    onSaved()
  })
  return (
    <Form onSubmit={submit} label="Edit role" class="settings-form">
      <div class="form-grid">
        <Field id="er-desc" label="Description">
          <input id="er-desc" maxLength={255} value={description} onInput={(e) => { setNote(''); setDescription(e.currentTarget.value) }} />
        </Field>
      </div>
      <FormFooter act={act} note={note} />
    </Form>
  )
}

/** The form that grants a permission. */
function AddPermission({ role, onAdded }: { role: RoleDetail; onAdded: () => void }) {
  const [verb, setVerb] = useState('')
  const [glob, setGlob] = useState('')
  const [target, setTarget] = useState('')
  const act = useAction()
  const submit = () => act.run(async () => {
    await api('POST', `/api/roles/${role.id}/permissions`, { verb, resource_glob: glob, target_glob: target.trim() || '*' })
    setVerb('')
    setGlob('')
    setTarget('')
    onAdded()
  })
  return (
    <Form onSubmit={submit} label="Add permission" class="settings-form">
      <div class="form-grid">
        <Field id="ap-verb" label="Verb" hint="e.g. view, run, manage_user, or * for all">
          <input id="ap-verb" autocomplete="off" spellcheck={false} required maxLength={128} aria-describedby="ap-verb-hint" value={verb}
            onInput={(e) => setVerb(e.currentTarget.value)} />
        </Field>
        <Field id="ap-glob" label="Resource glob" hint="e.g. minion:*, key:web-*, salt:test.* (execute: the salt functions)">
          <input id="ap-glob" autocomplete="off" spellcheck={false} required maxLength={128} aria-describedby="ap-glob-hint" value={glob}
            onInput={(e) => setGlob(e.currentTarget.value)} />
        </Field>
        <Field id="ap-target" label="Target minions" hint="execute salt:… only: salt's glob on minion ids, e.g. web-*; empty for every minion">
          <input id="ap-target" autocomplete="off" spellcheck={false} maxLength={255} aria-describedby="ap-target-hint" value={target} placeholder="*"
            onInput={(e) => setTarget(e.currentTarget.value)} />
        </Field>
      </div>
      <FormFooter act={act} label="Add permission" />
    </Form>
  )
}

/** The role detail page. */
export function RolePage({ params }: PageProps) {
  const { can } = useSession()
  const manage = can('manage_role', 'role:*')
  const got = useGet<RoleDetail>(`/api/roles/${encodeURIComponent(params.id!)}`)
  const revoke = useAction()
  const del = useAction()
  const role = got.data
  const remove = (p: Permission) => revoke.run(async () => {
    await api('DELETE', `/api/roles/${role!.id}/permissions/${p.id}`)
    got.reload()
  })
  const columns: Column<Permission>[] = [
    { label: 'Verb', cell: (p) => <code>{p.verb}</code> },
    { label: 'Resource glob', cell: (p) => <code>{p.resource_glob}</code> },
    // Older servers answer no target: every grant then reached every minion.
    { label: 'Target minions', cell: (p) => (p.target_glob && p.target_glob !== '*' ? <code>{p.target_glob}</code> : <span class="muted">any</span>) },
  ]
  // Built-in grants are fixed (the server answers 409), so their rows get no Remove button.
  const editable = manage && !!role && !role.is_builtin
  if (editable)
    columns.push({
      label: 'Action',
      cell: (p) => <button type="button" class="danger" aria-label={`Remove ${p.verb} ${p.resource_glob}${p.target_glob && p.target_glob !== '*' ? ` on ${p.target_glob}` : ''}`} disabled={revoke.busy} onClick={() => remove(p)}>Remove</button>,
    })
  return (
    <Page title={role ? `Role ${role.name}` : 'Role'} actions={<a href={href('/roles')}>All roles</a>}>
      <ErrorBox error={got.error} />
      <Loading when={got.loading && !role} />
      {role ? (
        <>
          <Panel id="h-role" title="Details">
            <dl class="summary">
              <div><dt>Name</dt><dd>{role.name}</dd></div>
              <div><dt>Description</dt><dd>{role.description || '—'}</dd></div>
              <div><dt>Kind</dt><dd>{role.is_builtin ? <Badge tone="info">built-in</Badge> : <Badge tone="muted">custom</Badge>}</dd></div>
            </dl>
            {manage ? <EditRole role={role} onSaved={got.reload} /> : null}
          </Panel>
          <Panel id="h-perms" title="Permissions">
            {role.is_builtin ? <p class="muted">The grants of a built-in role cannot be changed.</p> : null}
            <ErrorBox error={revoke.error} />
            <Table caption={`Permissions of ${role.name}`} rows={role.permissions} columns={columns} rowKey={(p) => p.id} empty="This role grants nothing." />
            {editable ? <><h3>Grant a permission</h3><AddPermission role={role} onAdded={got.reload} /></> : null}
          </Panel>
          {manage ? (
            <Panel id="h-delete" title="Delete">
              <p>Users holding this role lose it.</p>
              <ErrorBox error={del.error} />
              <ConfirmButton label="Delete" question={`Delete role ${role.name}? This cannot be undone.`} busy={del.busy}
                onConfirm={() => del.run(async () => { await api('DELETE', `/api/roles/${role.id}`); navigate('/roles') })} />
            </Panel>
          ) : null}
        </>
      ) : null}
    </Page>
  )
}
