/**
 * Reads OSV records from what an operator has: an `all.zip` as osv.dev publishes per ecosystem, one `.json` record
 * (or a JSON array of records), or a directory of them. Records come one at a time (zip entries are read through the
 * zip's central directory with yauzl), so a feed of any size never sits in memory whole. What a zip may inflate to is
 * bounded (per entry, per import, and the ratio of inflated to compressed), so a small zip cannot make a large import.
 */
import { readdirSync, statSync, openSync, readSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import yauzl from 'yauzl'

/** A feed that cannot be read: the file (and entry) and why, in a sentence. */
export class FeedError extends Error {}

/** One record as read: where it came from, its parsed JSON, and the bytes of text it was parsed from (0 after the first record of one text). */
export interface RawRecord {
  from: string
  value: unknown
  bytes?: number
}

/** A file to read and the name errors give it (an upload's staging file is named for what the operator sent, not its path). */
export interface FeedFile {
  path: string
  name: string
}

/**
 * The largest single JSON text read, a zip entry or a file (osv.dev's largest records are well under a megabyte). A
 * text is parsed whole, and parsing 8 MiB of small strings or objects takes a few hundred MB (bench/vuln-import-rss.ts).
 */
export const MAX_RECORD_BYTES = 8 * 1024 * 1024
/** What one import may inflate to in all (its JSON files and zip entries together). */
export const MAX_IMPORT_BYTES = 2 * 1024 * 1024 * 1024
/** The largest ratio of inflated to compressed size of a zip entry (osv.dev's records compress about 4 to 10 times). */
export const MAX_RATIO = 100
/** Entries up to this size are not held to the ratio (a tiny entry inflates to little whatever its ratio). */
const RATIO_FREE_BYTES = 64 * 1024
/** A JSON text this large is read after a full collection (see readZip). */
const COLLECT_BEFORE_BYTES = 1024 * 1024

const mib = (n: number) => `${n / 1024 / 1024} MiB`

/** Every record of the given files and directories (a path is its own name), in order; one budget of inflated bytes for them all. */
export async function* readRecords(paths: (string | FeedFile)[]): AsyncGenerator<RawRecord> {
  const budget = { bytes: 0 }
  for (const p of paths) {
    const f = typeof p === 'string' ? { path: p, name: p } : p
    yield* readPath(f.path, f.name, budget)
  }
}

/** Counts `n` more bytes against the import's budget; past it, the import stops. */
function spend(budget: { bytes: number }, n: number, from: string) {
  budget.bytes += n
  if (budget.bytes > MAX_IMPORT_BYTES) throw new FeedError(`${from}: the import inflates to more than ${mib(MAX_IMPORT_BYTES)}`)
}

/** Why a file could not be opened, without its path (an upload's path is the server's own business). */
const why = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException).code
  return code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code ? `cannot be read (${code})` : 'cannot be read'
}

async function* readPath(path: string, name: string, budget: { bytes: number }): AsyncGenerator<RawRecord> {
  let st
  try {
    st = statSync(path)
  } catch (e) {
    throw new FeedError(`${name}: ${why(e)}`)
  }
  if (st.isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      const full = join(path, entry)
      if (statSync(full).isDirectory() || /\.(json|zip)$/i.test(entry)) yield* readPath(full, join(name, entry), budget)
    }
    return
  }
  if (isZip(path)) return yield* readZip(path, name, budget)
  // Refused before it is read: a JSON text is parsed whole.
  if (st.size > MAX_RECORD_BYTES) throw new FeedError(`${name}: larger than ${mib(MAX_RECORD_BYTES)}`)
  spend(budget, st.size, name)
  yield* parse(name, await Bun.file(path).text(), st.size)
}

/** A zip file by its first bytes (a local file header, or the end record of an empty archive). */
function isZip(path: string): boolean {
  const fd = openSync(path, 'r')
  try {
    const b = Buffer.alloc(4)
    const n = readSync(fd, b, 0, 4, 0)
    return n === 4 && b[0] === 0x50 && b[1] === 0x4b && (b[2] === 3 || b[2] === 5) && (b[3] === 4 || b[3] === 6)
  } finally {
    closeSync(fd)
  }
}

