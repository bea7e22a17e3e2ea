/** CSV answers read by Python's csv module, an independent parser, so quoting is checked by someone else's reading. */
import { join } from 'node:path'

/** The rows of a CSV text as Python's csv.reader reads them (header first). */
export function parseCsv(text: string): string[][] {
  const p = Bun.spawnSync(['python3', join(import.meta.dir, 'csv_rows.py')], { stdin: new TextEncoder().encode(text) })
  if (p.exitCode !== 0) throw new Error(`csv_rows.py failed: ${p.stderr.toString()}`)
  return JSON.parse(p.stdout.toString()) as string[][]
}
