/** Whether process `pid` is alive: signal 0 checks without sending anything (EPERM: alive, another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
