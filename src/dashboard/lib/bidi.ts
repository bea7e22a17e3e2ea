/**
 * Bidirectional controls in text the dashboard shows are shown, never obeyed. Minion ids, state ids, comments, grains
 * and package names come from minions, and a state id `admin\u202egnp.exe` read as "adminexe.png" (issue 20). Names
 * people type refuse these characters at the API, so only salt's text carries them; isolating the text (style.css)
 * keeps it from reordering what is around it, and showing each control as `⟨U+202E⟩` keeps it from reordering itself.
 */
import { options, type VNode } from 'preact'

/** Embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069). */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/g

/** `text` with each bidirectional control written out as `⟨U+XXXX⟩`. */
export function showBidi(text: string): string {
  return text.replace(BIDI, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase()}⟩`)
}

/** An element's children with their strings through showBidi (the same value when nothing changes). */
function guard(children: unknown): unknown {
  if (typeof children === 'string') return showBidi(children)
  if (!Array.isArray(children)) return children
  let out: unknown[] | null = null
  children.forEach((c, i) => {
    const g = guard(c)
    if (g !== c) (out ??= [...children])[i] = g
  })
  return out ?? children
}

let installed = false

/** Puts the guard on every element Preact creates, so every page's text goes through it, once per page load. */
export function installBidiGuard() {
  if (installed) return
  installed = true
  const next = options.vnode
  options.vnode = (vnode: VNode) => {
    if (typeof vnode.type === 'string') {
      const props = vnode.props as { children?: unknown }
      if (props.children !== undefined) props.children = guard(props.children) as never
    }
    next?.(vnode)
  }
}
