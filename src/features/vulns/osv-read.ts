/**
 * Reads OSV records from what an operator has: an `all.zip` as osv.dev publishes per ecosystem, one `.json` record
 * (or a JSON array of records), or a directory of them. Records come one at a time (zip entries are read through the
 * zip's central directory with yauzl), so a feed of any size never sits in memory whole.
 */
import { readdirSync, statSync, openSync, readSync, closeSync } from 'node:fs'
import { basename, join } from 'node:path'
import yauzl from 'yauzl'

/** A feed that cannot be read: the file (and entry) and why, in a sentence. */
export class FeedError extends Error {}

/** One record as read: where it came from, and its parsed JSON. */
export interface RawRecord {
  from: string
  value: unknown
}

/** The largest single record file read (osv.dev's largest records are well under a megabyte). */
const MAX_RECORD_BYTES = 16 * 1024 * 1024

/** Every record of the given files and directories, in order. */
export async function* readRecords(paths: string[]): AsyncGenerator<RawRecord> {
  for (const p of paths) yield* readPath(p)
}

async function* readPath(path: string): AsyncGenerator<RawRecord> {
  let st
  try {
    st = statSync(path)
  } catch (e) {
    throw new FeedError(`${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`)
  }
  if (st.isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name)
      if (statSync(full).isDirectory() || /\.(json|zip)$/i.test(name)) yield* readPath(full)
    }
    return
  }
  if (isZip(path)) yield* readZip(path)
  else yield* parse(path, await Bun.file(path).text(), st.size)
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
  if (size > MAX_RECORD_BYTES) throw new FeedError(`${from}: larger than ${MAX_RECORD_BYTES >> 20} MiB`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new FeedError(`${from}: not valid JSON (${(e as Error).message})`)
  }
  if (Array.isArray(value)) for (const v of value) yield { from, value: v }
  else yield { from, value }
}

/** The `.json` entries of a zip file, each parsed as it is read. */
async function* readZip(path: string): AsyncGenerator<RawRecord> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) =>
    yauzl.open(path, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: true }, (err, z) => (err ? rej(err) : res(z))),
  ).catch((e: Error) => {
    throw new FeedError(`${path}: not a readable zip file (${e.message})`)
  })
  try {
    while (true) {
      const entry = await new Promise<yauzl.Entry | null>((res, rej) => {
        const onEntry = (e: yauzl.Entry) => (off(), res(e))
        const onEnd = () => (off(), res(null))
        const onError = (e: Error) => (off(), rej(e))
        const off = () => zip.off('entry', onEntry).off('end', onEnd).off('error', onError)
        zip.on('entry', onEntry).on('end', onEnd).on('error', onError)
        zip.readEntry()
      }).catch((e: Error) => {
        throw new FeedError(`${path}: broken zip file (${e.message})`)
      })
      if (!entry) return
      if (entry.fileName.endsWith('/') || !entry.fileName.toLowerCase().endsWith('.json')) continue
      const from = `${basename(path)}:${entry.fileName}`
      if (entry.uncompressedSize > MAX_RECORD_BYTES) throw new FeedError(`${from}: larger than ${MAX_RECORD_BYTES >> 20} MiB`)
      const text = await new Promise<string>((res, rej) => {
        zip.openReadStream(entry, (err, stream) => {
          if (err) return rej(err)
          const parts: Buffer[] = []
          stream.on('data', (c: Buffer) => parts.push(c))
          stream.on('end', () => res(Buffer.concat(parts).toString('utf8')))
          stream.on('error', rej)
        })
      }).catch((e: Error) => {
        throw new FeedError(`${from}: cannot be read (${e.message})`)
      })
      yield* parse(from, text, text.length)
    }
  } finally {
    zip.close()
  }
}
