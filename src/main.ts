/** Entry point: the one place that touches argv, env and the process exit code. */
import { runCli } from './cli'

try {
  process.exit(await runCli(process.argv.slice(2)))
} catch (e) {
  console.error(`saltdeck: ${(e as Error).message}`)
  process.exit(2)
}
