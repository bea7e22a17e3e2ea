/** Filter controls for lists whose state lives in the hash query: a search box and a query updater. */
import { useEffect, useRef, useState } from 'preact/hooks'
import { navigate } from './router'
import { useDebounced } from './hooks'
import { withChanges, type QueryValue } from './query'

/** Returns `set(changes, replace?)`, which moves to `path` with the current query plus `changes` (back to page 1 unless the offset is the change). */
export function useQueryNav(path: string, query: URLSearchParams) {
  return (changes: Record<string, QueryValue | boolean>, replace = false) => navigate(path, withChanges(query, changes), replace)
}

/**
 * A labelled search input with a Search button. Typing commits after a pause: the first pause of a typing spell adds
 * a history entry and later ones replace it, so Back returns to the view before the search without stepping through
 * keystrokes. The button or Enter commits at once. Follows the query when it changes
 * from outside (Back, a link).
 */
export function SearchBox({ id, label, value, onCommit, placeholder, hint, maxLength = 200 }: {
  id: string
  label: string
  value: string
  onCommit: (v: string, replace: boolean) => void
  placeholder?: string
  /** A line under the input saying what it accepts (tied to it with aria-describedby). */
  hint?: string
  maxLength?: number
}) {
  const [text, setText] = useState(value)
  const settled = useDebounced(text, 350)
  const spell = useRef(false)
  useEffect(() => {
    if (value !== settled) setText(value)
  }, [value])
  useEffect(() => {
    if (settled === value) return
    onCommit(settled, spell.current)
    spell.current = true
  }, [settled])
  return (
    <form class="search" role="search" onSubmit={(e) => { e.preventDefault(); if (text !== value) onCommit(text, false) }}>
      <div class="field">
        <label for={id}>{label}</label>
        <input id={id} type="search" value={text} onBlur={() => (spell.current = false)} maxLength={maxLength} placeholder={placeholder} aria-describedby={hint ? `${id}-hint` : undefined} onInput={(e) => setText(e.currentTarget.value)} />
        {hint ? <small id={`${id}-hint`} class="muted">{hint}</small> : null}
      </div>
      <button type="submit">Search</button>
    </form>
  )
}
