/** Transport checks that run before routing: body size, content type and JSON syntax. */
import { AppError, ValidationFailed } from './errors'
import { parseJson } from './json'
import { isJsonType, type ParsedBody } from './route'

/** Largest accepted request body (contract §1). */
export const MAX_BODY = 1024 * 1024

/** Reads and parses a request body: 413 over 1 MiB, 415 for a non-JSON body, 422 json_invalid for bad JSON. */
export async function readBody(request: Request): Promise<ParsedBody> {
  const declared = Number(request.headers.get('content-length') ?? 0)
  if (declared > MAX_BODY) throw new AppError(413, 'Request body too large')
  const buf = new Uint8Array(await request.arrayBuffer())
  if (buf.byteLength > MAX_BODY) throw new AppError(413, 'Request body too large')
  if (buf.byteLength === 0) return { present: false, value: undefined }
  if (!isJsonType(request.headers.get('content-type'))) throw new AppError(415, 'Content-Type must be application/json')
  const text = new TextDecoder().decode(buf).replace(/^\uFEFF/, '')
  const r = parseJson(text)
  if (!r.ok)
    throw new ValidationFailed([{ type: 'json_invalid', loc: ['body', r.problem.pos], msg: 'JSON decode error', input: {}, ctx: { error: r.problem.error } }])
  return { present: true, value: r.value }
}
