/** Identity page: LDAP and OpenID Connect sign-in settings with a Test each, and group → role mappings (contract §14). */
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError } from '../../lib/api'
import { errorsByField } from '../../lib/form-values'
import { ConfirmButton } from '../../lib/confirm'
import { useAction, useGet } from '../../lib/hooks'
import { Badge, ErrorBox, Field, Form, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { RoleList } from './types'
import type { Static } from '@sinclair/typebox'
import type { IdentityOut as IdentitySchema, MappingListOut, MappingOut, PROVIDERS, TestOut } from '../../../features/identity/schema'

type Provider = (typeof PROVIDERS)[number]
type Values = Record<string, string | boolean | null>
/** GET /api/admin/identity. */
type IdentityOut = Static<typeof IdentitySchema>
/** A group → role mapping; the schema answers `provider` as any string, the page keys its labels by the provider names. */
type Mapping = Static<typeof MappingOut> & { provider: Provider }

/** One form field: a text box, a password (write-only), a PEM text area or a checkbox. */
interface FieldSpec { key: string; label: string; kind: 'text' | 'secret' | 'pem' | 'check'; hint?: string }

const LDAP_FORM: FieldSpec[] = [
  { key: 'enabled', label: 'Sign in with LDAP', kind: 'check' },
  { key: 'url', label: 'Directory URL', kind: 'text', hint: 'ldap://host:389 (with StartTLS) or ldaps://host:636' },
  { key: 'start_tls', label: 'StartTLS on ldap:// (passwords never cross the network in clear)', kind: 'check' },
  { key: 'verify_tls', label: 'Verify the directory\'s TLS certificate', kind: 'check' },
  { key: 'ca_cert', label: 'CA certificate (PEM)', kind: 'pem', hint: 'Trusted for the directory besides the system CAs; empty to use the system CAs only.' },
  { key: 'bind_dn', label: 'Service account DN', kind: 'text', hint: 'The account that searches for users; empty for an anonymous search.' },
  { key: 'bind_password', label: 'Service account password', kind: 'secret' },
  { key: 'user_base', label: 'User search base', kind: 'text', hint: 'e.g. ou=people,dc=example,dc=org' },
  { key: 'user_filter', label: 'User filter', kind: 'text', hint: '{username} is the name typed at login, escaped.' },
  { key: 'group_base', label: 'Group search base', kind: 'text', hint: 'Empty: no group lookup (and so no role).' },
  { key: 'group_filter', label: 'Group filter', kind: 'text', hint: '{dn} is the user\'s DN, {username} the name typed.' },
  { key: 'display_name_attr', label: 'Display name attribute', kind: 'text' },
]

const OIDC_FORM: FieldSpec[] = [
  { key: 'enabled', label: 'Sign in with OpenID Connect', kind: 'check' },
  { key: 'issuer', label: 'Issuer URL', kind: 'text', hint: 'e.g. https://id.example.org/realms/ops' },
  { key: 'client_id', label: 'Client ID', kind: 'text' },
  { key: 'client_secret', label: 'Client secret', kind: 'secret' },
  { key: 'scopes', label: 'Scopes', kind: 'text' },
  { key: 'username_claim', label: 'User name claim', kind: 'text' },
  { key: 'groups_claim', label: 'Groups claim', kind: 'text' },
  { key: 'display_name', label: 'Button text', kind: 'text', hint: 'The login page shows "Sign in with <this>".' },
]

const SECRET: Record<Provider, string> = { ldap: 'bind_password', oidc: 'client_secret' }
const LABEL: Record<Provider, string> = { ldap: 'LDAP', oidc: 'OpenID Connect' }

/** The form values of a provider as stored (secrets blank: they are never shown). */
const formOf = (specs: FieldSpec[], saved: Values) =>
  Object.fromEntries(specs.map((s) => [s.key, s.kind === 'check' ? saved[s.key] === true : s.kind === 'secret' ? '' : String(saved[s.key] ?? '')]))

/** One provider's settings form: Save sends the changed fields only (a typed secret, never a blank one); Test tries what is saved. */
function ProviderForm({ provider, specs, saved, onSaved }: { provider: Provider; specs: FieldSpec[]; saved: Values; onSaved: (o: IdentityOut) => void }) {
  const [form, setForm] = useState<Values>(() => formOf(specs, saved))
  const [note, setNote] = useState('')
  const [result, setResult] = useState<{ ok: boolean; detail: string } | undefined>()
  const save = useAction()
  const test = useAction()
  useEffect(() => setForm(formOf(specs, saved)), [JSON.stringify(saved)])
  const base = formOf(specs, saved)
  const bad = errorsByField(save.error instanceof ApiError && save.error.status === 422 ? save.error.detail : undefined)
  const set = (k: string, v: string | boolean) => { setNote(''); setForm((f) => ({ ...f, [k]: v })) }
  const submit = () => save.run(async () => {
    const body = Object.fromEntries(Object.entries(form).filter(([k, v]) => (k === SECRET[provider] ? v !== '' : v !== base[k])))
    if (!Object.keys(body).length) return setNote('No changes to save.')
    onSaved(await api<IdentityOut>('PUT', `/api/admin/identity/${provider}`, body))
    setNote('Saved.')
  })
  const runTest = () => test.run(async () => {
    setResult(undefined)
    setResult(await api<Static<typeof TestOut>>('POST', `/api/admin/identity/${provider}/test`))
  })
  const id = (k: string) => `${provider}-${k.replace(/_/g, '-')}`
  return (
    <Form onSubmit={submit} label={`${LABEL[provider]} settings`} noValidate class="settings-form">
      <div class="form-grid">
        {specs.filter((s) => s.kind !== 'check').map((s) => {
          const secretHint = s.kind === 'secret' ? `${saved[`${s.key}_set`] ? 'One is stored.' : 'None is stored.'} Leave empty to keep it; a new ${provider === 'ldap' ? 'URL' : 'issuer'} without one forgets it.` : undefined
          const hint = s.hint ?? secretHint
          const common = { id: id(s.key), 'aria-invalid': bad[s.key] ? true : undefined, 'aria-describedby': hint ? `${id(s.key)}-hint` : undefined }
          return (
            <Field id={id(s.key)} label={s.label} hint={hint}>
              {s.kind === 'pem'
                ? <textarea {...common} rows={3} class="mono" spellcheck={false} value={String(form[s.key] ?? '')} onInput={(e) => set(s.key, e.currentTarget.value)} />
                : s.kind === 'secret'
                  ? <input {...common} type="password" autocomplete="new-password" value={String(form[s.key] ?? '')} onInput={(e) => set(s.key, e.currentTarget.value)} />
                  : <input {...common} type="text" autocomplete="off" spellcheck={false} value={String(form[s.key] ?? '')} onInput={(e) => set(s.key, e.currentTarget.value)} />}
            </Field>
          )
        })}
      </div>
      <div class="check-grid">
        {specs.filter((s) => s.kind === 'check').map((s) => (
          <label class="check">
            <input type="checkbox" id={id(s.key)} checked={form[s.key] === true} onChange={(e) => set(s.key, e.currentTarget.checked)} />
            {s.label}
          </label>
        ))}
      </div>
      <ErrorBox error={save.error} />
      <ErrorBox error={test.error} />
      <div class="form-actions">
        <button type="submit" class="primary" disabled={save.busy}>Save</button>
        <button type="button" disabled={test.busy} onClick={runTest}>Test</button>
        <span role="status" class="ok">{note}</span>
      </div>
      <p class="muted small">Test tries the saved settings without signing anyone in.</p>
      <div role="status" aria-live="polite">
        {test.busy ? <p class="muted">Testing…</p> : null}
        {result ? <p class="test-result"><Badge tone={result.ok ? 'ok' : 'bad'}>{result.ok ? 'Works' : 'Failed'}</Badge> {result.detail}</p> : null}
      </div>
    </Form>
  )
}

/** The mappings list with Delete, and the form that adds one. */
function Mappings() {
  const list = useGet<Static<typeof MappingListOut> & { mappings: Mapping[] }>('/api/admin/identity/mappings')
  const roles = useGet<RoleList>('/api/roles')
  const [f, setF] = useState({ provider: 'ldap' as Provider, group: '', role_id: '' })
  const add = useAction()
  const del = useAction()
  const roleId = f.role_id || roles.data?.roles[0]?.id || ''
  const submit = () => add.run(async () => {
    await api('POST', '/api/admin/identity/mappings', { ...f, role_id: roleId })
    setF({ ...f, group: '' })
    list.reload()
  })
  const columns: Column<Mapping>[] = [
    { label: 'Provider', cell: (m) => LABEL[m.provider] ?? m.provider },
    { label: 'Group', cell: (m) => <span class="mono">{m.group}</span> },
    { label: 'Role', cell: (m) => m.role_name },
    { label: 'Actions', cell: (m) => <ConfirmButton label="Delete" name={`Delete mapping ${m.group}`} question={`Delete the mapping of ${m.group} to ${m.role_name}?`} busy={del.busy}
      onConfirm={() => del.run(async () => { await api('DELETE', `/api/admin/identity/mappings/${m.id}`); list.reload() })} /> },
  ]
  return (
    <>
      <p class="muted">A directory user's roles are exactly the roles of its mapped groups, replaced at every sign-in; one with none cannot sign in.</p>
      <ErrorBox error={list.error} />
      <ErrorBox error={del.error} />
      <Table caption="Group mappings" rows={list.data?.mappings} columns={columns} rowKey={(m) => m.id} empty="No mappings: no directory user can sign in yet." />
      <Form onSubmit={submit} label="New mapping" class="settings-form">
        <div class="form-grid">
          <Field id="map-provider" label="Provider">
            <select id="map-provider" value={f.provider} onChange={(e) => setF({ ...f, provider: e.currentTarget.value as Provider })}>
              <option value="ldap">LDAP</option>
              <option value="oidc">OpenID Connect</option>
            </select>
          </Field>
          <Field id="map-group" label="Group" hint="A group's name or DN (LDAP), or a value of the groups claim (OpenID Connect).">
            <input id="map-group" required maxLength={1024} spellcheck={false} autocomplete="off" aria-describedby="map-group-hint" value={f.group} onInput={(e) => setF({ ...f, group: e.currentTarget.value })} />
          </Field>
          <Field id="map-role" label="Role">
            <select id="map-role" value={roleId} onChange={(e) => setF({ ...f, role_id: e.currentTarget.value })}>
              {(roles.data?.roles ?? []).map((r) => <option value={r.id}>{r.name}</option>)}
            </select>
          </Field>
        </div>
        <ErrorBox error={add.error} />
        <div class="form-actions"><button type="submit" class="primary" disabled={add.busy || !roleId}>Add mapping</button></div>
      </Form>
    </>
  )
}

/** The OpenID Connect redirect URI as Saltdeck builds it, seen from this page (opened through SALTDECK_PUBLIC_URL, the same). */
const callbackUrl = () => `${location.origin}${location.pathname.replace(/\/+$/, '')}/api/auth/oidc/callback`

/** The Identity page. */
export function IdentityPage() {
  const got = useGet<IdentityOut>('/api/admin/identity')
  const [saved, setSaved] = useState<IdentityOut | undefined>()
  const s = saved ?? got.data
  return (
    <Page title="Identity">
      <ErrorBox error={got.error} />
      <Loading when={got.loading && !s} />
      {s ? (
        <>
          <Panel id="h-ldap" title="LDAP"><ProviderForm provider="ldap" specs={LDAP_FORM} saved={s.ldap} onSaved={setSaved} /></Panel>
          <Panel id="h-oidc" title="OpenID Connect">
            <p>Callback URL to register at the provider: <code id="oidc-callback">{callbackUrl()}</code> (<code>SALTDECK_PUBLIC_URL</code> + <code>/api/auth/oidc/callback</code>).</p>
            <ProviderForm provider="oidc" specs={OIDC_FORM} saved={s.oidc} onSaved={setSaved} />
          </Panel>
        </>
      ) : null}
      <Panel id="h-mappings" title="Group mappings"><Mappings /></Panel>
    </Page>
  )
}
