// Issue 20 item 12: text from salt with bidirectional controls is shown with the controls written out, never obeyed
// (a state id `admin\u202egnp.exe` must not read as "adminexe.png"). The pages' own components are rendered to their
// element trees (function components called as Preact would, none of these has hooks) and the text read off them.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { StateRow } from '../../src/dashboard/lib/fleet'

// The dashboard is type-checked on its own (src/dashboard/tsconfig.json, with the DOM's types), so its components and
// Preact are loaded by a path the server's type check does not follow.
const load = (path: string): Promise<any> => import(path)
const { StateTable } = await load('../../src/dashboard/pages/fleet/run-states.tsx')
const { h } = await load('preact')
type VNode = { type: unknown; props: { children?: unknown } }

/** The text an element tree shows, components expanded. */
function text(node: unknown): string {
  if (node == null || typeof node === 'boolean') return ''
  if (typeof node === 'string' || typeof node === 'number') return String(node)
  if (Array.isArray(node)) return node.map(text).join('')
  const v = node as VNode
  if (typeof v.type === 'function') return text((v.type as (p: unknown) => unknown)(v.props))
  return text(v.props.children)
}

const BIDI = /[\u202a-\u202e\u2066-\u2069]/

test("a run's states show a state id, name, comment and changes from salt with their bidi controls written out", () => {
  const hostile: StateRow = {
    key: 'k', id: 'admin\u202egnp.exe', sls: 'web\u2067.sls', function: 'file.managed', name: '/etc/\u202dpasswd', result: false, changed: true,
    comment: 'see \u202etxt.exe\nsecond line', changes: { diff: '+x\u2066y' }, duration_ms: 3, order: 0,
  }
  const shown = text(h(StateTable, { states: [hostile], test: false, failedOnly: false, caption: 'States' }))
  expect(shown).not.toMatch(BIDI)
  expect(shown).toContain('admin⟨U+202E⟩gnp.exe')
  expect(shown).toContain('web⟨U+2067⟩.sls')
  expect(shown).toContain('/etc/⟨U+202D⟩passwd')
  expect(shown).toContain('see ⟨U+202E⟩txt.exe')
  expect(shown).toContain('+x⟨U+2066⟩y')
  // Text without them is shown as it is, right-to-left scripts included.
  expect(text(h(StateTable, { states: [{ ...hostile, id: 'nginx-مرحبا', comment: 'ok' }], test: false, failedOnly: false, caption: 'States' }))).toContain('nginx-مرحبا')
})

test('the cells, links and code that hold salt text are isolated from what is around them', () => {
  const css = readFileSync(new URL('../../src/dashboard/style.css', import.meta.url), 'utf8')
  const rule = /^([^{}/*]+)\{ unicode-bidi: isolate; \}/m.exec(css)
  expect(rule).not.toBeNull()
  const selectors = rule![1]!.split(',').map((s) => s.trim())
  for (const s of ['td', 'dd', 'a', 'pre', 'li', '.mono', '.ev-summary']) expect(selectors).toContain(s)
})
