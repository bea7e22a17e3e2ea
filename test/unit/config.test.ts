// The option table: SALTDECK_PUBLIC_URL's check, and `saltdeck config` printing the effective values with secrets masked.
import { expect, spyOn, test } from 'bun:test'
import { loadConfig, SECRET_MASK } from '../../src/config'
import { runCli } from '../../src/cli'

test('SALTDECK_PUBLIC_URL: unset is null, an absolute http(s) URL is kept, anything else is refused', () => {
  expect(loadConfig({}).publicUrl).toBeNull()
  expect(loadConfig({ SALTDECK_PUBLIC_URL: 'https://saltdeck.example.com' }).publicUrl).toBe('https://saltdeck.example.com')
  expect(loadConfig({ SALTDECK_PUBLIC_URL: 'http://10.0.0.5:8080/' }).publicUrl).toBe('http://10.0.0.5:8080/')
  for (const bad of ['saltdeck.example.com', '/saltdeck', 'ftp://saltdeck.example.com', 'https://'])
    expect(() => loadConfig({ SALTDECK_PUBLIC_URL: bad })).toThrow(`SALTDECK_PUBLIC_URL must be an absolute http or https URL, got ${JSON.stringify(bad)}`)
})

/** Runs a command with the environment `env` and returns what it printed. */
async function printed(argv: string[], env: Record<string, string> = {}): Promise<string[]> {
  const log = spyOn(console, 'log').mockImplementation(() => {})
  try {
    expect(await runCli(argv, env)).toBe(0)
    return log.mock.calls.map(([line]) => String(line))
  } finally {
    log.mockRestore()
  }
}

test('saltdeck config masks secrets and shows the rest, flags over environment over defaults', async () => {
  const out = await printed(['config', '--host', '0.0.0.0'], { SALTDECK_SALT_PASSWORD: 'hunter2-hunter2', SALTDECK_SALT_USERNAME: 'saltdeck', SALTDECK_PORT: '9000' })
  const lines = new Map(out.map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]))
  expect(lines.get('SALTDECK_SALT_PASSWORD')).toBe(SECRET_MASK)
  expect(lines.get('SALTDECK_ADMIN_PASSWORD')).toBe('')
  expect(lines.get('SALTDECK_SALT_USERNAME')).toBe('saltdeck')
  expect(lines.get('SALTDECK_PORT')).toBe('9000')
  expect(lines.get('SALTDECK_HOST')).toBe('0.0.0.0')
  expect(lines.get('SALTDECK_DATA_DIR')).toBe('./data')
  expect(out.join('\n')).not.toContain('hunter2')
})

test('saltdeck help lists the config command and every variable', async () => {
  const help = (await printed(['help'])).join('\n')
  expect(help).toContain('saltdeck config')
  expect(help).toContain('SALTDECK_PUBLIC_URL')
})
