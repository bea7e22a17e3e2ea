/** Data hooks shared by the pages. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError } from './api'

/** State of one GET: data, error, loading, and reload(). */
export interface Loaded<T> {
  data: T | undefined
  error: ApiError | Error | undefined
  loading: boolean
  /** Loads again; resolves once that answer (or its error) is on screen, so a page can say "created" after the list shows it. */
  reload: () => Promise<void>
}

/**
 * Hook: GETs `path` whenever it changes (null = don't load), and again every `refreshMs` when given (the last answer
 * stays on screen meanwhile); a late answer for an old path is dropped.
 */
export function useGet<T>(path: string | null, refreshMs = 0): Loaded<T> {
  // `path` is the one the data and error answer: after a filter or page change the old rows are not shown under the
  // new caption (a table titled "Minions of salt source east" listing default's minions), the page says loading.
  const [state, setState] = useState<{ path: string | null; data?: T; error?: ApiError | Error; loading: boolean }>({ path, loading: path !== null })
  const [tick, setTick] = useState(0)
  const seq = useRef(0)
  // Callers of reload() waiting for the next answer; a superseded load leaves them for the one that replaced it.
  const waiting = useRef<(() => void)[]>([])
  useEffect(() => {
    const settle = () => waiting.current.splice(0).forEach((resolve) => resolve())
    if (path === null) return settle()
    const mine = ++seq.current
    setState((s) => ({ ...s, loading: true }))
    api<T>('GET', path).then(
      (data) => mine === seq.current && (setState({ path, data, loading: false }), settle()),
      (error) => mine === seq.current && (setState((s) => ({ path, data: s.path === path ? s.data : undefined, error, loading: false })), settle()),
    )
  }, [path, tick])
  const reload = useCallback(() => new Promise<void>((resolve) => {
    waiting.current.push(resolve)
    setTick((t) => t + 1)
  }), [])
  useEffect(() => {
    if (!refreshMs || path === null) return
    const t = setInterval(() => void reload(), refreshMs)
    return () => clearInterval(t)
  }, [refreshMs, path, reload])
  const current = state.path === path
  return { data: current ? state.data : undefined, error: current ? state.error : undefined, loading: current ? state.loading : path !== null, reload }
}

/** Hook: runs an action, tracking busy and the last error; resolves true on success. */
export function useAction() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | Error | undefined>()
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true)
    setError(undefined)
    try {
      await fn()
      return true
    } catch (e) {
      setError(e as Error)
      return false
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, run, clear: () => setError(undefined) }
}

/** Hook: a value that follows `value` after `ms` of quiet (for search boxes). */
export function useDebounced<T>(value: T, ms = 250): T {
  const [v, setV] = useState(value)
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms)
    return () => clearTimeout(t)
  }, [value, ms])
  return v
}
