/** Entry point: the one place that touches argv, env and the process exit code. */
import { runCli } from './cli'

// package.json engines.bun: older Bun delivered PostgreSQL rows to the wrong query (bench/RESULTS.md, "PostgreSQL driver").
if (Bun.semver.order(Bun.version, '1.4.5') < 0) {
  console.error(`saltdeck: Bun ${Bun.version} is too old; Saltdeck needs Bun 1.4.5 or newer`)
  process.exit(2)
}

try {
  process.exit(await runCli(process.argv.slice(2)))
} catch (e) {
  console.error(`saltdeck: ${(e as Error).message}`)
  process.exit(2)
}
