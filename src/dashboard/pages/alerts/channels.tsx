/** The alert channels page: where notifications go, a form per type, Test (the outcome as a sentence) and delete. */
import { useState } from 'preact/hooks'
import { api, ApiError } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { readInt } from '../../lib/form-values'
import { useAction, useGet } from '../../lib/hooks'
import { useSession } from '../../lib/session'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { Channel, ChannelList, ChannelTest } from './types'

type Kind = Channel['type']
const EMPTY = { name: '', type: 'webhook' as Kind, url: '', secret: '', host: '', port: '587', security: 'starttls', username: '', password: '', from: '', to: '' }

/** Each channel type's label and the config its form describes (secrets only when typed): keyed by the server's ChannelType, so a new type left out here does not compile. */
const KINDS: Record<Kind, { label: string; config: (f: typeof EMPTY, insecure: boolean) => Record<string, unknown> }> = {
  webhook: { label: 'Webhook (JSON)', config: (f) => ({ url: f.url, ...(f.secret ? { secret: f.secret } : {}) }) },
  slack: { label: 'Slack / Mattermost', config: (f) => ({ url: f.url }) },
  email: {
    label: 'Email (SMTP)',
    config: (f, insecure) => ({
      host: f.host, port: readInt(f.port), security: f.security, from: f.from, to: f.to.split(',').map((x) => x.trim()).filter(Boolean),
      ...(f.username ? { username: f.username } : {}), ...(f.password ? { password: f.password } : {}),
      ...(insecure && f.security === 'none' ? { allow_insecure_auth: true } : {}),
    }),
  },
}

/** The config a form describes, for its type. */
const configOf = (f: typeof EMPTY, insecure: boolean) => KINDS[f.type].config(f, insecure)

/** Where a channel sends, in words. */
const target = (c: Channel) => (c.type === 'email' ? `${(c.config.to as string[] | undefined)?.join(', ') ?? ''} via ${String(c.config.host)}:${String(c.config.port)}` : String(c.config.url ?? ''))

/** The form that creates a channel. */
function NewChannel({ onCreated }: { onCreated: (c: Channel) => void }) {
  const [f, setF] = useState(EMPTY)
  // Sending a login without TLS is a choice made on purpose, never a default (it is refused otherwise).
  const [insecure, setInsecure] = useState(false)
  const act = useAction()
  const set = (p: Partial<typeof EMPTY>) => setF((x) => ({ ...x, ...p }))
  const submit = () => act.run(async () => {
    onCreated(await api<Channel>('POST', '/api/alerts/channels', { name: f.name, type: f.type, config: configOf(f, insecure) }))
    setF(EMPTY)
    setInsecure(false)
  })
  const text = (id: string, label: string, key: keyof typeof EMPTY, type: 'text' | 'url' | 'password' = 'text', hint?: string) => (
    <Field id={id} label={label} hint={hint}>
      <input id={id} type={type as 'text'} autocomplete={type === 'password' ? 'new-password' : 'off'} spellcheck={false} value={f[key]} onInput={(e) => set({ [key]: e.currentTarget.value })} />
    </Field>
  )
  return (
    <Form onSubmit={submit} label="New channel" class="settings-form">
      <div class="form-grid">
        {text('ac-name', 'Name', 'name')}
        <Field id="ac-type" label="Type">
          <select id="ac-type" value={f.type} onChange={(e) => set({ type: e.currentTarget.value as Kind })}>
            {(Object.keys(KINDS) as Kind[]).map((k) => <option key={k} value={k}>{KINDS[k].label}</option>)}
          </select>
        </Field>
        {f.type !== 'email' ? text('ac-url', 'URL', 'url', 'url') : null}
        {f.type === 'webhook' ? text('ac-secret', 'Signing secret (optional)', 'secret', 'password', 'Signs each body: X-Saltdeck-Signature: sha256=<HMAC>.') : null}
        {f.type === 'email' ? (
          <>
            {text('ac-host', 'SMTP host', 'host')}
            {text('ac-port', 'Port', 'port')}
            <Field id="ac-security" label="Security">
              <select id="ac-security" value={f.security} onChange={(e) => set({ security: e.currentTarget.value })}>
                <option value="starttls">STARTTLS</option><option value="tls">TLS</option><option value="none">none</option>
              </select>
            </Field>
            {text('ac-user', 'Username (optional)', 'username')}
            {text('ac-pass', 'Password (optional)', 'password', 'password')}
            {f.security === 'none' && (f.username || f.password) ? (
              <Field id="ac-insecure" label="Send the login without TLS" hint="The password crosses the network in clear: only for a relay on a trusted network.">
                <input id="ac-insecure" type="checkbox" checked={insecure} onChange={(e) => setInsecure(e.currentTarget.checked)} />
              </Field>
            ) : null}
            {text('ac-from', 'From', 'from')}
            {text('ac-to', 'To (comma-separated)', 'to')}
          </>
        ) : null}
      </div>
      <FormFooter act={act} label="Create channel" />
    </Form>
  )
}

