/**
 * Salt's /events frames, checked before they become events. rest_cherrypy writes each event as `tag: <tag>` and
 * `data: <json of {tag, data}>`, the tag raw: a minion can fire a tag holding CR/LF and so write whole frames of its own
 * into the stream (salt's bus refuses "\n\n" in a tag but not "\r\n\r\n"). Such a frame can look like salt's in every
 * way; what gives it away is the frame salt writes right after it (the carrier), whose JSON tag holds the line breaks.
 * So each frame is held a moment (HOLD_MS, longer while a line is still arriving), and a carrier takes back the frames
 * its tag made. A frame that is not salt's shape (one JSON data line of `{tag, data}` with `data._stamp`, the `tag:` line
 * equal to the JSON tag) is refused.
 */
import { SseParser, type SseFrame } from './sse'

/** One event as salt-api sent it. */
export interface BusEvent {
  tag: string
  data: Record<string, unknown>
}

/** Why a frame was refused: not salt's shape, or written into the stream through another event's tag. */
export type FrameRefusal = 'frame' | 'injected'

/** How long a frame waits for a carrier that would take it back (salt-api writes the carrier right after it). */
export const HOLD_MS = 250
/** The longest a frame waits while a line that may be its carrier is still arriving. */
export const HOLD_MAX_MS = 30_000

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** Salt's `{tag, data}` JSON of one data line, or null. */
function saltJson(line: string): BusEvent | null {
  try {
    const m = JSON.parse(line) as unknown
    return isObject(m) && typeof m.tag === 'string' && isObject(m.data) ? { tag: m.tag, data: m.data } : null
  } catch {
    return null
  }
}

/** The frames an event's tag text writes into the stream when salt-api prints it raw. */
const framesOfTag = (tag: string) => new SseParser().push(`tag: ${tag}\n`)

/** Feeds the stream's text in any split; hands out checked events once no carrier can take them back. */
export class SaltFrames {
  private parser = new SseParser()
  private held: { ev: BusEvent; frame: SseFrame; at: number }[] = []
  /** Since when text of an unfinished line or event block has been waiting (null while the parser is between events). */
  private pendingSince: number | null = null

  /** The last `retry:` value seen, in ms. */
  get retryMs() {
    return this.parser.retryMs
  }

  /** Parses a chunk received at `now`; returns the refusals it caused. */
  push(chunk: string, now: number): FrameRefusal[] {
    const linesBefore = this.parser.lines
    const refused: FrameRefusal[] = []
    for (const f of this.parser.push(chunk)) this.check(f, now, refused)
    // What waits now began in this chunk if a line ended in it, else it is the same unfinished part as before.
    if (this.parser.idle) this.pendingSince = null
    else if (this.pendingSince === null || this.parser.lines > linesBefore) this.pendingSince = now
    return refused
  }

  private check(f: SseFrame, now: number, refused: FrameRefusal[]) {
    // Salt's JSON is one line, and it is the block's last: a tag's tail can add data lines before it, never after.
    const lines = f.data.split('\n')
    const ev = saltJson(lines[lines.length - 1]!)
    if (ev && /[\r\n]/.test(ev.tag)) {
      for (const i of framesOfTag(ev.tag).reverse()) {
        const at = this.held.findLastIndex((h) => h.frame.tag === i.tag && h.frame.data === i.data)
        if (at >= 0) this.held.splice(at, 1), refused.push('injected')
      }
      refused.push('frame')
      return
    }
    if (!ev || lines.length !== 1 || f.tag !== ev.tag || typeof ev.data._stamp !== 'string') return void refused.push('frame')
    this.held.push({ ev, frame: f, at: now })
  }

  /** Whether a frame completed at `at` may still be taken back by a line that is arriving. */
  private covered(at: number, now: number) {
    return this.pendingSince !== null && this.pendingSince <= at + HOLD_MS && now - at < HOLD_MAX_MS
  }

  /** The events no carrier can take back any more, in order. */
  release(now: number): BusEvent[] {
    let n = 0
    while (n < this.held.length && now - this.held[n]!.at >= HOLD_MS && !this.covered(this.held[n]!.at, now)) n++
    return this.held.splice(0, n).map((h) => h.ev)
  }

  /** Milliseconds until the first held event may be released (checked again when text arrives); null with none held. */
  nextReleaseIn(now: number): number | null {
    const first = this.held[0]
    if (!first) return null
    const until = this.covered(first.at, now) ? first.at + HOLD_MAX_MS : first.at + HOLD_MS
    return Math.max(1, until - now)
  }

  /**
   * At the end of a connection: what is held and not covered by an unfinished part is released; what an unfinished
   * part (a carrier cut off) could have taken back is refused.
   */
  end(): { events: BusEvent[]; refused: number } {
    const events: BusEvent[] = []
    let refused = 0
    for (const h of this.held.splice(0)) {
      if (this.pendingSince !== null && this.pendingSince <= h.at + HOLD_MS) refused++
      else events.push(h.ev)
    }
    return { events, refused }
  }
}
