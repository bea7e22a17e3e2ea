/** The two JSON fields a salt call takes, positional arguments and keyword arguments, as the Run forms show them. */
import { Field } from '../../lib/ui'

/** Props: the ids' prefix (`run` → run-arg, run-kwarg), a word before the labels ("Runner" → "Runner arguments"), the values with their setters, and hints. */
export interface ArgFieldsProps {
  prefix: string
  noun?: string
  arg: string
  setArg: (v: string) => void
  kwarg: string
  setKwarg: (v: string) => void
  argHint: string
  kwargHint: string
}

/** A "(JSON array)" and a "(JSON object)" text area, each with its hint. */
export function ArgFields(p: ArgFieldsProps) {
  const label = (what: string) => (p.noun ? `${p.noun} ${what}` : what[0]!.toUpperCase() + what.slice(1))
  const fields = [
    { id: `${p.prefix}-arg`, label: label('arguments (JSON array)'), hint: p.argHint, value: p.arg, set: p.setArg },
    { id: `${p.prefix}-kwarg`, label: label('keyword arguments (JSON object)'), hint: p.kwargHint, value: p.kwarg, set: p.setKwarg },
  ]
  return (
    <>
      {fields.map((f) => (
        <Field id={f.id} label={f.label} hint={f.hint}>
          <textarea id={f.id} rows={2} class="mono" value={f.value} aria-describedby={`${f.id}-hint`} onInput={(e) => f.set(e.currentTarget.value)} />
        </Field>
      ))}
    </>
  )
}
