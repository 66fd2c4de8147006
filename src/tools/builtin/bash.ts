/**
 * `bash`: runs a command with `bash -c` in the workspace, in its own process group, with a
 * timeout, bounded output (head and tail kept) and the exit code in the result.
 */
import type { JsonValue } from '../../core/index.js'
import { defineLazyTool } from '../define-tool.js'
import { lazySchema } from '../lazy-zod.js'
import type { Tool } from '../tool.js'
import type { StopReport } from './process-group.js'
import { type BuiltinResult, canceledResult, errorResult } from './results.js'
import { HeadTailBuffer } from './text-limits.js'
import type { WorkspaceOptions } from './workspace.js'

export type BashToolOptions = Pick<WorkspaceOptions, 'workspace'> & {
  /** Timeout when the call gives none. Default 120 000 ms. */
  readonly timeoutMs?: number
  /** Largest timeout a call may ask for. Default 600 000 ms. */
  readonly maxTimeoutMs?: number
  /** Output characters kept (the first 40% and the last 60%). Default 30 000. */
  readonly maxOutputChars?: number
  /** Between SIGTERM and SIGKILL when stopping the process group. Default 2000 ms. */
  readonly killGraceMs?: number
  /** The shell, run as `<shell> -c <command>`. Default `bash` (looked up on PATH). */
  readonly shell?: string
  /** Variables added to (or, when undefined, removed from) the inherited environment. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/**
 * The arguments: the zod schema that validates them (built on first need), and the JSON Schema
 * the model sees written out, so opening a session does no zod work (bench B10,
 * docs/decisions/0142-tool-schemas-written-out.md; test/tools/builtin-schemas.test.ts keeps the
 * two equal). Arguments that schema plainly accepts are taken without zod (decision 0147).
 */
export function bashParameters(defaultTimeoutMs: number, maxTimeoutMs: number) {
  return {
    parameters: lazySchema((z) =>
      z.object({
        command: z.string().min(1).describe('The command line, run with bash -c in the workspace.'),
        timeout: z
          .number()
          .positive()
          .max(maxTimeoutMs / 1000)
          .optional()
          .describe(`Timeout in seconds. Default ${defaultTimeoutMs / 1000}.`),
      }),
    ),
    jsonSchema: {
      type: 'object',
      properties: {
        command: {
          type: 'string',
          minLength: 1,
          description: 'The command line, run with bash -c in the workspace.',
        },
        timeout: {
          description: `Timeout in seconds. Default ${defaultTimeoutMs / 1000}.`,
          type: 'number',
          exclusiveMinimum: 0,
          maximum: maxTimeoutMs / 1000,
        },
      },
      required: ['command'],
    },
  }
}

/**
 * Creates the `bash` tool. Not confined to the workspace: it is a shell (the approval policy,
 * not this tool, decides which commands run). Exclusive: commands may change files others read.
 * Progress: `context.update({ output })` with each chunk of output as it arrives.
 */
export function bashTool(
  options: BashToolOptions,
): Tool<{ command: string; timeout?: number | undefined }> {
  const defaultTimeoutMs = options.timeoutMs ?? 120_000
  const maxTimeoutMs = Math.max(options.maxTimeoutMs ?? 600_000, defaultTimeoutMs)
  const maxOutputChars = options.maxOutputChars ?? 30_000
  return defineLazyTool({
    name: 'bash',
    description: `Run a shell command with bash -c in the workspace directory and get its output (stdout and stderr together) and exit code. Stdin is empty. Default timeout ${defaultTimeoutMs / 1000}s; on timeout the command and the processes it started are killed. Long output keeps its beginning and end. To leave a program running in the background, redirect its output (cmd > file 2>&1 &), or the call waits for it.`,
    ...bashParameters(defaultTimeoutMs, maxTimeoutMs),
    concurrency: 'exclusive',
    async execute(args, context): Promise<BuiltinResult> {
      if (context.signal.aborted) return canceledResult('bash')
      // Loaded with the first call, so a session that runs no command does not load it (bench B10).
      const { runInProcessGroup } = await import('./process-group.js')
      const timeoutMs = args.timeout === undefined ? defaultTimeoutMs : args.timeout * 1000
      const output = new HeadTailBuffer(
        Math.floor(maxOutputChars * 0.4),
        Math.ceil(maxOutputChars * 0.6),
      )
      const outcome = await runInProcessGroup({
        shell: options.shell ?? 'bash',
        command: args.command,
        cwd: options.workspace,
        env: environment(options.env),
        timeoutMs,
        killGraceMs: options.killGraceMs ?? 2000,
        signal: context.signal,
        onOutput(text) {
          output.push(text)
          context.update({ output: text })
        },
      })
      const body =
        output.text(
          'to see all of it, rerun with the output redirected to a file and read or grep that file',
        ) || '(no output)'
      const meta = { omittedChars: output.omitted }
      switch (outcome.kind) {
        case 'failed-to-start':
          return errorResult(
            `The command could not be started: ${outcome.message}. The shell or workspace directory may be missing.`,
          )
        case 'canceled':
          return errorResult(`${body}\n\n[canceled: ${stopped(outcome, 'stopped')}]`, {
            ...meta,
            isCanceled: true,
            ...stopMeta(outcome),
          })
        case 'timed-out':
          return errorResult(
            `${body}\n\n[timed out after ${timeoutMs / 1000}s: ${stopped(outcome, 'killed')}. If it needs longer, pass a larger timeout (at most ${maxTimeoutMs / 1000}s), or run it in the background with its output redirected to a file.]`,
            { ...meta, isTimedOut: true, ...stopMeta(outcome) },
          )
        case 'exited': {
          const status =
            outcome.exitCode === null
              ? `killed by signal ${outcome.signal ?? 'unknown'}`
              : `exit code ${outcome.exitCode}`
          const result = `${body}\n\n[${status}]`
          const exitMeta = { ...meta, exitCode: outcome.exitCode, signal: outcome.signal }
          return {
            content: [{ type: 'text', text: result }],
            isError: outcome.exitCode !== 0,
            meta: exitMeta,
          }
        }
      }
    },
  })
}

/**
 * What stopping the command achieved, as the model should hear it: never "everything was
 * killed" when a process that left the group may still run.
 */
function stopped(report: StopReport, verb: 'killed' | 'stopped'): string {
  if (report.survivors.length > 0) {
    const pids = report.survivors.join(', ')
    return `the command's process group was ${verb}, but processes it started are still running (pid ${pids}); they left its process group (setsid or a daemon). Stop them with kill if they should not run`
  }
  if (report.isOutputHeld)
    return `the command's process group was ${verb}, but a process it started left the group (setsid or a daemon) and held its output open; it could not be found and may still be running`
  if (report.escaped > 0)
    return `the command and every process it started were ${verb}, including ${report.escaped === 1 ? '1 that had' : `${report.escaped} that had`} left its process group`
  return `the command and every process it started were ${verb}`
}

function stopMeta(report: StopReport): Record<string, JsonValue> {
  return {
    ...(report.escaped > 0 ? { escapedProcesses: report.escaped } : {}),
    ...(report.survivors.length > 0 ? { survivingPids: [...report.survivors] } : {}),
    ...(report.isOutputHeld ? { isOutputHeld: true } : {}),
  }
}

function environment(overrides: BashToolOptions['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const [name, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}
