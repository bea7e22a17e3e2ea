/** The command line: parses arguments into a command and runs it. */
import { loadConfig, type Config } from './config'
import { serve } from './server'
import { VERSION } from './version'

const HELP = `saltdeck ${VERSION}: administration and monitoring console for SaltStack fleets

Usage:
  saltdeck serve [--host 127.0.0.1] [--port 8080] [--data-dir ./data]
  saltdeck version
  saltdeck --help

Environment: SALTDECK_HOST, SALTDECK_PORT, SALTDECK_DATA_DIR, SALTDECK_ADMIN_PASSWORD, SALTDECK_SALT_URL, ... (see README).`

/** Reads `--name value` and `--name=value` flags; names in `booleans` stand alone and read as 'true'. */
export function parseFlags(args: string[], booleans: string[] = []): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (!a.startsWith('--')) throw new Error(`unexpected argument: ${a}`)
    const eq = a.indexOf('=')
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1)
    else if (booleans.includes(a.slice(2))) out[a.slice(2)] = 'true'
    else {
      const v = args[i + 1]
      if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value`)
      out[a.slice(2)] = v
      i++
    }
  }
  return out
}

/** Runs one command; resolves with the process exit code (serve resolves only when stopped). */
export async function runCli(argv: string[], env = process.env): Promise<number> {
  const [cmd, ...rest] = argv
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    console.log(HELP)
    return 0
  }
  if (cmd === 'version' || cmd === '--version') {
    console.log(VERSION)
    return 0
  }
  if (cmd === 'serve') {
    const f = parseFlags(rest)
    const known = new Set(['host', 'port', 'data-dir'])
    for (const k of Object.keys(f)) if (!known.has(k)) throw new Error(`unknown option --${k}`)
    const overrides: Partial<Config> = { host: f.host, dataDir: f['data-dir'], port: f.port === undefined ? undefined : Number(f.port) }
    if (overrides.port !== undefined && !(Number.isInteger(overrides.port) && overrides.port >= 0 && overrides.port < 65536)) throw new Error('--port must be 0..65535')
    const running = await serve(loadConfig(env, overrides))
    await new Promise<void>((done) => {
      const stop = () => running.stop().then(done)
      process.once('SIGTERM', stop)
      process.once('SIGINT', stop)
    })
    return 0
  }
  console.error(`unknown command: ${cmd}\n\n${HELP}`)
  return 2
}
