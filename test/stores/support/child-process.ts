/**
 * Running store-child.ts in a real child process and reading its JSON-lines reports. Tests
 * wait on these promises (a report, the exit), never on timers.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach } from 'vitest'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = resolve(HERE, '../../..')

export type Child = {
  readonly process: ChildProcess
  /** The next JSON report on stdout. Rejects if the child exits first. */
  next(): Promise<Record<string, unknown>>
  /** SIGKILLs the child and resolves once it has exited (and been reaped). */
  kill(): Promise<void>
}

const running = new Set<ChildProcess>()
afterEach(async () => {
  for (const child of running) await killChild(child)
})

async function killChild(child: ChildProcess): Promise<void> {
  running.delete(child)
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
}

/** Starts a child running `script` (a .ts file, relative to test/stores/support) with `args`. */
export function startChild(
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  running.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const reports: Record<string, unknown>[] = []
  const waiting: {
    resolve: (report: Record<string, unknown>) => void
    reject: (error: Error) => void
  }[] = []
  let buffered = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      const report = JSON.parse(line) as Record<string, unknown>
      const waiter = waiting.shift()
      if (waiter) waiter.resolve(report)
      else reports.push(report)
    }
  })
  child.on('exit', (code, signal) => {
    for (const waiter of waiting.splice(0))
      waiter.reject(
        new Error(`child exited (${code ?? signal}) before reporting; stderr:\n${stderr}`),
      )
  })
  return {
    process: child,
    next() {
      const report = reports.shift()
      if (report) return Promise.resolve(report)
      if (child.exitCode !== null || child.signalCode !== null)
        return Promise.reject(new Error(`child already exited; stderr:\n${stderr}`))
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
    },
    kill: () => killChild(child),
  }
}
