/** The command line: parses arguments into a command and runs it. */
import { loadConfig, optionList, OPTIONS, type Config } from './config'
import { serve } from './server'
import { VERSION } from './version'
import { startDemo } from './demo/command'
import { backup, CommandError, migrateToPostgres, configShow, userCreate, userList, userResetPassword, vulnsImport } from './commands'

const HELP = `saltdeck ${VERSION}: administration and monitoring console for SaltStack fleets

Usage:
  saltdeck serve [--host 127.0.0.1] [--port 8080] [--data-dir ./data] [--database-url URL] [--tls-cert FILE --tls-key FILE]
  saltdeck user create NAME [--roles viewer] [--display-name TEXT] [--password-stdin] [--data-dir ./data] [--database-url URL]
  saltdeck user reset-password NAME [--password-stdin] [--data-dir ./data] [--database-url URL]
  saltdeck user list [--data-dir ./data] [--database-url URL]
  saltdeck backup FILE [--data-dir ./data]
  saltdeck migrate-to-postgres --database-url URL [--data-dir ./data]
  saltdeck vulns import FILE... [--data-dir ./data] [--database-url URL]
  saltdeck demo [--host 127.0.0.1] [--port 8080]
  saltdeck config [the flags of serve]
  saltdeck version
  saltdeck --help

serve          run the service (API, dashboard, pollers) until SIGTERM or SIGINT
user create    add a user with the given roles (comma list of role names); prints a generated password
               that must be changed at first login, unless --password-stdin reads one line from stdin
user reset-password
               set a new password (generated and printed, or from stdin) and end the user's sessions
user list      show every user with state and roles
backup         write a consistent copy of the database to FILE while the service runs (SQLite; on PostgreSQL
               use pg_dump)
migrate-to-postgres
               copy a SQLite install (the service stopped) into an empty PostgreSQL database: users, roles,
               settings, secrets (readable with the same secret.key), history, inventory, findings and alerts;
               compares every table's count before it commits
vulns import   import OSV vulnerability feeds (an all.zip per ecosystem, .json records, or directories of them);
               each ecosystem in them replaces its earlier import; the service may be running
demo           serve a made-up fleet of a few hundred minions (runs, packages, vulnerabilities, alerts) from a
               temporary data directory, without salt; prints the address and a login; the directory is removed
               when it stops (SIGTERM or SIGINT)
config         print the configuration serve would run with (environment, defaults, flags) as NAME=value
               lines; secret values show as ******** when set
version        print the version

Environment (each described in the README's Configuration table):
${wrap(optionList().map(([, o]) => o.env).join(', '), 110)}`

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
  if (rest.includes('--help') || rest.includes('-h')) {
    const help = commandHelp(cmd)
    if (!help) return usage(`unknown command: ${cmd}`)
    console.log(help)
    return 0
  }
  if (cmd === 'version' || cmd === '--version') {
    console.log(VERSION)
    return 0
  }
  if (cmd === 'serve') {
    const running = await serve(serveConfig(env, rest))
    await new Promise<void>((done) => {
      const stop = () => running.stop().then(done)
      process.once('SIGTERM', stop)
      process.once('SIGINT', stop)
    })
    return 0
  }
  const print = (line: string) => console.log(line)
  if (cmd === 'demo') {
    const demo = await startDemo(serveConfig(env, rest, ['host', 'port']), print)
    await new Promise<void>((done) => {
      const stop = () => demo.stop().then(done)
      process.once('SIGTERM', stop)
      process.once('SIGINT', stop)
    })
    return 0
  }
  if (cmd === 'config') {
    configShow(serveConfig(env, rest), print)
    return 0
  }
  try {
    if (cmd === 'user') {
      const [sub, name, ...more] = rest
      if (sub === 'list') {
        const f = flags(rest.slice(1), DB_FLAGS)
        await userList(config(env, f), print)
        return 0
      }
      if (sub !== 'create' && sub !== 'reset-password') return usage(`unknown user command: ${sub ?? '(none)'}`)
      if (!name || name.startsWith('--')) return usage(`user ${sub} needs a user name`)
      if (sub === 'create') {
        const f = flags(more, [...DB_FLAGS, 'roles', 'display-name', 'password-stdin'], ['password-stdin'])
        await userCreate(config(env, f), name, { roles: f.roles, displayName: f['display-name'], passwordStdin: f['password-stdin'] === 'true' }, print)
      } else {
        const f = flags(more, [...DB_FLAGS, 'password-stdin'], ['password-stdin'])
        await userResetPassword(config(env, f), name, { passwordStdin: f['password-stdin'] === 'true' }, print)
      }
      return 0
    }
    if (cmd === 'vulns') {
      const [sub, ...more] = rest
      if (sub !== 'import') return usage(`unknown vulns command: ${sub ?? '(none)'}`)
      const files = more.filter((a, i) => !a.startsWith('--') && !(i > 0 && ['--data-dir', '--database-url'].includes(more[i - 1]!)))
      if (!files.length) return usage('vulns import needs at least one file or directory')
      await vulnsImport(config(env, flags(more.filter((a) => !files.includes(a)), DB_FLAGS)), files, print)
      return 0
    }
    if (cmd === 'migrate-to-postgres') {
      await migrateToPostgres(config(env, flags(rest, DB_FLAGS)), print)
      return 0
    }
    if (cmd === 'backup') {
      const [file, ...more] = rest
      if (!file || file.startsWith('--')) return usage('backup needs a target file')
      await backup(config(env, flags(more, DB_FLAGS)), file, print)
      return 0
    }
  } catch (e) {
    if (e instanceof CommandError) {
      console.error(`saltdeck ${cmd}: ${e.message}`)
      return 1
    }
    throw e
  }
  return usage(`unknown command: ${cmd}`)
}

