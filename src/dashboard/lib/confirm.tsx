/** A destructive button that asks inline before acting (no window.confirm: keyboard and screen-reader friendly). */
import { useEffect, useRef, useState } from 'preact/hooks'

/**
 * Shows `label` (e.g. "Delete"); a click replaces it with `question` and "Yes, <label>" / "Cancel".
 * `name` is the accessible name of the first button when rows repeat it (e.g. "Delete bob").
 */
export function ConfirmButton({ label, question, onConfirm, busy = false, name }: {
  label: string
  question: string
  onConfirm: () => void
  busy?: boolean
  name?: string
}) {
  const [asking, setAsking] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  const first = useRef<HTMLButtonElement>(null)
  const wasAsking = useRef(false)
  useEffect(() => {
    // Move focus to the new controls, and back to the button after Cancel, so keyboard users keep their place.
    if (asking) yes.current?.focus()
    else if (wasAsking.current) first.current?.focus()
    wasAsking.current = asking
  }, [asking])
  if (!asking)
    return <button type="button" class="danger" ref={first} aria-label={name} disabled={busy} onClick={() => setAsking(true)}>{label}</button>
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span role="alert">{question}</span>{' '}
      <button type="button" class="danger" ref={yes} disabled={busy} onClick={() => { setAsking(false); onConfirm() }}>Yes, {label.toLowerCase()}</button>{' '}
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  )
}
