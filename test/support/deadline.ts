/**
 * Runs a risky operation in a child process with a deadline, so that a regression that blocks
 * the event loop (a backtracking regex, a quadratic walk) fails one test quickly instead of
 * hanging the whole suite: vitest cannot time out a test whose thread never yields.
 */
import { spawn } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

export type DeadlineRun = {
  /** True when the child had to be killed at the deadline. */
  readonly isTimedOut: boolean
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `code` (an ES module; `import … from '@src/…'` names files under src/) with tsx in a
 * child process, killed with SIGKILL after `deadlineMs`. The deadline is generous on purpose:
 * it separates "finishes" from "runs for minutes", it does not measure speed.
 */
export function runWithDeadline(code: string, deadlineMs = 20_000): Promise<DeadlineRun> {
  const source = code.replaceAll("'@src/", `'${ROOT}/src/`)
  return new Promise((finish, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', source],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let stdout = ''
    let stderr = ''
    let isTimedOut = false
    const timer = setTimeout(() => {
      isTimedOut = true
      child.kill('SIGKILL')
    }, deadlineMs)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (exitCode) => {
      clearTimeout(timer)
      finish({ isTimedOut, code: exitCode, stdout, stderr })
    })
  })
}
