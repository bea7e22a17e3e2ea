// Proves the layering of docs/architecture.md holds: no import cycle in src/ (type imports included), and no import
// against the grain (salt/ → features, pollers, http; features/ → pollers; db/ and lib/ → anything above them).
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const SRC = resolve(import.meta.dir, '../../src')
/** Folders whose modules may not import from the folders listed. */
const AGAINST_THE_GRAIN: Record<string, string[]> = {
  salt: ['features', 'pollers', 'http'],
  features: ['pollers'],
  db: ['features', 'pollers', 'salt', 'http'],
  lib: ['features', 'pollers', 'salt', 'http', 'db'],
}
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

/** Every server module under src/ (the dashboard is a separate program with its own build). */
function modules(dir = SRC): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) return n === 'dashboard' || n === 'generated' ? [] : modules(p)
    return /\.tsx?$/.test(n) && !n.endsWith('.d.ts') ? [p] : []
  })
}

/** The module a relative specifier names, or null for a package or a non-module file. */
function resolveSpec(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null
  const base = resolve(dirname(from), spec)
  for (const c of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) if (/\.tsx?$/.test(c) && existsSync(c) && statSync(c).isFile()) return c
  return null
}

const rel = (p: string) => relative(SRC, p)
const graph = new Map<string, string[]>()
for (const m of modules()) {
  const text = readFileSync(m, 'utf8')
  graph.set(m, [...text.matchAll(IMPORT)].map((x) => resolveSpec(m, x[1] ?? x[2]!)).filter((x): x is string => !!x))
}

/** Strongly connected components of more than one module (Tarjan). */
function cycles(): string[][] {
  let n = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const on = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    index.set(v, n)
    low.set(v, n++)
    stack.push(v)
    on.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const comp: string[] = []
    for (let w = ''; w !== v; ) {
      w = stack.pop()!
      on.delete(w)
      comp.push(rel(w))
    }
    if (comp.length > 1) out.push(comp.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return out
}

test('the module graph has modules to check (the walk found src/)', () => {
  expect(graph.size).toBeGreaterThan(50)
  expect([...graph.values()].flat().length).toBeGreaterThan(100)
})

test('no import cycle in src/, type imports included', () => {
  expect(cycles()).toEqual([])
})

test('no import against the grain', () => {
  const top = (p: string) => rel(p).split('/')[0]!
  const bad = [...graph].flatMap(([from, tos]) => tos.filter((to) => AGAINST_THE_GRAIN[top(from)]?.includes(top(to))).map((to) => `${rel(from)} -> ${rel(to)}`))
  expect(bad).toEqual([])
})

test('the check catches a cycle and an import against the grain (it can fail)', () => {
  const a = join(SRC, 'salt/__a.ts')
  const b = join(SRC, 'features/__b.ts')
  graph.set(a, [b])
  graph.set(b, [a])
  try {
    expect(cycles()).toEqual([['features/__b.ts', 'salt/__a.ts']])
  } finally {
    graph.delete(a)
    graph.delete(b)
  }
})
