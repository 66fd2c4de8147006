/**
 * `rudder "task"`: one task, headless (docs/spec.md §11). stdout gets the final assistant text
 * (or, by `--output-format`, one JSON result or the event stream); stderr gets what the person
 * should know: refusals, notices, problems, and progress when it is a terminal. Exit 0 if the
 * turn completed, 1 otherwise, 130 after Ctrl-C, 143 after SIGTERM.
 */
import { writeFileSync } from 'node:fs'
import type { DeliveryResult, JsonValue, SessionEvent, Usage } from '../../index.js'
import { CONFIG_OVERRIDES_ENV } from '../../runtime/config.js'
import { resourceContexts } from '../../runtime/mcp-references.js'
import type { Notice } from '../../runtime/notices.js'
import { openRuntime, type Runtime } from '../../runtime/runtime.js'
import type { RunOptions } from './args.js'
import { UsageError } from './args.js'
import type { CliIo, StopSignal } from './io.js'
import { type Denial, jsonLine } from './json-lines.js'

export const EXIT_INTERRUPTED = 130
/** 128 + SIGTERM's number, as a shell reports a process SIGTERM ended. */
export const EXIT_TERMINATED = 143

export async function runTask(task: string, options: RunOptions, io: CliIo): Promise<number> {
  const startedAt = Date.now()
  const runtime = await openRuntime({
    cwd: options.cwd,
    invocationDir: io.cwd,
    env: runEnvironment(io.env, options),
    home: io.home,
    title: task.length > 80 ? `${task.slice(0, 77)}…` : task,
    continueLatest: options.continueLatest,
    yes: options.yes,
    ...optional({
      provider: options.provider,
      model: options.model,
      store: options.store,
      resume: options.resume,
      system: options.system,
      maxSteps: options.maxSteps,
      timeoutMs: options.timeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      maxRetries: options.maxRetries,
      approvalMode: options.approval,
    }),
  })
  if (options.appendSystem !== undefined)
    runtime.agent.configure({
      system: `${runtime.agent.settings.system}\n\n${options.appendSystem}`,
    })
  const ledger = watchRun(runtime, io, options)
  const stopOutput =
    options.outputFormat === 'stream-json' ? streamJson(runtime, io) : reportProblems(runtime, io)
  const stopNotices = options.quiet ? () => {} : printNotices(runtime, io)
  let stoppedBy: StopSignal | undefined
  const stopListening = io.onInterrupt((signal) => {
    if (stoppedBy !== undefined) return
    stoppedBy = signal
    runtime.agent.cancel()
  })
  let result: DeliveryResult
  try {
    // `@server:uri` attaches an MCP resource as a context, logged before the prompt.
    for (const context of await resourceContexts(runtime.mcp, task)) runtime.agent.inject(context)
    result = await runtime.agent.send(task).result
  } finally {
    stopListening()
    await runtime.close()
    stopOutput()
    stopNotices()
    ledger.stop()
  }
  const sessionId = runtime.session.header.id
  const summary = {
    sessionId,
    usage: ledger.usage,
    durationMs: Date.now() - startedAt,
    denials: ledger.denials,
  }
  const text = 'text' in result ? result.text : undefined
  switch (options.outputFormat) {
    case 'stream-json':
      io.stdout.write(jsonLine({ type: 'result', ...summary, result }))
      break
    case 'json':
      io.stdout.write(
        jsonLine({
          type: 'final',
          status: result.status,
          text: text ?? '',
          ...summary,
          model: runtime.label,
          result,
        }),
      )
      break
    case 'text':
      if (result.status === 'completed') io.stdout.write(`${text ?? ''}\n`)
      else if (result.status !== 'canceled' && text) io.stdout.write(`${text}\n`)
      break
  }
  if (result.status !== 'completed')
    io.stderr.write(`rudder: ${describeEnd(result)} (session ${sessionId})\n`)
  if (options.outputLastMessage !== undefined) writeLastMessage(options.outputLastMessage, text)
  if (result.status === 'completed') return 0
  if (stoppedBy === 'SIGTERM') return EXIT_TERMINATED
  return stoppedBy === 'SIGINT' ? EXIT_INTERRUPTED : 1
}

/**
 * The environment the run's configuration is read with: `-c` and `--allow` become one config
 * layer (docs/decisions/0131), on top of any overrides the caller's environment already had.
 */
