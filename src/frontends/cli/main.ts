/**
 * The `rudder` command line. Returns the exit code: 0 success, 1 a task that did not complete,
 * 2 usage or configuration errors (with the fix), 130 interrupted, 143 terminated
 * (docs/spec.md §11).
 */
import { Writable } from 'node:stream'
// Each command's module is imported when that command runs, so `--help` and usage errors load
// almost nothing (bench B10, docs/decisions/0141).
import { ConfigError, RudderError } from '../../runtime/errors.js'
import { packageVersion } from '../../runtime/package-version.js'
import { type CliCommand, parseCommandLine, SESSIONS_USAGE, UsageError } from './args.js'
import type { CliIo } from './io.js'
import { jsonLine } from './json-lines.js'

export type { CliIo } from './io.js'

const HELP = `rudder: an agent harness whose model sees exactly what the session log holds.

Usage:
  rudder [options] "task"        run one task headless: the final answer goes to stdout
  rudder [options] -             read the task from stdin (also: no task and stdin piped)
  echo notes | rudder "task"     piped input is appended to the task
  rudder [options]               in a terminal: the terminal UI (also rudder interactive)
  rudder -i [options] ["task"]   the terminal UI, sending the task first
  rudder sessions list [--all] [--limit N] [--json]
  rudder sessions show <id> [--json]
  rudder sessions export <id> [--out file.jsonl]
  rudder sessions import <file.jsonl> [--as-new]
  rudder sessions fork <id> [--at seq]
  rudder sessions repair <id>    copy the valid prefix of a damaged session into a new one
  rudder sessions delete <id>…   delete sessions (and blobs no other session uses)
  rudder sessions prune --older-than 30d [--all] [--dry-run]
  rudder models [--json]         known provider/model pairs and whether their key is set
  rudder mcp list [--json]       start the MCP servers configured here and list their tools
  rudder trust [dir]             let dir's .rudder/config.json apply in full (default: here)
  rudder trust --list            the trusted directories
  rudder untrust [dir]           a project's config may only tighten approvals again
  rudder acp [--provider p] [--model m] [--store url]
                                 an Agent Client Protocol agent on stdin/stdout (Zed, …)
  rudder serve [--port N] [--host 127.0.0.1]
                                 host sessions for a browser (prints a URL with a token)
  rudder --version | --help

Options:
  --model, -m provider/model     e.g. deepseek/deepseek-chat, openai/gpt-4.1,
                                 anthropic/claude-sonnet-5-5, ollama/qwen3:8b
  --provider name                a provider, or scripted:<file.json>, or replay:<session-id>
  --store url                    sqlite:<path> (default ~/.rudder/sessions.db), jsonl:<dir>,
                                 postgres://user@host:port/db, memory: (or RUDDER_STORE)
  --resume, -r [id]              continue a session (an id prefix will do); no id: --continue
  --continue, -c                 continue the newest session of this directory
  --cwd <dir>                    the workspace (default: the current directory)
  --print, -p                    run headless (the default with a task; for Claude Code habits)
  --output-format text|json|stream-json
                                 text: the final answer; json: one result object;
                                 stream-json: events and live notifications as JSON lines
  --json                         the same as --output-format stream-json
  --output-last-message <file>   also write the final answer to file
  --quiet, -q                    no progress, refusals or notices on stderr (errors still)
  --yes, -y                      approve tool calls the approval policy would ask about
  --approval ask|auto-edit|yolo  ask: refuse what would ask; auto-edit: file edits run;
                                 yolo: everything the policy does not deny runs
  --allow <tool|bash:pattern>    approve a tool (write) or bash commands (bash:npm test*)
                                 for this run; repeatable
  --system <text>                replace the system prompt
  --append-system-prompt <text>  add to the end of the system prompt
  --max-steps N                  steps per turn before the turn ends (default 100)
  --timeout <duration>           wait this long for a response to start (default 60s)
  --idle-timeout <duration>      longest silence inside a response (default 120s)
  --retries N                    retries of a failed request (default 4; 0: none)
  -c key=value, --config key=value
                                 override a config key for this run (-c retry.maxRetries=1);
                                 repeatable; values are JSON or else text
  --help, -h | --version, -v

Progress (retries, tool calls) goes to stderr when it is a terminal; refusals always do unless
--quiet. Keys come from DEEPSEEK_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY or the config files
~/.rudder/config.json and the nearest .rudder/config.json up to the repository root (a
project's file may only tighten approvals until you trust its directory).

Exit codes: 0 completed, 1 not completed (error, limit, refused prompt), 2 usage or
configuration error, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
`

