/** Settings page: salt connection (with a connection test), poller summary, widget and logging (contract §5). */
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError } from '../../lib/api'
import { dateTime } from '../../lib/format'
import { errorsByField, saltChanges } from '../../lib/form-values'
import { interval } from '../../lib/duration'
import { useAction, useGet } from '../../lib/hooks'
import { href } from '../../lib/router'
import { EAUTH_VALUES, LOG_FORMATS, missingSaltWords, POLLER_FORM, PRESENCE_METHODS, WIDGET_FORM } from '../../lib/settings-fields'
import { Badge, ErrorBox, Field, Form, FormFooter, Loading, Page, Panel } from '../../lib/ui'
import { SectionForm } from './section-form'
import type { SaltSettings, SettingsOut, SettingsStatus, TestResult } from './types'

/** Whether salt-api is configured, and what is missing. */
function SaltStatus({ status }: { status: SettingsStatus | undefined }) {
  if (!status) return null
  return status.configured
    ? <p><Badge tone="ok">Configured</Badge></p>
    : <p><Badge tone="warn">Not configured</Badge> <span>{missingSaltWords(status.missing)}</span></p>
}

/** The salt-api connection form: Save (changed fields only) and Test connection. */
function SaltForm({ saved, onSaved }: { saved: SaltSettings; onSaved: (s: SettingsOut) => void }) {
  const fresh = () => ({ url: saved.url ?? '', username: saved.username ?? '', password: '', verify: saved.verify, eauth: saved.eauth, presence_method: saved.presence_method })
  const [form, setForm] = useState(fresh)
  const [note, setNote] = useState('')
  const [result, setResult] = useState<TestResult | undefined>()
  const save = useAction()
  const test = useAction()
  useEffect(() => setForm(fresh()), [JSON.stringify(saved)])
  const set = (patch: Partial<typeof form>) => {
    setNote('')
    setForm((f) => ({ ...f, ...patch }))
  }
  const bad = errorsByField(save.error instanceof ApiError && save.error.status === 422 ? save.error.detail : undefined)
  const submit = () => save.run(async () => {
    setNote('')
    const body = saltChanges(saved, form)
    if (!Object.keys(body).length) return setNote('No changes to save.')
    onSaved(await api<SettingsOut>('PUT', '/api/admin/settings/salt', body))
    setNote('Saved.')
  })
  const runTest = () => test.run(async () => {
    setResult(undefined)
    // Without a typed password the form cannot be tested as typed: test what is stored instead.
    const r = form.password
      ? await api<TestResult>('POST', '/api/admin/settings/test-salt', { url: form.url, username: form.username, password: form.password, verify: form.verify, eauth: form.eauth })
      : await api<TestResult>('POST', '/api/admin/settings/test-salt-saved')
    setResult(r)
  })
  return (
    <Form onSubmit={submit} label="Salt connection" noValidate class="settings-form">
      <div class="form-grid">
        <Field id="salt-url" label="salt-api URL" hint="http or https address of salt-api, e.g. https://salt.example:8000">
          <input id="salt-url" type="url" autocomplete="off" spellcheck={false} value={form.url} aria-describedby="salt-url-hint"
            aria-invalid={bad.url ? true : undefined} onInput={(e) => set({ url: e.currentTarget.value })} />
        </Field>
        <Field id="salt-user" label="Username">
          <input id="salt-user" autocomplete="off" spellcheck={false} value={form.username} aria-invalid={bad.username ? true : undefined}
            onInput={(e) => set({ username: e.currentTarget.value })} />
        </Field>
        <Field id="salt-pass" label="Password" hint={`${saved.password_set ? 'A password is stored.' : 'No password is stored.'} Leave empty to keep it unchanged; a new URL without a password forgets it.`}>
          <input id="salt-pass" type="password" autocomplete="new-password" value={form.password} aria-describedby="salt-pass-hint"
            aria-invalid={bad.password ? true : undefined} onInput={(e) => set({ password: e.currentTarget.value })} />
        </Field>
        <Field id="salt-eauth" label="Authentication back end (eauth)">
          <select id="salt-eauth" value={form.eauth} onChange={(e) => set({ eauth: e.currentTarget.value })}>
            {EAUTH_VALUES.map((v) => <option value={v}>{v}</option>)}
          </select>
        </Field>
        <Field id="salt-presence" label="Presence method" hint="present: the master's connection table (cheap). status: a ping job per poll (exact when minions share an address).">
          <select id="salt-presence" value={form.presence_method} aria-describedby="salt-presence-hint" onChange={(e) => set({ presence_method: e.currentTarget.value as SaltSettings['presence_method'] })}>
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
      <ErrorBox error={save.error} />
      <ErrorBox error={test.error} />
      <div class="form-actions">
        <button type="submit" class="primary" disabled={save.busy}>Save</button>
        <button type="button" disabled={test.busy} onClick={runTest}>Test connection</button>
        <span role="status" class="ok">{note}</span>
      </div>
      <p class="muted small">Test connection tries the values typed here; with the password field empty it tests the saved connection.</p>
      <div role="status" aria-live="polite">
        {test.busy ? <p class="muted">Testing…</p> : null}
        {result ? <p class="test-result"><Badge tone={result.ok ? 'ok' : 'bad'}>{result.ok ? 'Connected' : 'Failed'}</Badge> {result.detail}</p> : null}
      </div>
    </Form>
  )
}

