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

/** Paths whose POST body the route streams itself (uploads larger than MAX_BODY): the parse hook leaves them unread. */
export const UPLOAD_PATHS = new Set(['/api/vulns/import'])

/** Reads and parses a request body: 413 over 1 MiB, 415 for a non-JSON body, 422 json_invalid for bad JSON. */
export async function readBody(request: Request): Promise<ParsedBody> {
  if (request.method === 'POST' && UPLOAD_PATHS.has(new URL(request.url).pathname)) return { present: !!request.body, value: undefined }
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
