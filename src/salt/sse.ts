/** A streaming parser for salt-api's `/events` Server-Sent Events (`retry:`, `tag:`, `data:`, blank-line framing). */

/** One complete event block. */
export interface SseFrame {
  tag: string | null
  data: string
  id: string | null
}

/** Feeds text chunks in any split; returns the frames they complete. Handles CRLF, multi-line data and comments. */
export class SseParser {
  private buf = ''
  private data: string[] = []
  private tag: string | null = null
  private id: string | null = null
  /** The last `retry:` value seen, in ms. */
  retryMs: number | null = null
  /** Lines completed so far (tells a reader whether a chunk ended a line). */
  lines = 0

  /** True between events: no part of a line or of an event block is waiting for more text. */
  get idle() {
    return this.buf === '' && this.data.length === 0 && this.tag === null
  }

  push(chunk: string): SseFrame[] {
    this.buf += chunk
    const out: SseFrame[] = []
    for (;;) {
      const nl = this.buf.search(/\r\n|\r|\n/)
      if (nl < 0) break
      // A lone \r at the end may be half of \r\n: wait for the next chunk.
      if (this.buf[nl] === '\r' && nl === this.buf.length - 1) break
      const line = this.buf.slice(0, nl)
      this.buf = this.buf.slice(nl + (this.buf.startsWith('\r\n', nl) ? 2 : 1))
      this.lines++
      const frame = this.line(line)
      if (frame) out.push(frame)
    }
    return out
  }

  private line(line: string): SseFrame | null {
    if (line === '') {
      if (!this.data.length) {
        this.tag = null
        return null
      }
      const f = { tag: this.tag, data: this.data.join('\n'), id: this.id }
      this.data = []
      this.tag = null
      return f
    }
    if (line.startsWith(':')) return null
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') this.data.push(value)
    else if (field === 'tag') this.tag = value
    else if (field === 'id') this.id = value
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value)
    return null
  }
}
