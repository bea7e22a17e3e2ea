/** A settings form for one section made of integer and boolean fields (pollers, widget): Save sends what changed. */
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError } from '../../lib/api'
import { changedFields, errorsByField, readInt } from '../../lib/form-values'
import { useAction } from '../../lib/hooks'
import { intHint, type FieldSpec } from '../../lib/settings-fields'
import { Field, Form, FormFooter } from '../../lib/ui'
import type { SettingsOut } from './types'

type Values = Record<string, number | boolean>
type Texts = Record<string, string | boolean>

/** Form state from stored values: integers become input text. */
const toTexts = (v: Values): Texts => Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'number' ? String(x) : x]))

/** The form for `PUT /api/admin/settings/{section}`; `onSaved` gets the whole SettingsOut. */
export function SectionForm({ section, label, specs, saved, onSaved }: {
  section: 'pollers' | 'widget'
  label: string
  specs: Record<string, FieldSpec>
  saved: Values
  onSaved: (s: SettingsOut) => void
}) {
  const [texts, setTexts] = useState<Texts>(() => toTexts(saved))
  const [note, setNote] = useState('')
  const act = useAction()
  // Keyed on content: saving another section hands a new object with equal values, which must not wipe edits here.
  useEffect(() => setTexts(toTexts(saved)), [JSON.stringify(saved)])
  const bad = errorsByField(act.error instanceof ApiError && act.error.status === 422 ? act.error.detail : undefined)
  const set = (k: string, v: string | boolean) => {
    setNote('')
    setTexts((t) => ({ ...t, [k]: v }))
  }
  const submit = () => act.run(async () => {
    setNote('')
    const next = Object.fromEntries(Object.keys(specs).map((k) => [k, typeof texts[k] === 'string' ? readInt(texts[k] as string) : texts[k]]))
    const body = changedFields(saved as Record<string, unknown>, next)
    if (!Object.keys(body).length) return setNote('No changes to save.')
    const out = await api<SettingsOut>('PUT', `/api/admin/settings/${section}`, body)
    onSaved(out)
    setNote('Saved.')
  })
  const id = (k: string) => `${section}-${k}`
  return (
    // noValidate: out-of-range values reach the server, whose 422 names the bound (one source of truth).
    <Form onSubmit={submit} label={label} noValidate class="settings-form">
      <div class="form-grid">
        {Object.entries(specs).map(([k, f]) => f.kind === 'int' ? (
          <Field id={id(k)} label={f.label} hint={intHint(f)} key={k}>
            <input id={id(k)} type="number" inputMode="numeric" min={f.min} max={f.max} step={1} value={String(texts[k] ?? '')}
              aria-describedby={`${id(k)}-hint`} aria-invalid={bad[k] ? true : undefined} onInput={(e) => set(k, e.currentTarget.value)} />
          </Field>
        ) : null)}
      </div>
      <div class="check-grid">
        {Object.entries(specs).map(([k, f]) => f.kind === 'bool' ? (
          <label class="check" key={k}>
            <input type="checkbox" id={id(k)} checked={texts[k] === true} onChange={(e) => set(k, e.currentTarget.checked)} />
            {f.label}
          </label>
        ) : null)}
      </div>
      <FormFooter act={act} note={note} />
    </Form>
  )
}
