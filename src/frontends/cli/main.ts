/**
 * The `rudder` command line. Returns the exit code: 0 success, 1 a task that did not complete,
 * 2 usage or configuration errors (with the fix), 130 interrupted (docs/spec.md §11).
 */
import { readFileSync } from 'node:fs'
import { Writable } from 'node:stream'
import { ConfigError, RudderError } from '../../index.js'
import { runAcp } from '../acp/run.js'
import { parseCommandLine, UsageError } from './args.js'
import { runTask } from './headless.js'
import type { CliIo } from './io.js'
import { listMcpServers } from './mcp.js'
import { runSessions } from './sessions.js'
import { runTrust } from './trust.js'

export type { CliIo } from './io.js'

const HELP = `rudder: an agent harness whose model sees exactly what the session log holds.

Usage:
  rudder [options] "task"        run one task headless: the final answer goes to stdout
  rudder sessions list [--all] [--limit N] [--json]
  rudder sessions show <id> [--json]
  rudder sessions export <id> [--out file.jsonl]
  rudder sessions import <file.jsonl>
  rudder sessions fork <id> [--at seq]
  rudder sessions repair <id>    copy the valid prefix of a damaged session into a new one
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
  --model provider/model         e.g. deepseek/deepseek-chat, openai/gpt-4.1,
                                 anthropic/claude-sonnet-5-5, ollama/qwen3:8b
  --provider name                a provider, or scripted:<file.json>, or replay:<session-id>
  --store url                    sqlite:<path> (default ~/.rudder/sessions.db), jsonl:<dir>,
                                 postgres://user@host:port/db, memory: (or RUDDER_STORE)
  --resume <id>                  continue a session
  --continue, -c                 continue the newest session of this directory
  --cwd <dir>                    the workspace (default: the current directory)
  --yes, -y                      approve tool calls the approval policy would ask about
  --json                         stream events and live notifications as JSON lines
  --system <text>                replace the system prompt
  --max-steps N                  steps per turn before the turn ends (default 100)

Keys come from DEEPSEEK_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY or the config files
~/.rudder/config.json and .rudder/config.json (a project's file may only tighten approvals
until you trust its directory). Exit codes: 0 completed, 1 not completed, 2 usage or
configuration error, 130 interrupted.
`

/** Runs the CLI with `args` (without the node and script paths). */
export async function main(args: readonly string[], io: CliIo): Promise<number> {
  try {
    const command = parseCommandLine(args, io.cwd)
    switch (command.kind) {
      case 'version':
        io.stdout.write(`rudder ${version()}\n`)
        return 0
      case 'help':
        io.stdout.write(HELP)
        return 0
      case 'run':
        return await runTask(command.task, command.options, io)
      case 'sessions':
        return await runSessions(command.command, command.store, io)
      case 'mcp':
        return await listMcpServers(command, io)
      case 'trust':
        return runTrust(command.command, io)
      case 'acp':
        if (!io.stdin || !(io.stdout instanceof Writable))
          throw new UsageError(
            'rudder acp needs the process stdin and stdout (run it as a command)',
          )
        return await runAcp(
          command.options,
          { ...io, stdin: io.stdin, stdout: io.stdout },
          version(),
        )
      case 'serve':
        return await (await import('../web/serve-command.js')).runServe(command.args, io)
    }
  } catch (error) {
    return reportFailure(error, io)
  }
}

/** Caller and configuration mistakes exit 2; anything else that escaped exits 1. */
function reportFailure(error: unknown, io: CliIo): number {
  if (error instanceof UsageError || error instanceof ConfigError) {
    io.stderr.write(`rudder: ${error.message}\n`)
    return 2
  }
  if (error instanceof RudderError) {
    io.stderr.write(`rudder: ${error.message}\n`)
    const isCallerMistake = [
      'INVALID_INPUT',
      'SESSION_NOT_FOUND',
      'SESSION_BUSY',
      'OPEN_TURN',
      'FORMAT_TOO_NEW',
      'LOG_CORRUPT',
    ].includes(error.code)
    return isCallerMistake ? 2 : 1
  }
  io.stderr.write(
    `rudder: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  )
  return 1
}

function version(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
  ) as { version: string }
  return manifest.version
}