export function runEnvironment(env: CliIo['env'], options: RunOptions): CliIo['env'] {
  const allow = allowOverrides(options.allow)
  const given = { ...options.configOverrides }
  if (allow !== undefined) {
    const approval = (given.approval ?? {}) as Record<string, unknown>
    given.approval = {
      ...approval,
      tools: { ...(approval.tools as object), ...allow.tools },
      bash: [...allow.bash, ...((approval.bash as unknown[]) ?? [])],
    }
  }
  if (Object.keys(given).length === 0) return env
  let inherited: Record<string, unknown> = {}
  const existing = env[CONFIG_OVERRIDES_ENV]
  if (existing !== undefined && existing.trim() !== '') {
    try {
      inherited = JSON.parse(existing) as Record<string, unknown>
    } catch {
      // The config loader reports the variable's bad JSON with its name.
      return env
    }
  }
  return { ...env, [CONFIG_OVERRIDES_ENV]: JSON.stringify({ ...inherited, ...given }) }
}

/**
 * `--allow write`, `--allow mcp__server__tool` approve a tool; `--allow 'bash:npm test*'`,
 * `--allow 'Bash(npm test*)'` or a pattern with a space approve matching bash commands.
 */
function allowOverrides(
  entries: readonly string[],
): { tools: Record<string, 'allow'>; bash: { pattern: string; action: 'allow' }[] } | undefined {
  if (entries.length === 0) return undefined
  const tools: Record<string, 'allow'> = {}
  const bash: { pattern: string; action: 'allow' }[] = []
  for (const entry of entries) {
    const pattern =
      /^bash:(.+)$/is.exec(entry)?.[1] ??
      /^bash\((.+)\)$/is.exec(entry)?.[1] ??
      (/\s/.test(entry.trim()) ? entry.trim() : undefined)
    if (pattern !== undefined) bash.push({ pattern: pattern.trim(), action: 'allow' })
    else if (/^[A-Za-z0-9_.:-]+$/.test(entry)) tools[entry] = 'allow'
    else
      throw new UsageError(
        `--allow takes a tool name (write, edit, bash) or a bash pattern (bash:npm test*); got ${JSON.stringify(entry)}`,
      )
  }
  return { tools, bash }
}

/** What the run did, for the result: tokens used and calls refused. */
function watchRun(runtime: Runtime, io: CliIo, options: RunOptions) {
  const usage: Required<Pick<Usage, 'inputTokens' | 'outputTokens'>> & Usage = {
    inputTokens: 0,
    outputTokens: 0,
  }
  const denials: Denial[] = []
  const argsOf = new Map<string, JsonValue>()
  const progress = !options.quiet && io.isTerminal?.stderr === true
  const say = (text: string) => io.stderr.write(`rudder: ${text}\n`)
  const onEvent = (event: SessionEvent) => {
    switch (event.type) {
      case 'assistant/message': {
        const data = event.data as { usage: Usage; content: readonly { type: string }[] }
        addUsage(usage, data.usage)
        for (const part of data.content)
          if (part.type === 'tool-call') {
            const call = part as unknown as { id: string; args: JsonValue }
            argsOf.set(call.id, call.args)
          }
        break
      }
      case 'tool/call': {
        const data = event.data as { name: string; args: JsonValue }
        if (progress) say(`→ ${data.name} ${brief(data.args)}`)
        break
      }
      case 'tool/result': {
        const data = event.data as {
          callId: string
          name: string
          error?: { code: string; message: string }
        }
        const code = data.error?.code
        if (code !== 'denied' && code !== 'not-approved') break
        const args = argsOf.get(data.callId) ?? null
        const denial: Denial = { tool: data.name, args, reason: data.error!.message, code }
        denials.push(denial)
        // A refused change to a protected file already has its notice (approval-control.ts).
        const isProtected = denial.reason.startsWith(`Not run: ${denial.tool} would change `)
        if (!options.quiet && !isProtected) say(describeDenial(denial))
        break
      }
      default:
        break
    }
  }
  const stopEvents = runtime.session.subscribe(onEvent)
  const stopLive = runtime.agent.subscribe((notification) => {
    if (!progress || notification.type !== 'request/retry') return
    const seconds = Math.max(1, Math.round(notification.delayMs / 1000))
    say(
      `waiting for ${notification.provider}/${notification.model} (attempt ${notification.attempt}/${notification.maxAttempts}, retrying in ${seconds} s): ${trimPeriod(notification.error.message)}`,
    )
  })
  return {
    usage,
    denials,
    stop() {
      stopEvents()
      stopLive()
    },
  }
}

function addUsage(total: Record<string, number>, usage: Usage): void {
  for (const [key, value] of Object.entries(usage))
    if (typeof value === 'number') total[key] = (total[key] ?? 0) + value
}

