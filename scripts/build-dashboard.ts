/** Bundles the dashboard (src/dashboard) into src/dashboard/generated/, which the server embeds. */
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..', 'src', 'dashboard')
const out = join(root, 'generated')

/** Builds app.js and app.css; throws with Bun's messages when the bundle fails. */
export async function buildDashboard(): Promise<void> {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const result = await Bun.build({
    entrypoints: [join(root, 'main.tsx')],
    outdir: out,
    naming: 'app.[ext]',
    target: 'browser',
    format: 'esm',
    // Minifying the browser bundle is safe: the Elysia macro pitfall concerns the server build only.
    minify: true,
    sourcemap: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) throw new AggregateError(result.logs, 'dashboard build failed')
  await Bun.write(join(out, 'app.css'), Bun.file(join(root, 'style.css')))
}

if (import.meta.main) await buildDashboard()
