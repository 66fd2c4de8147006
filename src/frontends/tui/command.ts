/**
 * `rudder interactive`, `rudder -i ["task"]` and `rudder` with no task in a terminal: checks
 * that there is a terminal and runs the UI (loaded only then, so the headless CLI never loads
 * the terminal library).
 */
import type { CliCommand } from '../cli/args.js'
import { UsageError } from '../cli/args.js'
import type { CliIo } from '../cli/io.js'

export async function runInteractiveCommand(
  command: Extract<CliCommand, { kind: 'interactive' }>,
  io: CliIo,
): Promise<number> {
  const isTerminal =
    (io.stdin as { isTTY?: boolean } | undefined)?.isTTY === true && process.stdout.isTTY === true
  if (!isTerminal)
    throw new UsageError(
      'the terminal UI needs a terminal on stdin and stdout; to run one task without it: rudder "task"',
    )
  const { options } = command
  if (options.yes)
    io.stderr.write('rudder: --yes is for headless runs; the terminal UI asks you instead\n')
  // Keys typed while the UI loads wait in the terminal's buffer unechoed, Enter as Enter, for
  // the editor to read (docs/decisions/0083); run.ts puts the terminal back on every way out.
  setRaw(io, true)
  let runInteractive: typeof import('./run.js').runInteractive
  try {
    ;({ runInteractive } = await import('./run.js'))
  } catch (error) {
    setRaw(io, false)
    throw error
  }
  return runInteractive(
    {
      cwd: options.cwd,
      invocationDir: io.cwd,
      env: io.env,
      // `-c key=value` and `--allow` apply to the UI's session as to a headless run. The
      // headless module loads the runtime: it is imported after the first frame (decision 0083).
      sessionEnv: async () => (await import('../cli/headless.js')).runEnvironment(io.env, options),
      home: io.home,
      continueLatest: options.continueLatest,
      ...(command.task === undefined ? {} : { task: command.task }),
      ...(options.provider === undefined ? {} : { provider: options.provider }),
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.store === undefined ? {} : { store: options.store }),
      ...(options.system === undefined ? {} : { system: options.system }),
      ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
      ...(options.resume === undefined ? {} : { resume: options.resume }),
    },
    io,
  )
}

function setRaw(io: CliIo, isRaw: boolean): void {
  ;(io.stdin as { setRawMode?: (isRaw: boolean) => void } | undefined)?.setRawMode?.(isRaw)
}
