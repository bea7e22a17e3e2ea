/** Process log lines in JSON or text, switchable at run time; values are bounded so hostile data cannot flood a line. */

/** The two line formats of `logging.log_format`. */
export type LogFormat = 'json' | 'text'

const MAX_VALUE = 500

/** A small structured logger. */
export class Logger {
  constructor(public format: LogFormat = 'json', private out: (line: string) => void = (l) => process.stdout.write(l + '\n'), public quiet = false) {}

  /** Writes one line: a message and bounded fields. */
  log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}) {
    if (this.quiet) return
    const f: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(fields)) f[k] = typeof v === 'string' && v.length > MAX_VALUE ? v.slice(0, MAX_VALUE) + '…' : v
    const ts = new Date().toISOString()
    if (this.format === 'json') this.out(JSON.stringify({ ts, level, msg, ...f }))
    else this.out(`${ts} ${level.toUpperCase()} ${msg}${Object.entries(f).map(([k, v]) => ` ${k}=${JSON.stringify(v)}`).join('')}`)
  }
  info(msg: string, fields?: Record<string, unknown>) {
    this.log('info', msg, fields)
  }
  warn(msg: string, fields?: Record<string, unknown>) {
    this.log('warn', msg, fields)
  }
  error(msg: string, fields?: Record<string, unknown>) {
    this.log('error', msg, fields)
  }
}
