/**
 * `rudder "task"`: one task, headless (docs/spec.md §11). stdout gets the final assistant text (or,
 * with --json, the event stream); stderr stays empty on success unless there are notices for the
 * person (a hook's systemMessage, ignored project config). Exit 0 if the turn completed,
 * 1 otherwise, 130 after Ctrl-C.
 */
import type { DeliveryResult } from '../../index.js'
import { resourceContexts } from '../../runtime/mcp-references.js'
import type { Notice } from '../../runtime/notices.js'
import { openRuntime, type Runtime } from '../../runtime/runtime.js'
import type { RunOptions } from './args.js'
import type { CliIo } from './io.js'
import { jsonLine } from './json-lines.js'

export const EXIT_INTERRUPTED = 130

export async function runTask(task: string, options: RunOptions, io: CliIo): Promise<number> {
  const runtime = await openRuntime({
    cwd: options.cwd,
    invocationDir: io.cwd,
    env: io.env,
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
    }),
  })
  const stopStreaming = options.json ? streamJson(runtime, io) : reportProblems(runtime, io)
  const stopNotices = printNotices(runtime, io)
  let interrupted = false
  const stopListening = io.onInterrupt(() => {
    if (interrupted) return
    interrupted = true
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
    stopStreaming()
    stopNotices()
  }
  if (options.json)
    io.stdout.write(jsonLine({ type: 'result', sessionId: runtime.session.header.id, result }))
  else if (result.status === 'completed') io.stdout.write(`${result.text ?? ''}\n`)
  else {
    if (result.status !== 'canceled' && 'text' in result && result.text)
      io.stdout.write(`${result.text}\n`)
    io.stderr.write(`rudder: ${describeEnd(result)} (session ${runtime.session.header.id})\n`)
  }
  if (result.status === 'completed') return 0
  return interrupted ? EXIT_INTERRUPTED : 1
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
  for (const event of session.events.slice(runtime.startSeq))
    io.stdout.write(jsonLine({ type: 'event', event }))
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

/** Without --json, only problems reach stderr: a repaired log, a failing hook. */
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

/** Notices are for the person (a hook's systemMessage, ignored config): stderr, in both modes. */
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
      return `the turn ended with an error: ${result.error?.message ?? 'unknown'}${result.error?.code ? ` [${result.error.code}]` : ''}`
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
      return `the prompt was discarded (${result.reason})`
    default:
      return result.status
  }
}

function optional<T extends Record<string, unknown>>(
  values: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(
    Object.entries(values).filter(([, value]) => value !== undefined),
  ) as never
}
