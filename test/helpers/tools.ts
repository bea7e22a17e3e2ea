/**
 * Whether a tool a suite needs is missing (a command on PATH or a path to an executable). On a developer machine the
 * caller skips and this says why; under CI=true (.ci/run installs every tool) a missing tool fails the run instead.
 */
export function missingTool(tool: string, install: string, skipped: string): boolean {
  if (Bun.which(tool)) return false
  if (process.env.CI === 'true') throw new Error(`${tool} is missing (${install}); CI=true makes that a failure`)
  console.log(`${skipped} skipped: ${tool} is missing (${install})`)
  return true
}