/** One line for a refused call: what, why, and the flag that would allow it. */
function describeDenial(denial: Denial): string {
  // Denied by a policy rule or a hook: its reason says which.
  if (denial.code === 'denied')
    return `refused ${denial.tool} ${brief(denial.args)}: ${trimPeriod(denial.reason.replace(/^The tool call was denied: /, ''))}`
  const command =
    denial.tool === 'bash' && typeof denial.args === 'object' && denial.args !== null
      ? (denial.args as { command?: unknown }).command
      : undefined
  const allow =
    typeof command === 'string'
      ? `--allow ${shellQuote(`bash:${command}`)}`
      : `--allow ${denial.tool}`
  return `refused ${denial.tool} ${brief(denial.args)}: it needs approval; allow it with ${allow}, --approval auto-edit|yolo or --yes`
}

/** A call's arguments on one short line: the command or path when there is one. */
function brief(args: JsonValue): string {
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
    for (const key of ['command', 'path', 'pattern', 'url']) {
      const value = (args as Readonly<Record<string, JsonValue>>)[key]
      if (typeof value === 'string') return clip(value)
    }
  }
  return clip(JSON.stringify(args) ?? '')
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > 100 ? `${line.slice(0, 99)}…` : line
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./*-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`
}

function trimPeriod(text: string): string {
  return text.replace(/\.+$/, '')
}

function writeLastMessage(file: string, text: string | undefined): void {
  try {
    writeFileSync(file, text === undefined ? '' : `${text}\n`)
  } catch (error) {
    throw new UsageError(
      `--output-last-message ${file}: cannot write it (${(error as Error).message}); pass a path in a directory that exists and is writable`,
    )
  }
}

function streamJson(runtime: Runtime, io: CliIo): () => void {
  const { session, agent } = runtime
  io.stdout.write(
    jsonLine({
      type: 'session',
      sessionId: session.header.id,
      model: runtime.label,
      repairs: session.repairs,
    }),
  )
  // The events logged since the runtime was made (by session-start listeners) were appended
  // after open, so they are held in memory (docs/spec.md §9.2).
  for (let seq = runtime.startSeq; seq < session.nextSeq; seq++)
    io.stdout.write(jsonLine({ type: 'event', event: session.eventAt(seq)! }))
  const stopEvents = session.subscribe((event) =>
    io.stdout.write(jsonLine({ type: 'event', event })),
  )
  const stopLive = agent.subscribe((notification) =>
    io.stdout.write(jsonLine({ type: 'live', notification })),
  )
  return () => {
    stopEvents()
    stopLive()
  }
}

/** Without the event stream, only problems reach stderr: a repaired log, a failing hook. */
function reportProblems(runtime: Runtime, io: CliIo): () => void {
  for (const repair of runtime.session.repairs) {
    io.stderr.write(
      repair.kind === 'torn-tail'
        ? `rudder: cut a torn last line (${repair.bytes} bytes) at ${repair.location}\n`
        : `rudder: closed turn ${repair.turn}, interrupted by a crash (seqs ${repair.fromSeq}–${repair.toSeq})\n`,
    )
  }
  return runtime.agent.subscribe((notification) => {
    if (notification.type === 'listener/error')
      io.stderr.write(`rudder: ${notification.source} failed: ${notification.message}\n`)
  })
}

/** Notices are for the person (a hook's systemMessage, ignored config): stderr, in every format. */
function printNotices(runtime: Runtime, io: CliIo): () => void {
  // rudder's own notices need no source; a hook's or a server's name it.
  const print = (notice: Notice) =>
    io.stderr.write(
      notice.source === 'rudder'
        ? `rudder: ${notice.message}\n`
        : `rudder: ${notice.source}: ${notice.message}\n`,
    )
  for (const notice of runtime.notices.all) print(notice)
  return runtime.notices.subscribe(print)
}

function describeEnd(result: DeliveryResult): string {
  switch (result.status) {
    case 'error':
      return `the turn ended with an error: ${trimPeriod(result.error?.message ?? 'unknown')}${result.error?.code ? ` [${result.error.code}]` : ''}`
    case 'canceled':
      return 'canceled'
    case 'max-tokens':
      return 'the model hit its output limit; run again with --continue to let it go on'
    case 'step-limit':
      return 'the turn reached its step limit; run again with --continue to let it go on'
    case 'stop-limit':
      return 'a stop hook kept the turn going until its limit'
    case 'blocked':
      return `the prompt was blocked: ${result.reason}`
    case 'discarded':
      // 'canceled', 'disposed' or 'withdrawn' (a headless run never withdraws; said as is).
      return `the prompt was discarded (${result.reason})`
    case 'completed':
    case 'logged':
      return result.status
    default: {
      // Exhaustive without importing the whole index on the run path (decision 0141).
      const unhandled: never = result
      return unhandled
    }
  }
}

function optional<T extends Record<string, unknown>>(
  values: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(
    Object.entries(values).filter(([, value]) => value !== undefined),
  ) as never
}
