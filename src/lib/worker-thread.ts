/**
 * Starting and stopping the service's long-lived worker threads (search indexer, event stream reader). Each speaks the
 * same small protocol: the service posts a start message and waits for `ready`; at the end it posts `stop` and waits
 * for `stopped`, by which time every message the worker sent before has been delivered.
 */
import type { Logger } from './log'

type Reply = { type: string }

/**
 * The URL of a worker entry at `fromSrc` (a path under src/), asked from a module whose URL is `meta`. From source the
 * entry sits beside the asking module; in the compiled binary every module is in one bundle whose root is src/, and
 * build.ts names each worker as an entrypoint there.
 */
export function workerUrl(meta: string, fromSrc: string): string {
  return new URL(meta.includes('/$bunfs/') ? `./${fromSrc}` : `./${fromSrc.split('/').pop()}`, meta).href
}

/** Starts a worker and waits (up to 10 s) for its `ready`; null, with a warning, when it does not start. */
export async function startWorker<M extends Reply>(url: string, start: unknown, onMessage: (m: M) => void, log: Logger, what: string): Promise<Worker | null> {
  let w: Worker
  try {
    w = new Worker(url)
  } catch (e) {
    log.warn(`${what} worker did not start; running on the main thread`, { error: (e as Error).message })
    return null
  }
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000)
    w.onmessage = (ev: MessageEvent<M>) => (ev.data.type === 'ready' ? (clearTimeout(timer), resolve(true)) : onMessage(ev.data))
    w.onerror = (e) => (clearTimeout(timer), resolve(false), log.warn(`${what} worker failed`, { error: e.message }))
    w.postMessage(start)
  })
  if (ready) return w
  w.terminate()
  log.warn(`${what} worker did not start; running on the main thread`)
  return null
}

/** Asks a worker to stop, waits (up to 5 s) for its `stopped`, then ends the thread. */
export async function stopWorker(w: Worker): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 5000)
    w.addEventListener('message', (ev: MessageEvent<Reply>) => ev.data.type === 'stopped' && (clearTimeout(timer), resolve()))
    w.postMessage({ type: 'stop' })
  })
  w.terminate()
}
