/** JSON body parsing that reports the failing character offset and Python's json message, as FastAPI does. */

/** Where and why a JSON text is malformed. */
export interface JsonProblem {
  pos: number
  error: string
}

const WS = new Set([' ', '\t', '\n', '\r'])

/** Finds the first syntax problem the way Python's json module words it; null when the text is valid JSON. */
export function findJsonProblem(text: string): JsonProblem | null {
  let i = 0
  const fail = (pos: number, error: string): never => {
    throw { pos, error } satisfies JsonProblem
  }
  const ws = () => {
    while (i < text.length && WS.has(text[i]!)) i++
  }
  const str = () => {
    const start = i
    i++
    for (;;) {
      if (i >= text.length) fail(start, 'Unterminated string starting at')
      const c = text.charCodeAt(i)
      if (c === 34) {
        i++
        return
      }
      if (c < 0x20) fail(i, 'Invalid control character at')
      if (c === 92) {
        const e = text[i + 1]
        if (e === undefined) fail(start, 'Unterminated string starting at')
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i + 1, 'Invalid \\uXXXX escape')
          i += 6
        } else if ('"\\/bfnrt'.includes(e!)) i += 2
        else fail(i, 'Invalid \\escape')
      } else i++
    }
  }
  /** A comma-separated run of members up to `close`, the opening bracket at i. */
  const members = (close: string, member: () => void): void => {
    i++
    ws()
    if (text[i] === close) return void i++
    for (;;) {
      member()
      ws()
      if (text[i] === close) return void i++
      if (text[i] !== ',') fail(i, "Expecting ',' delimiter")
      i++
      ws()
    }
  }
  const value = (): void => {
    const c = text[i]
    if (c === '{')
      return members('}', () => {
        if (text[i] !== '"') fail(i, 'Expecting property name enclosed in double quotes')
        str()
        ws()
        if (text[i] !== ':') fail(i, "Expecting ':' delimiter")
        i++
        ws()
        value()
      })
    if (c === '[') return members(']', value)
    if (c === '"') return str()
    for (const lit of ['true', 'false', 'null']) if (text.startsWith(lit, i)) return void (i += lit.length)
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/.exec(text.slice(i, i + 400))
    if (!m) fail(i, 'Expecting value')
    i += m![0].length
  }
  try {
    ws()
    value()
    ws()
    if (i < text.length) fail(i, 'Extra data')
    return null
  } catch (e) {
    if (e && typeof e === 'object' && 'pos' in e) return e as JsonProblem
    throw e
  }
}

/** The deepest nesting of arrays and objects a body may have; deeper ones are refused before any parser recurses. */
export const MAX_DEPTH = 256

/** Where the text nests arrays and objects deeper than `max` (brackets inside strings do not count); null when it does not. */
export function tooDeep(text: string, max = MAX_DEPTH): JsonProblem | null {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return { pos: i, error: `Nesting deeper than ${max} levels at` }
    } else if (c === 93 || c === 125) depth--
  }
  return null
}

/** Parses a body text; on failure returns the problem instead of throwing. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; problem: JsonProblem } {
  const deep = tooDeep(text)
  if (deep) return { ok: false, problem: deep }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, problem: findJsonProblem(text) ?? { pos: 0, error: 'Expecting value' } }
  }
}
