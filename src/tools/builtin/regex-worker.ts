/**
 * Runs a model-supplied JavaScript regular expression where it cannot block rudder: in a
 * worker thread that a deadline or a cancel terminates. V8's engine backtracks, so a pattern
 * like `(a+)+$` on a long line runs for minutes inside one `RegExp.test` call that no signal
 * can interrupt; terminating the worker can (docs/decisions/0040).
 */
import { Worker } from 'node:worker_threads'

/** A matching line: its number (from 1) and text. */
export type LineMatch = { readonly line: number; readonly text: string }

/** What one `match` call came to. */
export type WorkerMatchOutcome =
  | { readonly ok: true; readonly matches: readonly LineMatch[] }
  | {
      readonly ok: false
      readonly reason: 'deadline' | 'canceled' | 'failed'
      readonly message: string
    }

/** A regex compiled once in a worker, matched against texts one at a time. */
export type RegexWorker = {
  /** The lines of `text` that match, at most `limit` of them. Never rejects. */
  match(text: string, limit: number): Promise<WorkerMatchOutcome>
  /** Terminates the worker. Idempotent. */
  close(): Promise<void>
}

export type RegexWorkerOptions = {
  /** A valid `RegExp` source (validate it first: the worker reports a bad one as `failed`). */
  readonly source: string
  readonly flags: string
  /** Total time the worker may run once started; past it every call ends `deadline`. */
  readonly deadlineMs: number
  readonly signal: AbortSignal
}

// Plain CommonJS, evaluated by the worker: no import that a bundler or a TypeScript loader
// would need to resolve. Lines are split as the JavaScript search always has (LF or CRLF).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const regex = new RegExp(workerData.source, workerData.flags)
parentPort.on('message', ({ text, limit }) => {
  const lines = text.split(/\\r?\\n/)
  const found = []
  for (let index = 0; index < lines.length && found.length < limit; index++) {
    const line = lines[index]
    if (index === lines.length - 1 && line === '') break
    if (regex.test(line)) found.push({ line: index + 1, text: line })
  }
  parentPort.postMessage(found)
})
`

/** Starts a worker for one search. The caller must `close()` it (in a `finally`). */
export function startRegexWorker(options: RegexWorkerOptions): RegexWorker {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // Not the parent's flags: `--input-type=module` would make this CommonJS source ESM.
    execArgv: [],
    workerData: { source: options.source, flags: options.flags },
  })
  let stopped: WorkerMatchOutcome | undefined
  let pending: ((outcome: WorkerMatchOutcome) => void) | undefined
  const stop = (outcome: Extract<WorkerMatchOutcome, { ok: false }>) => {
    stopped ??= outcome
    void worker.terminate()
    pending?.(stopped)
    pending = undefined
  }
  const seconds = Math.round(options.deadlineMs / 100) / 10
  let deadline: NodeJS.Timeout | undefined
  // The clock starts once the worker runs: a slow start on a loaded machine is not the regex's.
  worker.once('online', () => {
    if (stopped !== undefined) return
    deadline = setTimeout(
      () =>
        stop({
          ok: false,
          reason: 'deadline',
          message: `the search was stopped after ${seconds}s`,
        }),
      options.deadlineMs,
    )
  })
  const onAbort = () => stop({ ok: false, reason: 'canceled', message: 'the search was canceled' })
  options.signal.addEventListener('abort', onAbort, { once: true })
  if (options.signal.aborted) onAbort()
  worker.on('message', (matches: LineMatch[]) => {
    const resolve = pending
    pending = undefined
    resolve?.({ ok: true, matches })
  })
  worker.on('error', (error) =>
    stop({ ok: false, reason: 'failed', message: `the regex worker failed: ${error.message}` }),
  )
  worker.on('exit', () =>
    stop({ ok: false, reason: 'failed', message: 'the regex worker stopped unexpectedly' }),
  )
  return {
    match(text, limit) {
      if (stopped !== undefined) return Promise.resolve(stopped)
      return new Promise((resolve) => {
        pending = resolve
        worker.postMessage({ text, limit })
      })
    },
    async close() {
      clearTimeout(deadline)
      stopped ??= { ok: false, reason: 'canceled', message: 'the search was closed' }
      options.signal.removeEventListener('abort', onAbort)
      await worker.terminate()
    },
  }
}
