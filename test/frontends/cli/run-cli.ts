/** Runs the real `rudder` bin as a subprocess. */
import { spawn } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll } from 'vitest'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
export const BIN = join(ROOT, 'bin/rudder.js')

export type CliRun = {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** An environment without the caller's provider keys, with its own RUDDER_HOME. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /API_KEY|BASE_URL|^RUDDER_/.test(key)) continue
    env[key] = value
  }
  return { ...env, RUDDER_HOME: mkdtempSync(join(tmpdir(), 'rudder-home-')), ...extra }
}

export function runCli(
  args: readonly string[],
  options: {
    env: Record<string, string>
    cwd?: string
    onLine?: (line: string, child: ReturnType<typeof spawn>) => void
  },
): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let pending = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      pending += chunk
      let newline = pending.indexOf('\n')
      while (newline >= 0) {
        options.onLine?.(pending.slice(0, newline), child)
        pending = pending.slice(newline + 1)
        newline = pending.indexOf('\n')
      }
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }))
  })
}

/**
 * Runs a shell command line with bash, where `$RUDDER` is `node bin/rudder.js` (paths without
 * spaces, as in CI and here): real pipes
 * (FIFOs) between the processes, as a person's shell makes them.
 */
export function runShell(
  command: string,
  options: { env: Record<string, string>; cwd?: string },
): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: options.cwd ?? ROOT,
      env: { ...options.env, RUDDER: `${process.execPath} ${BIN}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }))
  })
}

/**
 * A scratch directory for one test file (its real path, removed after the file's tests), with
 * scripted-model files and fresh workspaces made inside it.
 */
export function scratchSpace(prefix: string): {
  readonly dir: string
  script(steps: unknown[]): string
  workspace(): string
} {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  let scripts = 0
  return {
    dir,
    script(steps) {
      const path = join(dir, `script-${++scripts}.json`)
      writeFileSync(path, JSON.stringify(steps))
      return `scripted:${path}`
    },
    workspace: () => mkdtempSync(join(dir, 'ws-')),
  }
}