/** The usage lines and description of one command (`saltdeck CMD --help`); null for an unknown command. */
export function commandHelp(cmd: string): string | null {
  const lines = HELP.split('\n')
  const uses = lines.filter((l) => l.startsWith(`  saltdeck ${cmd} `) || l === `  saltdeck ${cmd}`)
  if (!uses.length) return null
  const start = lines.findIndex((l) => l.startsWith(`${cmd} `) || l === cmd)
  const about: string[] = []
  for (let i = start; start >= 0 && i < lines.length && lines[i]!.trim(); i++) {
    if (i > start && /^\S/.test(lines[i]!) && !lines[i]!.startsWith(`${cmd} `)) break
    about.push(lines[i]!)
  }
  return `Usage:\n${uses.join('\n')}\n\n${about.join('\n')}`.trimEnd()
}

/** Prints a usage error with the help text; exit code 2. */
function usage(message: string): number {
  console.error(`${message}\n\n${HELP}`)
  return 2
}

/** Parses flags and refuses any not in `known`. */
function flags(args: string[], known: string[], booleans: string[] = []): Record<string, string> {
  const f = parseFlags(args, booleans)
  for (const k of Object.keys(f)) if (!known.includes(k)) throw new Error(`unknown option --${k}`)
  return f
}

/** The flags of `serve`: the options that have one (host, port, data-dir, database-url, the TLS pair). */
const SERVE_FLAGS = optionList().flatMap(([, o]) => (o.flag ? [o.flag] : []))

/** The configuration `serve` runs with: environment and defaults, overridden by its flags. */
function serveConfig(env: Record<string, string | undefined>, args: string[], known = SERVE_FLAGS): Config {
  const f = flags(args, known)
  const overrides: Partial<Config> = {
    host: f.host, dataDir: f['data-dir'], databaseUrl: databaseUrlFlag(f), port: f.port === undefined ? undefined : Number(f.port), tlsCert: f['tls-cert'], tlsKey: f['tls-key'],
  }
  if (overrides.port !== undefined && !(Number.isInteger(overrides.port) && overrides.port >= 0 && overrides.port < 65536)) throw new Error('--port must be 0..65535')
  return loadConfig(env, overrides)
}

/** Breaks a comma list into lines of at most `width` characters. */
function wrap(text: string, width: number): string {
  const lines = ['']
  for (const word of text.split(' ')) {
    if (lines.at(-1)!.length + word.length + 1 > width) lines.push('')
    lines[lines.length - 1] = lines.at(-1) ? `${lines.at(-1)} ${word}` : word
  }
  return lines.join('\n')
}

/** The flags of the commands that open the database: where it is. */
const DB_FLAGS = ['data-dir', 'database-url']

/** The configuration of a data-dir command. */
const config = (env: Record<string, string | undefined>, f: Record<string, string>) =>
  loadConfig(env, { dataDir: f['data-dir'], databaseUrl: databaseUrlFlag(f) })

/** --database-url, checked as SALTDECK_DATABASE_URL is. */
function databaseUrlFlag(f: Record<string, string>): string | undefined {
  const url = f['database-url']
  const problem = url === undefined ? null : OPTIONS.databaseUrl.check(url)
  if (problem) throw new Error(`--database-url ${problem}`)
  return url
}
