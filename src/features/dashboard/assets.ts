/** The dashboard's files, embedded in the executable through explicit file imports (see engineering guide). */
import indexHtml from '../../dashboard/index.html' with { type: 'file' }
import appJs from '../../dashboard/generated/app.js' with { type: 'file' }
import appCss from '../../dashboard/generated/app.css' with { type: 'file' }

// With `type: 'file'` each import is the path of the embedded file; TypeScript types .html and .js imports as
// modules, hence the casts.
const path = (p: unknown) => p as string

/** One served file: its URL path, embedded path and content type. */
export interface Asset {
  url: string
  file: string
  type: string
}

/** Every file the dashboard needs, by URL. */
export const ASSETS: Asset[] = [
  { url: '/', file: path(indexHtml), type: 'text/html; charset=utf-8' },
  { url: '/assets/app.js', file: path(appJs), type: 'text/javascript; charset=utf-8' },
  { url: '/assets/app.css', file: appCss, type: 'text/css; charset=utf-8' },
]
