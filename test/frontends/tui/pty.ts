/**
 * The built `rudder` in a real pseudo-terminal, its screen read through xterm-headless the way
 * a person sees it. Tests wait for screen content (checked after every chunk the program
 * writes), never for time.
 */
import { type IPty, spawn } from '@lydell/node-pty'
import xterm from '@xterm/headless'
import { afterEach } from 'vitest'
import { BIN } from '../cli/run-cli.js'

export type TerminalRun = {
  /** The visible screen, one string per row, right-trimmed. */
  screen(): string[]
  /** The visible screen as one string. */
  text(): string
  /** Resolves once `predicate` holds for the screen (checked after each write). */
  waitFor(
    predicate: string | RegExp | ((screen: string) => boolean),
    what?: string,
  ): Promise<string>
  /** Everything the program wrote, escape sequences included. */
  output(): string
  /** Types bytes as the keyboard would send them. */
  type(data: string): void
  resize(columns: number, rows: number): void
  /** Resolves with the exit code once the program ends. */
  readonly exited: Promise<number>
  kill(): void
  /** Sends a signal to the program. */
  signal(name: NodeJS.Signals): void
}

/** How long `waitFor` waits before failing with the screen: under the tests' 30 s timeout. */
const WAIT_LIMIT_MS = 25_000

export const KEYS = {
  enter: '\r',
  altEnter: '\x1b\r',
  tab: '\t',
  escape: '\x1b',
  ctrlC: '\x03',
  ctrlD: '\x04',
  ctrlO: '\x0f',
  up: '\x1b[A',
  down: '\x1b[B',
  altUp: '\x1b[1;3A',
  shiftTab: '\x1b[Z',
  delete: '\x1b[3~',
  pageUp: '\x1b[5~',
} as const

export function runInTerminal(
  args: readonly string[],
  options: { env: Record<string, string>; cwd: string; columns?: number; rows?: number },
): TerminalRun {
  const columns = options.columns ?? 100
  const rows = options.rows ?? 30
  const terminal = new xterm.Terminal({ cols: columns, rows, allowProposedApi: true })
  const child: IPty = spawn(process.execPath, [BIN, ...args], {
    name: 'xterm-256color',
    cols: columns,
    rows,
    cwd: options.cwd,
    env: { ...options.env, TERM: 'xterm-256color' },
  })
  const waiters = new Set<() => void>()
  let output = ''
  child.onData((data) => {
    output += data
    terminal.write(data, () => {
      for (const check of [...waiters]) check()
    })
  })
  const exited = new Promise<number>((resolveExit) => {
    child.onExit(({ exitCode }) => {
      resolveExit(exitCode)
      for (const check of [...waiters]) check()
    })
  })
  let hasExited = false
  void exited.then(() => {
    hasExited = true
  })
  const screen = () => {
    const buffer = terminal.buffer.active
    const lines: string[] = []
    for (let row = 0; row < terminal.rows; row++)
      lines.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '')
    return lines
  }
  const text = () => screen().join('\n')
  return {
    screen,
    text,
    waitFor(predicate, what) {
      const test =
        typeof predicate === 'string'
          ? (value: string) => value.includes(predicate)
          : predicate instanceof RegExp
            ? (value: string) => predicate.test(value)
            : predicate
      return new Promise((resolveWait, reject) => {
        const fail = (why: string) => {
          waiters.delete(check)
          clearTimeout(giveUp)
          reject(
            new Error(
              `${why} before the screen showed ${what ?? String(predicate)}; screen:\n${text()}\nlast output:\n${JSON.stringify(output.slice(-2000))}`,
            ),
          )
        }
        const check = () => {
          if (test(text())) {
            waiters.delete(check)
            clearTimeout(giveUp)
            resolveWait(text())
          } else if (hasExited) fail('the program exited')
        }
        // Not a speed check: a wait that never ends otherwise dies with the test's timeout and
        // shows nothing; this gives up just before it, with the screen, so a hang can be read.
        const giveUp = setTimeout(() => fail(`nothing came for ${WAIT_LIMIT_MS} ms`), WAIT_LIMIT_MS)
        waiters.add(check)
        check()
      })
    },
    output: () => output,
    type(data) {
      child.write(data)
    },
    resize(newColumns, newRows) {
      child.resize(newColumns, newRows)
      terminal.resize(newColumns, newRows)
    },
    exited,
    kill() {
      if (!hasExited) child.kill('SIGKILL')
    },
    signal(name) {
      child.kill(name)
    },
  }
}

/**
 * Kills every run a test started once it ends, printing the screen of a test that failed.
 * Call at the top of a test file; pass each run to the returned function.
 */
export function killAfterEach(): (run: TerminalRun) => TerminalRun {
  const running: TerminalRun[] = []
  afterEach((context) => {
    for (const run of running.splice(0)) {
      if (context.task.result?.state === 'fail') console.error(`screen at failure:\n${run.text()}`)
      run.kill()
    }
  })
  return (run) => {
    running.push(run)
    return run
  }
}
