/**
 * A real OpenLDAP server for the LDAP sign-in tests: Debian's slapd with its own slapd.conf and database in a temp
 * directory, loaded from test/fixtures/ldap/directory.ldif, listening on free loopback ports (ldap:// with StartTLS
 * and ldaps://, under a self-signed certificate made for 127.0.0.1). No slapd is a failure, never a skip.
 */
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { until } from './until'

const SLAPD = '/usr/sbin/slapd'
const SLAPADD = '/usr/sbin/slapadd'
const FIXTURE = resolve(import.meta.dir, '../fixtures/ldap/directory.ldif')

/** The directory's root: the test changes entries as this account. */
export const ROOT_DN = 'cn=root,dc=example,dc=org'
export const ROOT_PW = 'root-pass-1'

/** A free loopback port (asked of the kernel, then released for slapd). */
function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed (${r.exitCode}): ${r.stderr.toString().slice(0, 2000)}`)
}

/** A running slapd. */
export interface Slapd {
  /** ldap://127.0.0.1:port */
  url: string
  /** ldaps://127.0.0.1:port */
  ldapsUrl: string
  /** The PEM of the server's self-signed certificate (a CA that trusts it). */
  cert: string
  stop(): Promise<void>
  /** Starts it again on the same ports and data (after stop). */
  start(): Promise<void>
  /** Removes the temp directory. */
  cleanup(): Promise<void>
}

/** Starts a slapd of its own; fails when Debian's slapd is not installed (apt-get install slapd ldap-utils). */
export async function startSlapd(): Promise<Slapd> {
  if (!existsSync(SLAPD) || !existsSync(SLAPADD)) throw new Error(`${SLAPD} not found: install Debian's slapd and ldap-utils (apt-get install -y slapd ldap-utils); .ci/run does`)
  const dir = mkdtempSync(join(tmpdir(), 'saltdeck-slapd-'))
  mkdirSync(join(dir, 'db'))
  run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')])
  const conf = join(dir, 'slapd.conf')
  writeFileSync(conf, [
    'include /etc/ldap/schema/core.schema',
    'include /etc/ldap/schema/cosine.schema',
    'include /etc/ldap/schema/inetorgperson.schema',
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    `TLSCertificateFile ${join(dir, 'cert.pem')}`,
    `TLSCertificateKeyFile ${join(dir, 'key.pem')}`,
    'database mdb',
    'maxsize 16777216',
    'suffix "dc=example,dc=org"',
    `rootdn "${ROOT_DN}"`,
    `rootpw ${ROOT_PW}`,
    `directory ${join(dir, 'db')}`,
    // Passwords are for binding only; any bound account reads the rest; anonymous reads nothing.
    'access to attrs=userPassword by anonymous auth by * none',
    'access to * by users read by * none',
    '',
  ].join('\n'))
  run([SLAPADD, '-f', conf, '-l', FIXTURE])
  const port = freePort()
  const tlsPort = freePort()
  const url = `ldap://127.0.0.1:${port}`
  const ldapsUrl = `ldaps://127.0.0.1:${tlsPort}`
  let proc: ReturnType<typeof Bun.spawn> | null = null
  let stderr = ''
  const start = async () => {
    // -d keeps slapd in the foreground (so it is ours to stop); 'none' logs nothing but errors.
    proc = Bun.spawn([SLAPD, '-f', conf, '-h', `${url}/ ${ldapsUrl}/`, '-d', 'none'], { stdout: 'ignore', stderr: 'pipe' })
    void new Response(proc.stderr as ReadableStream).text().then((t) => (stderr = t))
    await until(async () => {
      if (proc?.exitCode !== null) throw new Error(`slapd exited (${proc?.exitCode}): ${stderr.slice(0, 2000)}`)
      try {
        const s = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
        s.end()
        return true
      } catch {
        return false
      }
    }, 'slapd listening', { ms: 20_000, every: 50 })
  }
  const stop = async () => {
    if (!proc) return
    proc.kill('SIGTERM')
    await proc.exited
    proc = null
  }
  await start()
  return { url, ldapsUrl, cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), stop, start, cleanup: async () => { await stop(); rmSync(dir, { recursive: true, force: true }) } }
}
