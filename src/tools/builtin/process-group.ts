/**
 * Runs a shell command as the leader of its own process group, so that a timeout or a cancel
 * can stop everything it started (children, grandchildren) and not just the shell.
 * POSIX only: Windows has no process groups.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { StringDecoder } from 'node:string_decoder'
import { findTagged, PROCESS_TAG_VARIABLE } from './process-scan.js'

export type RunOptions = {
  readonly shell: string
  readonly command: string
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly timeoutMs: number
  /** Between SIGTERM and SIGKILL, so processes may clean up. */
  readonly killGraceMs: number
  readonly signal: AbortSignal
  /** Output of stdout and stderr, decoded, in arrival order. */
  readonly onOutput: (text: string) => void
}

/** What stopping a command came to: whether everything it started is really gone. */
export type StopReport = {
  /** Processes found outside the group (they had left it with `setsid`) and killed. */
  readonly escaped: number
  /** Processes the command started that still ran after being killed. */
  readonly survivors: readonly number[]
  /**
   * Something kept the output open after the group was killed and could not be found (no
   * `/proc`, or it cleared its environment): it may still be running.
   */
  readonly isOutputHeld: boolean
}

export type RunOutcome =
  | { readonly kind: 'exited'; readonly exitCode: number | null; readonly signal: string | null }
  | ({ readonly kind: 'timed-out' } & StopReport)
  | ({ readonly kind: 'canceled' } & StopReport)
  | { readonly kind: 'failed-to-start'; readonly message: string }

/** How long the pipes may stay open after SIGKILL before a process outside the group is assumed. */
const AFTER_KILL_MS = 250
/** How long to wait for killed processes to be gone before reporting them as survivors. */
const SURVIVOR_WAIT_MS = 1000

/**
 * Runs `shell -c command` in a new process group. Resolves (never rejects) when its output
 * pipes close. On timeout or abort the group gets SIGTERM, then SIGKILL after the grace
 * period; once the pipes close after a stop, the group gets SIGKILL anyway, so nothing that
 * ignored SIGTERM survives the call. Processes that left the group are found by a tag in their
 * environment (Linux) and killed too; the outcome says whether anything may still run.
 */
export function runInProcessGroup(options: RunOptions): Promise<RunOutcome> {
  return new Promise((resolve) => {
    let stopReason: 'timed-out' | 'canceled' | undefined
    let killTimer: NodeJS.Timeout | undefined
    let startError: Error | undefined
    let isOutputHeld = false
    const escaped = new Set<number>()
    const tag = randomBytes(8).toString('hex')
    const child = spawn(options.shell, ['-c', options.command], {
      cwd: options.cwd,
      env: { ...options.env, [PROCESS_TAG_VARIABLE]: tag },
      // detached = setsid(): the shell leads a new process group whose id is its pid.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, signal)
      } catch {
        // ESRCH: every process of the group has already exited.
      }
    }
    /** Signals every tagged process; returns those still there, or undefined without /proc. */
    const signalTagged = async (signal: NodeJS.Signals) => {
      const tagged = await findTagged(tag)
      for (const found of tagged ?? []) {
        if (found.group !== child.pid) escaped.add(found.pid)
        try {
          process.kill(found.pid, signal)
        } catch {
          // Gone already.
        }
      }
      return tagged
    }
    const stop = (reason: 'timed-out' | 'canceled') => {
      if (stopReason !== undefined) return
      stopReason = reason
      killGroup('SIGTERM')
      void signalTagged('SIGTERM')
      killTimer = setTimeout(() => {
        killGroup('SIGKILL')
        void signalTagged('SIGKILL')
        killTimer = setTimeout(() => {
          // Still open after SIGKILL: a process outside the group holds the pipes. Stop
          // waiting on it; the report says whether it could be found.
          isOutputHeld = true
          child.stdout.destroy()
          child.stderr.destroy()
        }, AFTER_KILL_MS)
      }, options.killGraceMs)
    }
    const timeout = setTimeout(() => stop('timed-out'), options.timeoutMs)
    const onAbort = () => stop('canceled')
    options.signal.addEventListener('abort', onAbort, { once: true })
    for (const stream of [child.stdout, child.stderr]) {
      const decoder = new StringDecoder('utf8')
      stream.on('data', (chunk: Buffer) => {
        const text = decoder.write(chunk)
        if (text !== '') options.onOutput(text)
      })
      stream.on('end', () => {
        const rest = decoder.end()
        if (rest !== '') options.onOutput(rest)
      })
    }
    const finish = (outcome: RunOutcome) => {
      clearTimeout(timeout)
      clearTimeout(killTimer)
      options.signal.removeEventListener('abort', onAbort)
      resolve(outcome)
    }
    /** After a stop: kill what is left and see whether it is gone. */
    const report = async (reason: 'timed-out' | 'canceled') => {
      clearTimeout(killTimer)
      killGroup('SIGKILL')
      let left = await signalTagged('SIGKILL')
      const deadline = Date.now() + SURVIVOR_WAIT_MS
      while (left !== undefined && left.length > 0 && Date.now() < deadline) {
        await new Promise((wake) => setTimeout(wake, 20))
        left = await findTagged(tag)
      }
      const survivors = (left ?? []).map((found) => found.pid)
      const isVisible = left !== undefined
      finish({
        kind: reason,
        escaped: escaped.size,
        survivors,
        isOutputHeld:
          isOutputHeld && (!isVisible || (escaped.size === 0 && survivors.length === 0)),
      })
    }
    child.on('error', (error) => {
      startError = error
      // Without a pid the process never ran, and no 'close' with an exit status will follow.
      if (child.pid === undefined) finish({ kind: 'failed-to-start', message: error.message })
    })
    child.on('close', (exitCode, signal) => {
      if (child.pid === undefined) return
      if (stopReason !== undefined) {
        void report(stopReason)
        return
      }
      if (startError !== undefined && exitCode === null && signal === null) {
        finish({ kind: 'failed-to-start', message: startError.message })
        return
      }
      finish({ kind: 'exited', exitCode, signal })
    })
    if (options.signal.aborted) stop('canceled')
  })
}