/** The channels page. */
export function ChannelsPage() {
  const { can } = useSession()
  const manage = can('manage', 'alert:*')
  const list = useGet<ChannelList>('/api/alerts/channels')
  const act = useAction()
  const [note, setNote] = useState('')
  const [tested, setTested] = useState<{ name: string; ok: boolean; detail: string } | undefined>()
  const test = (c: Channel) => act.run(async () => {
    setTested(undefined)
    const r = await api<ChannelTest>('POST', `/api/alerts/channels/${c.id}/test`)
    setTested({ name: c.name, ...r })
  })
  const remove = (c: Channel) => act.run(async () => {
    await api('DELETE', `/api/alerts/channels/${c.id}`)
    await list.reload()
    setNote(`Channel ${c.name} deleted.`)
  })
  const columns: Column<Channel>[] = [
    { label: 'Name', cell: (c) => c.name },
    { label: 'Type', cell: (c) => c.type },
    { label: 'Sends to', cell: (c) => <span class="mono">{target(c)}</span> },
    { label: 'Secret', cell: (c) => (c.config.secret_set || c.config.password_set ? 'stored' : <span class="muted">none</span>) },
    { label: 'Enabled', cell: (c) => <Badge tone={c.enabled ? 'ok' : 'muted'}>{c.enabled ? 'yes' : 'no'}</Badge> },
    ...(manage ? [{
      label: 'Actions', class: 'nowrap',
      cell: (c: Channel) => (
        <>
          <button type="button" aria-label={`Test ${c.name}`} disabled={act.busy} onClick={() => test(c)}>Test</button>{' '}
          <ConfirmButton label="Delete" name={`Delete ${c.name}`} question={`Delete channel ${c.name}?`} busy={act.busy} onConfirm={() => remove(c)} />
        </>
      ),
    }] : []),
  ]
  // A 409 (the channel is in use) is the server's sentence, shown as the answer it is.
  const conflict = act.error instanceof ApiError && act.error.status === 409 ? act.error.message : ''
  return (
    <Page title="Alert channels">
      <div role="status" aria-live="polite">
        {note ? <p class="ok">{note}</p> : null}
        {tested ? <p class="test-result"><Badge tone={tested.ok ? 'ok' : 'bad'}>{tested.ok ? 'Sent' : 'Failed'}</Badge> {tested.name}: {tested.detail}</p> : null}
        {conflict ? <p class="bad-text">{conflict}</p> : null}
      </div>
      <ErrorBox error={list.error ?? (conflict ? undefined : act.error)} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Alert channels" rows={list.data?.channels} columns={columns} rowKey={(c) => c.id} empty="No channels." />
      {manage ? <Panel id="h-new-channel" title="New channel"><NewChannel onCreated={(c) => void list.reload().then(() => setNote(`Channel ${c.name} created.`))} /></Panel> : null}
    </Page>
  )
}
