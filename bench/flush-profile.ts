/**
 * Where a package-set flush spends its time, for `bun --preload` in front of bench/inventory.ts: the writer's, the
 * deltas' and the holder index's methods (inclusive ms and calls) and every bun:sqlite statement run (ms, calls, µs
 * each, rows changed), for the last flush of the run (the repeat refresh's). ROOT names the checkout whose modules
 * are timed (another worktree, to set two versions side by side; default this one).
 *
 *   ROOT=/path/to/checkout bun --preload ./bench/flush-profile.ts bench/inventory.ts 5000 1500
 */
import { Database } from 'bun:sqlite'
import { resolve } from 'node:path'

const root = process.env.ROOT ?? resolve(import.meta.dir, '..')
type Acc = Map<string, { n: number; us: number; changed: number }>
let methods: Acc = new Map()
let statements: Acc = new Map()
let last: [Acc, Acc] = [methods, statements]
let inFlush = false
const add = (acc: Acc, k: string, us: number, changed = 0) => {
  const e = acc.get(k) ?? { n: 0, us: 0, changed: 0 }
  e.n++, (e.us += us), (e.changed += changed)
  acc.set(k, e)
}

// Statements: each run method timed, keyed by method and text (the engine prepares; prepared.ts and older code query).
const wrapped = new WeakSet<object>()
for (const method of ['query', 'prepare'] as const) {
  const orig = Database.prototype[method] as unknown as (...a: unknown[]) => Record<string, (...a: unknown[]) => unknown>
  Database.prototype[method] = function (this: Database, text: string, ...rest: unknown[]) {
    const s = orig.call(this, text, ...rest)
    if (wrapped.has(s)) return s
    wrapped.add(s)
    const key = text.replace(/\s+/g, ' ').slice(0, 110)
    for (const m of ['all', 'get', 'run', 'values']) {
      const f = s[m]!
      s[m] = function (this: unknown, ...a: unknown[]) {
        if (!inFlush) return f.apply(this, a)
        const t0 = Bun.nanoseconds()
        const r = f.apply(this, a)
        add(statements, `${m} ${key}`, (Bun.nanoseconds() - t0) / 1000, m === 'run' ? (r as { changes: number }).changes : 0)
        return r
      }
    }
    return s
  } as never
}

// Methods: inclusive time (an async method's until it settles); a flush starts the tables again.
for (const [file, cls] of [['writer', 'PackageSetWriter'], ['deltas', 'Deltas'], ['holders', 'HolderChanges']] as const) {
  const C = (await import(`${root}/src/features/inventory/${file}.ts`))[cls]
  for (const name of Object.getOwnPropertyNames(C.prototype)) {
    const f = Object.getOwnPropertyDescriptor(C.prototype, name)!.value
    if (name === 'constructor' || typeof f !== 'function') continue
    const key = `${cls}.${name}`
    const isFlush = key === 'PackageSetWriter.flush'
    C.prototype[name] = function (this: unknown, ...a: unknown[]) {
      if (isFlush) (methods = new Map()), (statements = new Map()), (inFlush = true)
      const t0 = Bun.nanoseconds()
      const done = () => {
        add(methods, key, (Bun.nanoseconds() - t0) / 1000)
        if (isFlush) (inFlush = false), (last = [methods, statements])
      }
      const r = f.apply(this, a)
      if (r instanceof Promise) return r.finally(done)
      done()
      return r
    }
  }
}

process.on('exit', () => {
  const print = (title: string, acc: Acc, top: number) => {
    console.error(`\n${title}`)
    for (const [k, v] of [...acc].sort((a, b) => b[1].us - a[1].us).slice(0, top))
      console.error(`${(v.us / 1000).toFixed(1).padStart(9)} ms ${String(v.n).padStart(7)} ${(v.us / v.n).toFixed(2).padStart(9)} µs ${v.changed ? `${v.changed} rows `.padStart(13) : ''.padStart(13)}${k}`)
  }
  print('the last flush, by method (inclusive)', last[0], 20)
  print('its statements', last[1], 20)
})