/** The records of one JSON text: one record object, or an array of them. */
function* parse(from: string, text: string, size: number): Generator<RawRecord> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new FeedError(`${from}: not valid JSON (${(e as Error).message})`)
  }
  let bytes = size
  if (Array.isArray(value)) for (const v of value) yield { from, value: v, bytes }, (bytes = 0)
  else yield { from, value, bytes }
}

/** Refuses an entry whose declared sizes are past the bounds; yauzl (validateEntrySizes) holds the data to them. */
function checkEntry(entry: yauzl.Entry, from: string, budget: { bytes: number }) {
  const size = entry.uncompressedSize
  if (size > MAX_RECORD_BYTES) throw new FeedError(`${from}: inflates to more than ${mib(MAX_RECORD_BYTES)}`)
  if (size > RATIO_FREE_BYTES && size > MAX_RATIO * entry.compressedSize)
    throw new FeedError(`${from}: compressed more than ${MAX_RATIO} to 1 (${size} bytes from ${entry.compressedSize}), refused as a zip bomb`)
  spend(budget, size, from)
}

/** Opens a zip for reading its entries one at a time. */
function openZip(path: string, name: string): Promise<yauzl.ZipFile> {
  return new Promise<yauzl.ZipFile>((res, rej) =>
    yauzl.open(path, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: true }, (err, z) => (err ? rej(err) : res(z))),
  ).catch((e: Error) => {
    throw new FeedError(`${name}: not a readable zip file (${e.message})`)
  })
}

/** The zip's next `.json` entry from its central directory, or null at its end. */
async function nextJsonEntry(zip: yauzl.ZipFile, name: string): Promise<yauzl.Entry | null> {
  while (true) {
    const entry = await new Promise<yauzl.Entry | null>((res, rej) => {
      const onEntry = (e: yauzl.Entry) => (off(), res(e))
      const onEnd = () => (off(), res(null))
      const onError = (e: Error) => (off(), rej(e))
      const off = () => zip.off('entry', onEntry).off('end', onEnd).off('error', onError)
      zip.on('entry', onEntry).on('end', onEnd).on('error', onError)
      zip.readEntry()
    }).catch((e: Error) => {
      throw new FeedError(`${name}: broken zip file (${e.message})`)
    })
    if (!entry || (!entry.fileName.endsWith('/') && entry.fileName.toLowerCase().endsWith('.json'))) return entry
  }
}

/**
 * The `.json` entries of a zip file, each parsed as it is read. The central directory is walked once first and every
 * entry checked against the bounds, so a zip bomb is refused before anything is inflated.
 */
async function* readZip(path: string, name: string, budget: { bytes: number }): AsyncGenerator<RawRecord> {
  const scan = await openZip(path, name)
  try {
    for (let e; (e = await nextJsonEntry(scan, name)); ) checkEntry(e, `${name}:${e.fileName}`, budget)
  } finally {
    scan.close()
  }
  const zip = await openZip(path, name)
  try {
    for (let entry; (entry = await nextJsonEntry(zip, name)); ) {
      const from = `${name}:${entry.fileName}`
      // JavaScriptCore collects late: the garbage of the records before (their text, the parsed JSON, what was staged
      // of it) stayed on top of the next one's, and 16 MiB records lifted a served process past 600 MB. Large records
      // are rare (osv.dev's are a few KB), so a full collection before each costs little.
      if (entry.uncompressedSize >= COLLECT_BEFORE_BYTES) Bun.gc(true)
      const text = await new Promise<string>((res, rej) => {
        zip.openReadStream(entry!, (err, stream) => {
          if (err) return rej(err)
          const parts: Buffer[] = []
          stream.on('data', (c: Buffer) => parts.push(c))
          stream.on('end', () => res(Buffer.concat(parts).toString('utf8')))
          stream.on('error', rej)
        })
      }).catch((e: Error) => {
        throw new FeedError(`${from}: cannot be read (${e.message})`)
      })
      yield* parse(from, text, entry.uncompressedSize)
    }
  } finally {
    zip.close()
  }
}
