/**
 * Runs one hook command: `bash -c <command>` (or the executable with `args`, no shell) in the
 * session's directory, as the leader of its own process group, with the event as one line of
 * compact JSON plus a newline on stdin. Stdin is a file, not a socket: bash takes a socket on
 * stdin for a remote login and sources `~/.bashrc`, which hooks must not depend on. A timeout or an abort kills the whole group (SIGTERM,
 * then SIGKILL), so nothing the hook started outlives it. POSIX only.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { closeSync, openSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export type HookProcessOptions = {
  readonly command: string
  /** With `args`, `command` is an executable started directly, without a shell. */
  readonly args?: readonly string[]
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Written to stdin, followed by a newline. */
  readonly input: string
  readonly timeoutMs: number
  readonly signal: AbortSignal
  /** Between SIGTERM and SIGKILL. Default 500 ms. */
  readonly killGraceMs?: number
}

export type HookProcessResult = {
  readonly outcome: 'exited' | 'timed-out' | 'canceled' | 'failed-to-start'
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly durationMs: number
  /** For `failed-to-start`: why. */
  readonly message?: string
}

/** Output kept per stream; hooks answer with a line or a JSON object, not megabytes. */
const MAX_OUTPUT = 1_000_000

/** Resolves (never rejects) when the hook's pipes close, or after it was stopped. */
export function runHookProcess(options: HookProcessOptions): Promise<HookProcessResult> {
  const started = Date.now()
  if (options.signal.aborted)
    return Promise.resolve(result('canceled', null, null, '', '', started))
  return new Promise((settle) => {
    let isSettled = false
    let stopReason: 'timed-out' | 'canceled' | undefined
    let timer: NodeJS.Timeout | undefined
    let killTimer: NodeJS.Timeout | undefined
    const onAbort = () => stop('canceled')
    const resolve = (value: HookProcessResult) => {
      if (isSettled) return
      isSettled = true
      clearTimeout(timer)
      options.signal.removeEventListener('abort', onAbort)
      settle(value)
    }
    let stdout = ''
    let stderr = ''
    const env: NodeJS.ProcessEnv = {}
    for (const [name, value] of Object.entries(options.env))
      if (value !== undefined) env[name] = value
    const stdin = inputFile(options.input)
    const spawnOptions = {
      cwd: options.cwd,
      env,
      // detached = setsid(): the hook leads a new process group whose id is its pid.
      detached: true,
      stdio: [stdin, 'pipe', 'pipe'] as ['pipe' | number, 'pipe', 'pipe'],
    }
    const child = options.args
      ? spawn(options.command, [...options.args], spawnOptions)
      : spawn('bash', ['-c', options.command], spawnOptions)
    // The child has its own copy of the descriptor.
    closeSync(stdin)
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
      killTimer = setTimeout(() => killGroup('SIGKILL'), options.killGraceMs ?? 500)
    }
    timer = setTimeout(() => stop('timed-out'), options.timeoutMs)
    options.signal.addEventListener('abort', onAbort, { once: true })

    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < MAX_OUTPUT) stderr += chunk
    })

    child.on('error', (error) => {
      // Only a spawn failure leaves no pid; other errors come with a 'close' of their own.
      if (child.pid === undefined)
        resolve({
          ...result('failed-to-start', null, null, stdout, stderr, started),
          message: error.message,
        })
    })
    child.on('close', (code, signal) => {
      if (stopReason !== undefined) {
        // What ignored SIGTERM, or left the pipes, goes now rather than after the grace period.
        clearTimeout(killTimer)
        killGroup('SIGKILL')
      }
      resolve(result(stopReason ?? 'exited', code, signal, stdout, stderr, started))
    })
  })
}

/** A read descriptor of a private, already unlinked file holding `input` and a newline. */
function inputFile(input: string): number {
  const path = join(tmpdir(), `rudder-hook-input-${randomUUID()}.json`)
  writeFileSync(path, `${input}\n`, { mode: 0o600, flag: 'wx' })
  try {
    return openSync(path, 'r')
  } finally {
    unlinkSync(path)
  }
}

function result(
  outcome: HookProcessResult['outcome'],
  exitCode: number | null,
  signal: string | null,
  stdout: string,
  stderr: string,
  started: number,
): HookProcessResult {
  return { outcome, exitCode, signal, stdout, stderr, durationMs: Date.now() - started }
}
