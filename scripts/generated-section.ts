/**
 * Generated sections of hand-written documents: the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` is
 * owned by a generator script; the rest of the file is prose. The unit tests compare each section with what its
 * generator writes, so a document cannot drift from the code it describes.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The repository root, for the documents' paths. */
export const ROOT = join(import.meta.dir, '..')

const markers = (name: string) => [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`] as const

/** Where the section's body lies in `text` (between the two marker lines); throws when a marker is missing. */
function bounds(text: string, name: string, file: string): [number, number] {
  const [start, end] = markers(name)
  const a = text.indexOf(start)
  const b = text.indexOf(end)
  if (a < 0 || b < a) throw new Error(`${file}: markers ${start} … ${end} not found`)
  return [a + start.length + 1, b]
}

/** The current body of the section `name` in a document (a path under the repository root). */
export function readSection(file: string, name: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const [a, b] = bounds(text, name, file)
  return text.slice(a, b)
}

/** Replaces the section's body with `body` (ending in a newline) and says whether the file changed. */
export function writeSection(file: string, name: string, body: string): boolean {
  const path = join(ROOT, file)
  const text = readFileSync(path, 'utf8')
  const [a, b] = bounds(text, name, file)
  const next = text.slice(0, a) + body + text.slice(b)
  if (next === text) return false
  writeFileSync(path, next)
  return true
}

/** A document's generated sections: the file (under the repository root) and each section's generator. */
export interface Generated {
  file: string
  sections: Record<string, () => string>
}

/** Writes every section of a document, saying which changed. */
export function writeAll(doc: Generated) {
  for (const [name, make] of Object.entries(doc.sections)) console.log(`${doc.file} ${name}: ${writeSection(doc.file, name, make()) ? 'written' : 'already up to date'}`)
}

/** Escapes a table cell's text for Markdown. */
export const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ')

/** A Markdown table from a header row and body rows; ends in a newline. */
export const table = (head: string[], rows: string[][]) =>
  [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n') + '\n'
