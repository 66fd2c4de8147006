/**
 * Runs a shell command as the leader of its own process group, so that a timeout or a cancel
 * can stop everything it started (children, grandchildren) and not just the shell.
 * POSIX only: Windows has no process groups.
 */
import { spawn } from 'node:child_process'
import { StringDecoder } from 'node:string_decoder'

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

export type RunOutcome =
  | { readonly kind: 'exited'; readonly exitCode: number | null; readonly signal: string | null }
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'canceled' }
  | { readonly kind: 'failed-to-start'; readonly message: string }

/**
 * Runs `shell -c command` in a new process group. Resolves (never rejects) when its output
 * pipes close. On timeout or abort the group gets SIGTERM, then SIGKILL after the grace
 * period; once the pipes close after a stop, the group gets SIGKILL anyway, so nothing that
 * ignored SIGTERM survives the call.
 */
export function runInProcessGroup(options: RunOptions): Promise<RunOutcome> {
  return new Promise((resolve) => {
    let stopReason: 'timed-out' | 'canceled' | undefined
    let killTimer: NodeJS.Timeout | undefined
    let startError: Error | undefined
    const child = spawn(options.shell, ['-c', options.command], {
      cwd: options.cwd,
      env: options.env,
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
    const stop = (reason: 'timed-out' | 'canceled') => {
      if (stopReason !== undefined) return
      stopReason = reason
      killGroup('SIGTERM')
      killTimer = setTimeout(() => {
        killGroup('SIGKILL')
        // A process that left the group (setsid) may still hold the pipes; stop waiting on it.
        child.stdout.destroy()
        child.stderr.destroy()
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
    child.on('error', (error) => {
      startError = error
      // Without a pid the process never ran, and no 'close' with an exit status will follow.
      if (child.pid === undefined) finish({ kind: 'failed-to-start', message: error.message })
    })
    child.on('close', (exitCode, signal) => {
      if (child.pid === undefined) return
      if (stopReason !== undefined) {
        killGroup('SIGKILL')
        finish({ kind: stopReason })
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
