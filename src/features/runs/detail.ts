/**
 * A run's per-state detail, stored compactly: each state identity (salt key + sls) and each comment is stored once in
 * state_idents / state_texts, and a run keeps one row whose `states` blob holds four u32 per state (identity, comment,
 * duration, flags) in run order; changes are kept as JSON for the states that changed something. Only the newest
 * SALTDECK_RUN_DETAIL_KEEP runs of a minion keep their detail.
 */
import type { AppDeps } from '../../deps'
import type { Queryable } from '../../db/engine'
import type { RunDetail, StateResult } from '../../salt/states'
import { detailOf, identIdOf, identIdsOfPg, identsIn, putDetail, pruneDetails, textIdOf, textIdsOfPg, textsIn } from './detail-store'

/** Changes of one state longer than this (as JSON) are replaced by a note of their size. */
const CHANGES_MAX = 16 * 1024
/** Interned ids remembered in memory per service, at most. */
const CACHE_MAX = 200_000
const FIELDS = 4

interface Interned {
  idents: Map<string, number>
  texts: Map<string, number>
}
const caches = new WeakMap<AppDeps, Interned>()
const cacheOf = (deps: AppDeps) => {
  let c = caches.get(deps)
  if (!c) caches.set(deps, (c = { idents: new Map(), texts: new Map() }))
  return c
}
const remember = (m: Map<string, number>, k: string, v: number) => {
  if (m.size >= CACHE_MAX) m.clear()
  m.set(k, v)
  return v
}

/**
 * The id of a state identity, stored once (in `q`, the caller's transaction): the number itself when it is known (a
 * run's states are nearly all known, and an await each would cost a turn of the event loop), else a promise of it.
 */
export function identId(deps: AppDeps, q: Queryable, s: Pick<StateResult, 'key' | 'sls' | 'id' | 'function' | 'name'>): number | Promise<number> {
  const c = cacheOf(deps).idents
  const k = `${s.sls}\0${s.key}`
  const hit = c.get(k)
  if (hit !== undefined) return hit
  return identIdOf(q, { key: s.key, sls: s.sls, state_id: s.id, function: s.function, name: s.name }).then((id) => remember(c, k, id))
}

/** Comments longer than this many characters are stored cut, marked so (a 100 MB comment grew the database by 243 MB). */
const TEXT_MAX = 64 * 1024

/** `text` up to TEXT_MAX characters (never half a surrogate pair), with a note of its whole length when cut. */
function cutText(text: string): string {
  if (text.length <= TEXT_MAX) return text
  const end = /[\ud800-\udbff]/.test(text[TEXT_MAX - 1]!) ? TEXT_MAX - 1 : TEXT_MAX
  return `${text.slice(0, end)}\n[… cut by Saltdeck: ${text.length} characters in all]`
}

/** The id of a comment (cut to TEXT_MAX), stored once (in `q`); 0 for none. The number itself when known, as identId. */
export function textId(deps: AppDeps, q: Queryable, whole: string): number | Promise<number> {
  if (!whole) return 0
  const text = cutText(whole)
  const c = cacheOf(deps).texts
  const hit = c.get(text)
  if (hit !== undefined) return hit
  return textIdOf(q, text).then((id) => remember(c, text, id))
}

const RESULT = { false: 0, true: 1, null: 2 } as const

/**
 * PostgreSQL: interns a run's identities and comments not yet cached in one statement each first, so storing a
 * 20,000-state run is two round trips, not one per new state (each is a network round trip there; on SQLite a
 * statement is a function call, so SQLite keeps its one statement per new state and skips this).
 */
async function internAll(deps: AppDeps, q: Queryable, states: RunDetail['states'] & {}) {
  const c = cacheOf(deps)
  const idents = new Map<string, Parameters<typeof identIdsOfPg>[1][number]>()
  const texts = new Set<string>()
  for (const s of states) {
    const k = `${s.sls}\0${s.key}`
    if (!c.idents.has(k)) idents.set(k, { key: s.key, sls: s.sls, state_id: s.id, function: s.function, name: s.name })
    if (s.comment) {
      const t = cutText(s.comment)
      if (!c.texts.has(t)) texts.add(t)
    }
  }
  if (idents.size) for (const r of await identIdsOfPg(q, [...idents.values()])) remember(c.idents, `${r.sls}\0${r.key}`, r.id)
  if (texts.size) for (const r of await textIdsOfPg(q, [...texts])) remember(c.texts, r.text, r.id)
}

