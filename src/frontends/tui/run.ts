/**
 * `rudder` in a terminal (docs/spec.md §11, issue 12 item 1): the same host as every front end
 * (config, providers, store, approval, workspace context), a session (new, `--resume`,
 * `--continue`), and the UI on the alternate screen until the person quits. The terminal is
 * restored on every way out, an uncaught error included (it is also written to a log file
 * whose path is printed).
 */
import { appendFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ProcessTerminal, TUI } from '@mariozechner/pi-tui'
import { rudderHome } from '../../index.js'
import { openHost, type SessionChoice } from '../../runtime/host.js'
import { App } from './app.js'
import { createTheme, wantsColor } from './theme.js'

export type InteractiveOptions = {
  readonly cwd: string
  readonly invocationDir: string
  readonly env: Readonly<Record<string, string | undefined>>
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
  const host = await openHost({
    cwd: options.cwd,
    invocationDir: options.invocationDir,
    env: options.env,
    home: options.home,
    ...(options.store === undefined ? {} : { store: options.store }),
    defaults: {
      ...(options.provider === undefined ? {} : { provider: options.provider }),
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.system === undefined ? {} : { system: options.system }),
      ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
    },
  })
  const terminal = new ProcessTerminal()
  const tui = new TUI(terminal)
  let isRestored = false
  const restore = () => {
    if (isRestored) return
    isRestored = true
    tui.stop()
    process.stdout.write(LEAVE_ALTERNATE_SCREEN)
  }
  const logFile = join(
    rudderHome({ env: options.env, home: options.home, cwd: options.cwd }),
    'logs',
    'tui-errors.log',
  )
  const onFatal = (error: unknown) => {
    restore()
    try {
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
  try {
    process.stdout.write(ENTER_ALTERNATE_SCREEN)
    app = new App({
      tui,
      host,
      env: options.env,
      home: options.home,
      theme: createTheme(wantsColor(options.env)),
      onQuit: (code) => quit(code),
    })
    tui.start()
    await app.open(choiceOf(options))
    if (options.task !== undefined) void app.sendInitial(options.task)
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
    await host.close()
    process.off('uncaughtException', onFatal)
    process.off('unhandledRejection', onFatal)
    process.off('SIGHUP', onHangUp)
    process.off('SIGTERM', onTerminate)
  }
}

function choiceOf(options: InteractiveOptions): SessionChoice {
  if (options.resume !== undefined) return { kind: 'resume', id: options.resume }
  if (options.continueLatest) return { kind: 'continue' }
  return { kind: 'new' }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
