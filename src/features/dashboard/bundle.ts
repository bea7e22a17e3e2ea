/** Bundles the dashboard's script (src/dashboard/main.tsx and what it imports) for the browser, in memory. */
import { join } from 'node:path'

const entry = join(import.meta.dir, '..', '..', 'dashboard', 'main.tsx')

/** The bundle's bytes; throws with Bun's messages when it fails. */
export async function bundleDashboard(): Promise<Uint8Array<ArrayBuffer>> {
  const result = await Bun.build({
    entrypoints: [entry],
    target: 'browser',
    format: 'esm',
    // Minifying the browser bundle is safe: the Elysia macro pitfall concerns the server build only.
    minify: true,
    sourcemap: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const js = result.outputs.find((o) => o.kind === 'entry-point')
  if (!result.success || !js) throw new AggregateError(result.logs, 'dashboard build failed')
  return new Uint8Array(await js.arrayBuffer())
}