/** Stores a run's detail (in `q`) and drops the detail of the minion's runs past the newest `keep`. */
export async function storeDetail(deps: AppDeps, q: Queryable, runId: string, minionId: string, detail: RunDetail, keep: number) {
  let blob: Uint8Array | null = null
  let changes: string | null = null
  if (detail.states) {
    if (q.engine === 'postgres') await internAll(deps, q, detail.states)
    const packed = new Uint32Array(detail.states.length * FIELDS)
    const changed: Record<number, unknown> = {}
    for (const [i, s] of detail.states.entries()) {
      const ident = identId(deps, q, s)
      const text = textId(deps, q, s.comment)
      packed[i * FIELDS] = typeof ident === 'number' ? ident : await ident
      packed[i * FIELDS + 1] = typeof text === 'number' ? text : await text
      packed[i * FIELDS + 2] = Math.min(s.durationMs, 0xffffffff)
      packed[i * FIELDS + 3] = RESULT[String(s.result) as keyof typeof RESULT] | (s.changed ? 4 : 0)
      if (s.changed) {
        const json = JSON.stringify(s.changes)
        changed[i] = json.length > CHANGES_MAX ? { saltdeck_note: `changes of ${json.length} bytes not kept` } : s.changes
      }
    }
    blob = new Uint8Array(packed.buffer)
    changes = Object.keys(changed).length ? JSON.stringify(changed) : null
  }
  await putDetail(q, runId, minionId, { states: blob, changes, errors: detail.errors ? JSON.stringify(detail.errors.map((e) => e.slice(0, CHANGES_MAX))) : null })
  await pruneDetails(q, minionId, keep)
}

/** One state as the API shows it. */
export interface StateOut {
  key: string
  id: string
  sls: string
  function: string
  name: string
  result: boolean | null
  changed: boolean
  comment: string
  changes: Record<string, unknown>
  duration_ms: number
  order: number
}

/** A run's stored detail: its states or its errors; null when the detail was pruned (or never stored). */
export async function readDetail(deps: AppDeps, runId: string): Promise<{ states: StateOut[]; errors: null } | { states: null; errors: string[] } | null> {
  const row = await detailOf(deps.db, runId)
  if (!row) return null
  if (row.errors !== null) return { states: null, errors: JSON.parse(row.errors) as string[] }
  const bytes = row.states ?? new Uint8Array(0)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const n = bytes.byteLength / (FIELDS * 4)
  const at = (i: number, f: number) => view.getUint32((i * FIELDS + f) * 4, true)
  const identIds = new Set<number>()
  const textIds = new Set<number>()
  for (let i = 0; i < n; i++) identIds.add(at(i, 0)), textIds.add(at(i, 1))
  const idents = new Map((await identsIn(deps.db, identIds)).map((r) => [r.id, r]))
  const texts = new Map((await textsIn(deps.db, textIds)).map((r) => [r.id, r.text]))
  const changes = row.changes ? (JSON.parse(row.changes) as Record<string, Record<string, unknown>>) : {}
  const states: StateOut[] = []
  for (let i = 0; i < n; i++) {
    const id = idents.get(at(i, 0))
    const flags = at(i, 3)
    states.push({
      key: id?.key ?? '', id: id?.state_id ?? '', sls: id?.sls ?? '', function: id?.function ?? '', name: id?.name ?? '',
      result: (flags & 3) === 1 ? true : (flags & 3) === 0 ? false : null, changed: (flags & 4) !== 0,
      comment: texts.get(at(i, 1)) ?? '', changes: changes[i] ?? {}, duration_ms: at(i, 2), order: i,
    })
  }
  return { states, errors: null }
}
