/**
 * The executable's copy of the dashboard bundle. build.ts writes src/dashboard/generated/app.js, then compiles with
 * SALTDECK_EMBEDDED_DASHBOARD defined, so only the executable loads this module (assets.ts); from source the file
 * does not exist (a fresh clone) or may be stale, and the dashboard is bundled in memory instead.
 */
// @ts-ignore -- the file exists only while build.ts runs (git-ignored); a `type: 'file'` import is its path.
import appJs from '../../dashboard/generated/app.js' with { type: 'file' }

export default appJs as unknown as string