/** Runs the CLI with `args` (without the node and script paths). */
export async function main(args: readonly string[], io: CliIo): Promise<number> {
  let jsonErrors = false
  try {
    const command = parseCommandLine(args, io.cwd)
    switch (command.kind) {
      case 'version':
        io.stdout.write(`rudder ${packageVersion()}\n`)
        return 0
      case 'help':
        io.stdout.write(HELP)
        return 0
      case 'run':
        jsonErrors = command.options.outputFormat !== 'text'
        return await runHeadless(command, io)
      case 'interactive':
        return await openInteractive(command, io)
      case 'sessions':
        if (command.command.action === 'help') {
          io.stdout.write(`${SESSIONS_USAGE}\n`)
          return 0
        }
        return await (await import('./sessions.js')).runSessions(command.command, command.store, io)
      case 'models':
        return (await import('./models.js')).listModels(command, io)
      case 'mcp':
        return await (await import('./mcp.js')).listMcpServers(command, io)
      case 'trust':
        return (await import('./trust.js')).runTrust(command.command, io)
      case 'acp':
        if (!io.stdin || !(io.stdout instanceof Writable))
          throw new UsageError(
            'rudder acp needs the process stdin and stdout (run it as a command)',
          )
        return await (await import('../acp/run.js')).runAcp(
          command.options,
          { ...io, stdin: io.stdin, stdout: io.stdout },
          packageVersion(),
        )
      case 'serve':
        return await (await import('../web/serve-command.js')).runServe(command.args, io)
    }
  } catch (error) {
    return reportFailure(error, io, jsonErrors)
  }
}

/**
 * Whether `args` open the terminal UI when stdin is a terminal: `rudder interactive`, `-i`, or
 * a run with no task and no `-p` (the rule of `runHeadless`). bin/rudder.js asks, so that only
 * the UI keeps the ES build and every other run from a terminal gets the code cache (decision
 * 0137). A command line that does not parse is not the UI's: the run reports it.
 */
export function opensTerminalUi(args: readonly string[], cwd: string): boolean {
  let command: CliCommand
  try {
    command = parseCommandLine(args, cwd)
  } catch {
    return false
  }
  if (command.kind === 'interactive') return true
  return command.kind === 'run' && command.task.kind === 'none' && !command.options.print
}

type RunCommand = Extract<CliCommand, { kind: 'run' }>

/**
 * The one place that decides whether a run is headless: a task argument, `-`, or no task with
 * stdin piped runs headless; no task with stdin a terminal opens the interactive front end.
 */
async function runHeadless(command: RunCommand, io: CliIo): Promise<number> {
  const task = await taskOf(command, io)
  if (task === undefined && command.options.print)
    throw new UsageError(
      'rudder -p needs a task: an argument, or stdin (rudder -p "fix the failing test", echo "fix it" | rudder -p)',
    )
  if (task === undefined) return openInteractive(command, io)
  return (await import('./headless.js')).runTask(task, command.options, io)
}

/**
 * The terminal UI: `rudder -i`, `rudder interactive`, or no task with stdin a terminal. Without
 * a terminal there is no one to talk to: usage on stderr and exit 2
 * (docs/decisions/0130-headless-or-not.md). The UI is loaded only here, so headless runs never
 * load the terminal library.
 */
