/**
 * The inventory refresh's reading thread: for each batch the refresh asks for, it calls grains.get os_family and
 * pkg.list_pkgs on salt-api, scans the package answer chunk by chunk while it streams in, and posts the minions' key
 * lists back (with the catalog entries added since the previous batch). It runs beside the refresh's writer on the
 * main thread, so reading answers and storing sets use both cores. Requests are half a batch each: while one answer is
 * read, the next request runs on salt's side, so at most one batch's returns are held here.
 */
import { SaltClient, type ClientOptions, type SaltCreds } from '../../salt/client'
import { SaltRejected, SaltUnavailable, errorText } from '../../salt/errors'
import { PackageCatalog } from './catalog'
import { LIST_PKGS_KWARG, PkgAnswerScanner } from './pkg-scan'

/** Messages from the refresh. */
export type ToWorker = { type: 'init'; creds: SaltCreds; tuning: Omit<ClientOptions, 'sleep'> } | { type: 'batch'; seq: number; ids: string[]; jids: [string, string] }

/** Messages to the refresh. `keys` are the catalog entries (name, version, arch) added since the previous batch. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'batch'; seq: number; fams: (string | null)[]; sets: (Int32Array | null)[]; keys: [string, string, string][] }
  | { type: 'error'; seq: number; kind: 'unavailable' | 'rejected' | null; status: number | null; detail: string }

declare const self: Worker

let client: SaltClient | null = null
const cat = new PackageCatalog()
let reported = 0
const queue: { seq: number; ids: string[]; jids: [string, string] }[] = []
let busy = false

self.onmessage = (ev: MessageEvent<ToWorker>) => {
  const m = ev.data
  if (m.type === 'init') {
    client = new SaltClient(() => m.creds, m.tuning)
    self.postMessage({ type: 'ready' } satisfies FromWorker)
    return
  }
  queue.push(m)
  if (!busy) void pump()
}

async function pump() {
  busy = true
  let inflight = queue.length ? ask(queue.shift()!) : null
  while (inflight) {
    const cur = inflight
    inflight = null
    try {
      const res = await cur.answer
      // Salt has answered this request: the next one goes out now and runs on salt's side while this answer is read.
      if (queue.length) inflight = ask(queue.shift()!)
      self.postMessage(...(await readAnswer(cur, res)))
    } catch (e) {
      // Salt errors cross the thread as their kind and text; the reader throws them again as the same class.
      const kind = e instanceof SaltUnavailable ? 'unavailable' : e instanceof SaltRejected ? 'rejected' : null
      const detail = e instanceof SaltUnavailable || e instanceof SaltRejected ? e.reason : errorText(e)
      self.postMessage({ type: 'error', seq: cur.seq, kind, status: e instanceof SaltRejected ? e.httpStatus : null, detail } satisfies FromWorker)
    }
    if (!inflight && queue.length) inflight = ask(queue.shift()!)
  }
  busy = false
}

/** Sends one request's two salt calls. */
function ask({ seq, ids, jids }: { seq: number; ids: string[]; jids: [string, string] }) {
  // The jids were noted as Saltdeck's own jobs by the refresh before it sent the batch.
  const fams = client!.local(ids, 'grains.get', { arg: ['os_family'], tgt_type: 'list', jid: jids[0] })
  const answer = client!.localAnswer(ids, 'pkg.list_pkgs', { kwarg: LIST_PKGS_KWARG, tgt_type: 'list', jid: jids[1] })
  // Awaited later; a failure must not count as unhandled meanwhile.
  fams.catch(() => {})
  answer.catch(() => {})
  return { seq, ids, fams, answer }
}

/** Scans one answer as it streams in; returns the message and the buffers it hands over. */
async function readAnswer(req: ReturnType<typeof ask>, res: Response): Promise<[FromWorker, ArrayBuffer[]]> {
  const { seq, ids } = req
  const scanner = new PkgAnswerScanner(cat)
  let sets
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) scanner.push(chunk)
    sets = scanner.end()
  } catch (e) {
    if (e instanceof SyntaxError) throw new SaltRejected('unreadable answer', res.status)
    throw e
  }
  const f = (await req.fams) ?? {}
  const keys: [string, string, string][] = []
  for (; reported < cat.keys.size; reported++) keys.push([cat.nameOf[cat.keyName[reported]!]!, cat.versionOf[reported]!, cat.archOf[reported]!])
  const out = ids.map((m) => sets.get(m) ?? null)
  const msg: FromWorker = { type: 'batch', seq, fams: ids.map((m) => (typeof f[m] === 'string' ? (f[m] as string) : null)), sets: out, keys }
  return [msg, out.filter((s) => s !== null).map((s) => s.buffer as ArrayBuffer)]
}
