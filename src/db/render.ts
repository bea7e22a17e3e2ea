/**
 * Statement text rendered once per place in the code. drizzle renders a `sql` statement by walking its chunks on
 * every call (about 1 µs for a short one, 18 µs for a wide upsert), which on SQLite costs more than running it. A
 * statement written with db/sql.ts's tag carries its template; when its values are only parameters and table or
 * column objects, its text depends on nothing else, so the first rendering is kept by template and reused while the
 * same tables and columns sit in the same places. Anything else (nested fragments, lists, drizzle params) renders as
 * drizzle renders it, every time.
 */
import { Column, is, Table, type SQL } from 'drizzle-orm'
import { TEMPLATE, type MarkedSQL } from './sql'

/** What a dialect renders: text and parameters. */
type Render = (q: SQL) => { sql: string; params: unknown[] }

/** A rendering kept for a template: its text, and per value either PARAM or the table/column it must be. */
interface Kept {
  text: string
  slots: unknown[]
}

const PARAM = Symbol('param')
/** A template whose values cannot be kept (a fragment, a list): rendered every time. */
const NEVER = Symbol('never')

/** A value drizzle binds as one parameter as it is. */
const plain = (v: unknown) => v === null || typeof v !== 'object' || v instanceof Uint8Array

/** A renderer that keeps each template's text for `render`'s dialect. */
export function keptRenderer(render: Render): Render {
  const kept = new WeakMap<TemplateStringsArray, Kept | typeof NEVER>()
  return (q: SQL) => {
    const strings = (q as MarkedSQL)[TEMPLATE]
    if (!strings) return render(q)
    const chunks = q.queryChunks
    const k = kept.get(strings)
    if (k === NEVER) return render(q)
    if (k) {
      const params: unknown[] = []
      let i = 0
      for (; i < k.slots.length; i++) {
        const v = chunks[2 * i + 1]
        if (k.slots[i] === PARAM ? !plain(v) : v !== k.slots[i]) break
        if (k.slots[i] === PARAM) params.push(v)
      }
      if (i === k.slots.length) return { sql: k.text, params }
    }
    const out = render(q)
    if (!k) kept.set(strings, keep(chunks, out))
    return out
  }
}

/** The kept form of a first rendering, or NEVER when its values are not only parameters, tables and columns. */
function keep(chunks: unknown[], out: { sql: string; params: unknown[] }): Kept | typeof NEVER {
  const slots: unknown[] = []
  const params: unknown[] = []
  for (let i = 1; i < chunks.length; i += 2) {
    const v = chunks[i]
    if (plain(v)) {
      slots.push(PARAM)
      params.push(v)
    } else if (is(v, Column) || is(v, Table)) slots.push(v)
    else return NEVER
  }
  // The parameters drizzle bound must be exactly the plain values, in order; otherwise do not trust the shortcut.
  if (params.length !== out.params.length || params.some((p, i) => !Object.is(p, out.params[i]))) return NEVER
  return { text: out.sql, slots }
}