async function openInteractive(
  command: RunCommand | Extract<CliCommand, { kind: 'interactive' }>,
  io: CliIo,
): Promise<number> {
  const isTerminal = io.stdinKind === 'terminal'
  if (command.kind === 'run' && !isTerminal) {
    if (command.options.resume !== undefined || command.options.continueLatest)
      throw new UsageError(
        '--resume and --continue need a task to run, e.g. rudder --continue "keep going"',
      )
    io.stderr.write(
      'rudder: no task given. Pass one as an argument or on stdin, e.g. rudder "fix the failing test" or echo "fix it" | rudder\nUsage: rudder [options] "task" | rudder [options] - < task.txt | rudder --help for every command and option\n',
    )
    return 2
  }
  const interactive =
    command.kind === 'interactive'
      ? command
      : { kind: 'interactive' as const, isExplicit: false, options: command.options }
  return await (await import('../tui/command.js')).runInteractiveCommand(interactive, io)
}

/**
 * The task: the argument; stdin for `-`; stdin when there is no argument and stdin is a pipe or
 * a file; the argument followed by such piped input. A terminal, or an inherited socket that
 * may never end, is read only for `-`. Undefined when there is no task at all.
 */
async function taskOf(command: RunCommand, io: CliIo): Promise<string | undefined> {
  const kind = io.stdinKind ?? 'other'
  const { task } = command
  switch (task.kind) {
    case 'stdin': {
      const text = await readStdin(io)
      if (text.trim() === '')
        throw new UsageError('the task on stdin is empty; pipe in what rudder should do')
      return text
    }
    case 'none': {
      if (kind !== 'pipe' && kind !== 'file') return undefined
      const text = await readStdin(io)
      return text.trim() === '' ? undefined : text
    }
    case 'text': {
      if (kind !== 'pipe' && kind !== 'file') return task.text
      const text = await readStdin(io)
      return text.trim() === '' ? task.text : `${task.text}\n\n${text}`
    }
  }
}

async function readStdin(io: CliIo): Promise<string> {
  if (io.stdin === undefined) throw new UsageError('the task is "-" but there is no stdin to read')
  const chunks: Buffer[] = []
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8').replace(/\n+$/, '')
}

/** Caller and configuration mistakes exit 2; anything else that escaped exits 1. */
function reportFailure(error: unknown, io: CliIo, asJson: boolean): number {
  const { code, message, exitCode } = describeFailure(error)
  io.stderr.write(`rudder: ${message}\n`)
  if (asJson) io.stdout.write(jsonLine({ type: 'error', code, message, exitCode }))
  return exitCode
}

const CALLER_MISTAKES = new Set([
  'INVALID_INPUT',
  'SESSION_NOT_FOUND',
  'SESSION_BUSY',
  'OPEN_TURN',
  'FORMAT_TOO_NEW',
  'LOG_CORRUPT',
])

function describeFailure(error: unknown): { code: string; message: string; exitCode: number } {
  if (error instanceof UsageError) return { code: 'USAGE', message: error.message, exitCode: 2 }
  if (error instanceof ConfigError) return { code: 'CONFIG', message: error.message, exitCode: 2 }
  if (error instanceof RudderError)
    return {
      code: error.code,
      message: error.message,
      exitCode: CALLER_MISTAKES.has(error.code) ? 2 : 1,
    }
  const file = fileProblem(error)
  if (file !== undefined) return { code: 'FILE', message: file, exitCode: 2 }
  return {
    code: 'UNEXPECTED',
    message: `unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    exitCode: 1,
  }
}

/** An ordinary file error (missing, permission, read-only…) as a sentence naming the path. */
export function fileProblem(error: unknown): string | undefined {
  const { code, path } = (error ?? {}) as { code?: unknown; path?: unknown }
  if (typeof path !== 'string' || typeof code !== 'string') return undefined
  const cause = FILE_CAUSES[code]
  return cause === undefined ? undefined : `${path}: ${cause}`
}

const FILE_CAUSES: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory; check the path',
  EACCES: "permission denied; check its permissions (and its directory's)",
  EPERM: 'operation not permitted; check its permissions',
  EROFS: 'the file system is read-only; choose a writable place',
  ENOTDIR: 'a part of the path is not a directory; check the path',
  EISDIR: 'is a directory; name a file',
  EEXIST: 'already exists; choose another name or remove it',
  ENOSPC: 'no space left on the device; free some space',
}
