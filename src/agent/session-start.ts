/**
 * The `session-start` listeners (docs/spec.md §6.6), run once per agent before its first turn.
 * While they run no turn can open, so a context they inject lands at once.
 */
import { type HookRegistry, runSerial } from './hooks.js'

export type SessionStart = {
  /** Resolves when every listener is done (a listener that throws is reported, not fatal). */
  readonly done: Promise<void>
  /** Whether listeners are running now. */
  readonly isRunning: boolean
}

export function startSession(options: {
  readonly hooks: HookRegistry
  readonly reason: 'new' | 'resume' | 'fork'
  readonly signal: AbortSignal
  readonly reportError: (source: string, error: unknown) => void
}): SessionStart {
  let isRunning = false
  const done = (async () => {
    // One microtask, so listeners registered with agent.on() right after createAgent run too.
    await Promise.resolve()
    const listeners = options.hooks.list('session-start')
    if (listeners.length === 0) return
    isRunning = true
    try {
      await runSerial(listeners, { reason: options.reason, signal: options.signal }, (error) =>
        options.reportError('hook:session-start', error),
      )
    } finally {
      isRunning = false
    }
  })()
  return {
    done,
    get isRunning() {
      return isRunning
    },
  }
}
