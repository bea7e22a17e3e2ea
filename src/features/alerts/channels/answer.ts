/** A receiver's answer, read only up to a small bound: a receiver that answers gigabytes costs Saltdeck 4 KiB. */

/** The most of a receiver's answer Saltdeck reads; the rest is never fetched. */
export const ANSWER_MAX_BYTES = 4096

/** The first `max` bytes of an answer's body as text; the body is cancelled after them, so the connection closes. */
export async function readAnswer(res: Response, max = ANSWER_MAX_BYTES): Promise<string> {
  const reader = res.body?.getReader()
  if (!reader) return ''
  const parts: Uint8Array[] = []
  let size = 0
  try {
    while (size < max) {
      const { done, value } = await reader.read()
      if (done) break
      parts.push(value)
      size += value.byteLength
    }
  } finally {
    // Cancelling (not just releasing) tells fetch to stop reading and drop the connection's remaining bytes.
    await reader.cancel().catch(() => {})
  }
  const all = new Uint8Array(Math.min(size, max))
  let at = 0
  for (const p of parts) {
    if (at >= all.length) break
    all.set(p.subarray(0, all.length - at), at)
    at += p.byteLength
  }
  return new TextDecoder().decode(all)
}
