/** Transport checks that run before routing: body size, content type and JSON syntax. */
import { AppError, ValidationFailed } from './errors'
import { parseJson } from './json'
import { isJsonType, type ParsedBody } from './route'

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** Largest accepted request body (contract §1). */
export const MAX_BODY = 1024 * 1024

/** Reads a body up to MAX_BODY bytes; past that it stops reading and answers 413 (a chunked body declares no length). */
async function readCapped(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > MAX_BODY) throw new AppError(413, 'Request body too large')
    chunks.push(chunk)
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) out.set(c, (at += c.byteLength) - c.byteLength)
  return out
}

/**
 * Reads and parses a request body: 413 over 1 MiB, 415 for a non-JSON body, 422 json_invalid for bad JSON. A POST to
 * an upload route (`uploads`: path → media types) is left unread for its handler to stream, after the same 415 check
 * against its own types, so both kinds of route refuse a wrong type before authentication.
 */
export async function readBody(request: Request, uploads: ReadonlyMap<string, string[]> = new Map()): Promise<ParsedBody> {
  const upload = request.method === 'POST' ? uploads.get(new URL(request.url).pathname) : undefined
  if (upload) {
    const ct = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (!upload.includes(ct)) throw new AppError(415, `Content-Type must be ${upload.join(' or ')}`)
    return { present: !!request.body, value: undefined }
  }
  const declared = Number(request.headers.get('content-length') ?? 0)
  if (declared > MAX_BODY) throw new AppError(413, 'Request body too large')
  const buf = await readCapped(request)
  if (buf.byteLength === 0) return { present: false, value: undefined }
  if (!isJsonType(request.headers.get('content-type'))) throw new AppError(415, 'Content-Type must be application/json')
  let text: string
  try {
    text = UTF8.decode(buf).replace(/^\uFEFF/, '')
  } catch {
    // JSON is UTF-8 (RFC 8259): a body that is not cannot be parsed.
    throw new ValidationFailed([{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: 'Invalid UTF-8 in the body' } }])
  }
  const r = parseJson(text)
  if (!r.ok)
    throw new ValidationFailed([{ type: 'json_invalid', loc: ['body', r.problem.pos], msg: 'JSON decode error', input: {}, ctx: { error: r.problem.error } }])
  return { present: true, value: r.value }
}
