/**
 * `rudder` in a terminal (docs/spec.md §11, issue 12 item 1): the same host as every front end
 * (config, providers, store, approval, workspace context), a session (new, `--resume`,
 * `--continue`), and the UI on the alternate screen until the person quits. The terminal is
 * restored on every way out, an uncaught error included (it is also written to a log file
 * whose path is printed).
 */
import { appendFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
// Not pi-tui's index, which loads what the first frame does not need (see startup-screen.ts).
import { ProcessTerminal } from '@mariozechner/pi-tui/dist/terminal.js'
import type { Host, SessionChoice } from '../../runtime/host.js'
import type { App } from './app.js'
import { PacedTUI } from './paced-tui.js'
import { StartupScreen } from './startup-screen.js'
import { createTheme, wantsColor } from './theme.js'

type Env = Readonly<Record<string, string | undefined>>

export type InteractiveOptions = {
  readonly cwd: string
  readonly invocationDir: string
  /** The process's environment: colours of the start-up screen. */
  readonly env: Env
  /**
   * The environment the host and session open with (`-c` and `--allow` folded in). Called after
   * the first frame, so what it loads does not delay it (docs/decisions/0083).
   */
  readonly sessionEnv?: () => Promise<Env>
  readonly home: string
  readonly provider?: string
  readonly model?: string
  readonly store?: string
  readonly system?: string
  readonly maxSteps?: number
  readonly resume?: string
  readonly continueLatest: boolean
  /** Sent as the first prompt once the UI is up (`rudder -i "task"`). */
  readonly task?: string
}

export type InteractiveIo = {
  readonly stderr: { write(text: string): unknown }
}

const ENTER_ALTERNATE_SCREEN = '\x1b[?1049h'
const LEAVE_ALTERNATE_SCREEN = '\x1b[?1049l'

/** Runs the UI until the person quits. Returns the exit code: 0, or 130 after Ctrl-C twice. */
export async function runInteractive(
  options: InteractiveOptions,
  io: InteractiveIo,
): Promise<number> {
  // The screen comes first, with nothing but pi-tui loaded: the editor takes keystrokes while
  // the host (config, store, provider, tools) loads and opens behind it (docs/decisions/0083).
  const terminal = new ProcessTerminal()
  const tui = new PacedTUI(terminal)
  const theme = createTheme(wantsColor(options.env))
  let isRestored = false
  const restore = () => {
    if (isRestored) return
    isRestored = true
    tui.stop()
    // command.ts made the terminal raw before pi-tui loaded; pi-tui puts back what it found.
    process.stdin.setRawMode?.(false)
    process.stdout.write(LEAVE_ALTERNATE_SCREEN)
  }
  // Known once the config module is loaded (just after the first frame); a failure before that
  // is reported on stderr only.
  let logFile: string | undefined
  const onFatal = (error: unknown) => {
    restore()
    try {
      if (logFile === undefined) throw error
      mkdirSync(join(logFile, '..'), { recursive: true })
      appendFileSync(
        logFile,
        `${new Date().toISOString()} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      )
      io.stderr.write(
        `rudder: the terminal UI failed: ${messageOf(error)} (details in ${logFile})\n`,
      )
    } catch {
      // The log file cannot be written either: the message on stderr is all there is.
      io.stderr.write(`rudder: the terminal UI failed: ${messageOf(error)}\n`)
    }
    process.exit(1)
  }
  process.on('uncaughtException', onFatal)
  process.on('unhandledRejection', onFatal)
  let quit: (code: number) => void = () => {}
  const quitting = new Promise<number>((resolveQuit) => {
    quit = resolveQuit
  })
  // A closed terminal (SIGHUP) or a polite kill (SIGTERM) ends like a quit: the running turn
  // is logged `canceled` and the store closed before the process exits.
  const onHangUp = () => quit(129)
  const onTerminate = () => quit(143)
  process.on('SIGHUP', onHangUp)
  process.on('SIGTERM', onTerminate)
  let app: App | undefined
  let opening: Promise<Host> | undefined
  try {
    process.stdout.write(ENTER_ALTERNATE_SCREEN)
    const startup = new StartupScreen({ tui, theme, onQuit: (code) => quit(code) })
    tui.start()
    // Drawn now (on the next tick), not on the renderer's timer; the heavy loading starts once
    // the frame is written.
    tui.requestRender(true)
    await new Promise((resolveFrame) => setImmediate(resolveFrame))
    opening = openHostOf(options, (file) => {
      logFile = file
    })
    const opened = await Promise.race([
      opening.then((host) => ({ host })),
      quitting.then((code) => ({ code })),
    ])
    if ('code' in opened) return opened.code
    const { host } = opened
    const { App } = await import('./app.js')
    const { editor, queued } = startup.handOver()
    app = new App({
      tui,
      host,
      env: await envOf(options),
      home: options.home,
      theme,
      editor,
      onQuit: (code) => quit(code),
    })
    await app.open(choiceOf(options))
    // The task of `rudder -i "task"` first, then what was submitted while starting, in order.
    void sendInOrder(app, options.task, queued)
    const code = await quitting
    // The running turn, if any, ends `canceled` in the log before the store closes.
    await app.close()
    restore()
    const id = app.sessionId
    if (id !== undefined)
      io.stderr.write(`rudder: session ${id} (continue it with rudder --resume ${id})\n`)
    return code
  } catch (error) {
    restore()
    throw error
  } finally {
    restore()
    if (opening) await opening.then((host) => host.close()).catch(() => {})
    process.off('uncaughtException', onFatal)
    process.off('unhandledRejection', onFatal)
    process.off('SIGHUP', onHangUp)
    process.off('SIGTERM', onTerminate)
  }
}

async function envOf(options: InteractiveOptions): Promise<Env> {
  return options.sessionEnv ? await options.sessionEnv() : options.env
}

/** Loads the host's modules and opens it; `onHome` learns the error log's path on the way. */
async function openHostOf(
  options: InteractiveOptions,
  onLogFile: (file: string) => void,
): Promise<Host> {
  const [{ openHost }, { rudderHome }, env] = await Promise.all([
    import('../../runtime/host.js'),
    import('../../runtime/config.js'),
    envOf(options),
  ])
  onLogFile(
    join(rudderHome({ env, home: options.home, cwd: options.cwd }), 'logs', 'tui-errors.log'),
  )
  return openHost({
    cwd: options.cwd,
    invocationDir: options.invocationDir,
    env,
    home: options.home,
    ...(options.store === undefined ? {} : { store: options.store }),
    defaults: {
      ...(options.provider === undefined ? {} : { provider: options.provider }),
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.system === undefined ? {} : { system: options.system }),
      ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
    },
  })
}

/**
 * Each prompt is sent once the one before it is (a mention is read before its prompt is sent):
 * the task as if typed, then the queued prompts, each a prompt of its own.
 */
async function sendInOrder(
  app: App,
  task: string | undefined,
  queued: readonly string[],
): Promise<void> {
  if (task !== undefined) await app.sendInitial(task)
  for (const text of queued) await app.sendQueued(text)
}

function choiceOf(options: InteractiveOptions): SessionChoice {
  if (options.resume !== undefined) return { kind: 'resume', id: options.resume }
  if (options.continueLatest) return { kind: 'continue' }
  return { kind: 'new' }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