/** The log format form. */
function LoggingForm({ saved, onSaved }: { saved: string; onSaved: (s: SettingsOut) => void }) {
  const [format, setFormat] = useState(saved)
  const [note, setNote] = useState('')
  const act = useAction()
  useEffect(() => setFormat(saved), [saved])
  const submit = () => act.run(async () => {
    setNote('')
    if (format === saved) return setNote('No changes to save.')
    onSaved(await api<SettingsOut>('PUT', '/api/admin/settings/logging', { log_format: format }))
    setNote('Saved.')
  })
  return (
    <Form onSubmit={submit} label="Logging" class="settings-form">
      <div class="form-grid">
      <Field id="log-format" label="Log format" hint="Format of the service's log lines; the change applies at once.">
        <select id="log-format" value={format} aria-describedby="log-format-hint" onChange={(e) => { setNote(''); setFormat(e.currentTarget.value) }}>
          {LOG_FORMATS.map((v) => <option value={v}>{v}</option>)}
        </select>
      </Field>
      </div>
      <FormFooter act={act} note={note} />
    </Form>
  )
}

/** Read-only poller intervals; they are edited on the Pollers page. */
function PollerSummary({ pollers }: { pollers: SettingsOut['pollers'] }) {
  return (
    <>
      <dl class="summary">
        {(Object.keys(POLLER_FORM) as (keyof typeof POLLER_FORM)[]).map((k) => {
          const v = pollers[k]
          return (
            <div key={k}>
              <dt>{POLLER_FORM[k].label.replace(/ \((seconds|minutes|days)\)$/, '')}</dt>
              <dd>{typeof v === 'boolean' ? (v ? 'on' : 'off')
                : k === 'inventory_refresh_minutes' ? interval(v * 60)
                : k === 'event_stream_retention_days' ? `${v} days` : interval(v)}</dd>
            </div>
          )
        })}
      </dl>
      <p><a href={href('/pollers')}>Edit poller settings and see their status</a></p>
    </>
  )
}

/** The Settings page. */
export function SettingsPage() {
  const got = useGet<SettingsOut>('/api/admin/settings')
  const status = useGet<SettingsStatus>('/api/admin/settings/status')
  const [saved, setSaved] = useState<SettingsOut | undefined>()
  const s = saved ?? got.data
  const onSaved = (out: SettingsOut) => {
    setSaved(out)
    status.reload()
  }
  return (
    <Page title="Settings">
      <ErrorBox error={got.error} />
      <Loading when={got.loading && !s} />
      {s ? (
        <>
          <Panel id="h-salt" title="Salt connection">
            <SaltStatus status={status.data} />
            <SaltForm saved={s.salt} onSaved={onSaved} />
          </Panel>
          <Panel id="h-pollers" title="Pollers">
            <PollerSummary pollers={s.pollers} />
          </Panel>
          <Panel id="h-widget" title="Overview widget">
            <SectionForm section="widget" label="Overview widget" specs={WIDGET_FORM} saved={s.widget} onSaved={onSaved} />
          </Panel>
          <Panel id="h-logging" title="Logging">
            <LoggingForm saved={s.logging.log_format} onSaved={onSaved} />
          </Panel>
          <p class="muted">Settings last changed {dateTime(s.updated_at)}.</p>
        </>
      ) : null}
    </Page>
  )
}
