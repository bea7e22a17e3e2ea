/**
 * The dashboard's files, embedded in the executable through explicit file imports (see engineering guide).
 * index.html and style.css are served as they are. app.js is the bundle of src/dashboard/main.tsx: in the executable
 * the one build.ts made and embedded (embedded.ts); from source (bun run, bun test) bundled in memory when first
 * asked for, so a fresh clone serves without a generate step.
 */
import indexHtml from '../../dashboard/index.html' with { type: 'file' }
import styleCss from '../../dashboard/style.css' with { type: 'file' }

/** Defined (true) by build.ts for the executable, whose dashboard bundle is embedded. */
declare const SALTDECK_EMBEDDED_DASHBOARD: boolean | undefined

/** One served file: its URL path, content type and how to read its bytes. */
export interface Asset {
  url: string
  type: string
  bytes: () => Promise<Uint8Array<ArrayBuffer>>
}

// With `type: 'file'` each import is the path of the embedded file; TypeScript types .html imports as modules.
const file = (path: unknown) => () => Bun.file(path as string).bytes()

/** app.js: the embedded bundle in the executable, else a fresh one built from src/dashboard. */
async function appJs(): Promise<Uint8Array<ArrayBuffer>> {
  if (typeof SALTDECK_EMBEDDED_DASHBOARD === 'boolean') return Bun.file((await import('./embedded')).default).bytes()
  return (await import('./bundle')).bundleDashboard()
}

/** Every file the dashboard needs, by URL. */
export const ASSETS: Asset[] = [
  { url: '/', type: 'text/html; charset=utf-8', bytes: file(indexHtml) },
  { url: '/assets/app.js', type: 'text/javascript; charset=utf-8', bytes: appJs },
  { url: '/assets/app.css', type: 'text/css; charset=utf-8', bytes: file(styleCss) },
]
