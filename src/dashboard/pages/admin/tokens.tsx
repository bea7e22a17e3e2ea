/** API tokens page: the caller's tokens, creation (the secret shown once) and revocation (contract §3). */
import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from '../../lib/api'
import { ConfirmButton } from '../../lib/confirm'
import { dateTime } from '../../lib/format'
import { readInt } from '../../lib/form-values'
import { useAction, useGet } from '../../lib/hooks'
import { ErrorBox, Field, Form, FormFooter, Loading, Page, Table, type Column } from '../../lib/ui'
import type { ApiToken, NewToken, TokenList } from './types'

/** The just-created token in a read-only field with a Copy button. */
function ShownOnce({ t, onDone }: { t: NewToken; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null)
  const [copied, setCopied] = useState('')
  useEffect(() => {
    field.current?.focus()
    field.current?.select()
  }, [t.token])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(t.token)
      setCopied('Copied to the clipboard.')
    } catch {
      // No clipboard API (plain http on another host): leave the text selected for Ctrl+C.
      field.current?.select()
      setCopied('Select and copy the token with Ctrl+C.')
    }
  }
  return (
    <section class="notice" aria-labelledby="h-new-token">
      <h2 id="h-new-token">Token {t.name} created</h2>
      <p><strong>This token is shown only once.</strong> Copy it now: it cannot be displayed again. Send it as <code>Authorization: Bearer &lt;token&gt;</code>.</p>
      <div class="field">
        <label for="new-token">New API token</label>
        <div class="secret">
          <input id="new-token" ref={field} readOnly value={t.token} spellcheck={false} autocomplete="off" onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={copy}>Copy</button>
          <button type="button" onClick={onDone}>Done</button>
        </div>
      </div>
      <p role="status" class="ok">{copied}</p>
      <p class="muted">Expires: {t.expires_at ? dateTime(t.expires_at) : 'never'}</p>
    </section>
  )
}

/** The API tokens page. */
export function TokensPage() {
  const list = useGet<TokenList>('/api/auth/tokens')
  const [name, setName] = useState('')
  const [days, setDays] = useState('')
  const [created, setCreated] = useState<NewToken | undefined>()
  const [note, setNote] = useState('')
  const create = useAction()
  const revoke = useAction()
  const submit = () => create.run(async () => {
    setNote('')
    const body: Record<string, unknown> = { name }
    if (days.trim()) body.expires_in_days = readInt(days)
    setCreated(await api<NewToken>('POST', '/api/auth/tokens', body))
    setName('')
    setDays('')
    list.reload()
  })
  const remove = (t: ApiToken) => revoke.run(async () => {
    await api('DELETE', `/api/auth/tokens/${t.id}`)
    await list.reload()
    setNote(`Token ${t.name} revoked.`)
  })
  const columns: Column<ApiToken>[] = [
    { label: 'Name', cell: (t) => t.name },
    { label: 'Created', cell: (t) => dateTime(t.created_at) },
    { label: 'Expires', cell: (t) => t.expires_at ? dateTime(t.expires_at) : 'never' },
    {
      label: 'Action',
      cell: (t) => <ConfirmButton label="Revoke" name={`Revoke ${t.name}`} question={`Revoke token ${t.name}? Scripts using it stop working.`} busy={revoke.busy} onConfirm={() => remove(t)} />,
    },
  ]
  return (
    <Page title="API tokens">
      <p>Tokens let scripts call the API as you, with your permissions.</p>
      {created ? <ShownOnce t={created} onDone={() => setCreated(undefined)} /> : null}
      <div role="status">{note ? <p class="ok">{note}</p> : null}</div>
      <ErrorBox error={list.error} />
      <ErrorBox error={revoke.error} />
      <Loading when={list.loading && !list.data} />
      <Table caption="Your API tokens" rows={list.data?.tokens} columns={columns} rowKey={(t) => t.id} empty="You have no API tokens." />
      <section class="panel top-gap" aria-labelledby="h-create-token">
        <h2 id="h-create-token">New token</h2>
        <Form onSubmit={submit} label="New token" class="settings-form">
          <div class="form-grid">
            <Field id="tk-name" label="Name" hint="What uses it, e.g. ci or backup script.">
              <input id="tk-name" autocomplete="off" required maxLength={128} aria-describedby="tk-name-hint" value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <Field id="tk-days" label="Expires in days (optional)" hint="1 to 3650; empty = never expires.">
              <input id="tk-days" type="number" inputMode="numeric" min={1} max={3650} step={1} aria-describedby="tk-days-hint" value={days}
                onInput={(e) => setDays(e.currentTarget.value)} />
            </Field>
          </div>
          <FormFooter act={create} label="Create token" />
        </Form>
      </section>
    </Page>
  )
}
