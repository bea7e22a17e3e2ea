/** Builds the release executable dist/saltdeck: the dashboard bundle first, then `bun build --compile`. */
import { $ } from 'bun'
import pkg from './package.json'
import { buildDashboard } from './scripts/build-dashboard'

const version = process.env.SALTDECK_VERSION ?? pkg.version
const outfile = process.argv[2] ?? 'dist/saltdeck'

await buildDashboard()
// Unminified on purpose: minified builds broke Elysia macros in the binary (engineering guide). No .env or
// bunfig.toml autoload: the operator's working directory must not change how the binary behaves.
// The inventory reader, search indexer and event stream workers are entrypoints too: a compiled binary only holds worker files named here.
await $`bun build src/main.ts src/features/inventory/read-worker.ts src/features/activity/search-worker.ts src/salt/event-worker.ts --compile --outfile ${outfile} --no-compile-autoload-dotenv --no-compile-autoload-bunfig --define SALTDECK_VERSION=${JSON.stringify(version)}`
console.log(`built ${outfile} (saltdeck ${version})`)
