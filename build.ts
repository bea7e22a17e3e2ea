/** Builds the release executable dist/saltdeck: the dashboard bundle first (embedded, see src/features/dashboard/assets.ts), then `bun build --compile`. */
import { $ } from 'bun'
import pkg from './package.json'
import { bundleDashboard } from './src/features/dashboard/bundle'

const version = process.env.SALTDECK_VERSION ?? pkg.version
const outfile = process.argv[2] ?? 'dist/saltdeck'

// embedded.ts imports this file; SALTDECK_EMBEDDED_DASHBOARD makes the executable serve it instead of bundling at run time.
await Bun.write('src/dashboard/generated/app.js', await bundleDashboard())
// Unminified on purpose: minified builds broke Elysia macros in the binary (engineering guide). No .env or
// bunfig.toml autoload: the operator's working directory must not change how the binary behaves.
// The inventory reader, search indexer and event stream workers are entrypoints too: a compiled binary only holds worker files named here.
await $`bun build src/main.ts src/features/inventory/read-worker.ts src/features/activity/search-worker.ts src/salt/event-worker.ts --compile --outfile ${outfile} --no-compile-autoload-dotenv --no-compile-autoload-bunfig --define SALTDECK_VERSION=${JSON.stringify(version)} --define SALTDECK_EMBEDDED_DASHBOARD=true`
console.log(`built ${outfile} (saltdeck ${version})`)
