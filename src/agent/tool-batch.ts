/**
 * Runs the tool calls of one assistant message (docs/spec.md §7, §6.3, §6.4): every call gets exactly
 * one result, results are logged in call order, parallel calls run together and exclusive
 * ones alone, and contexts returned by `tool-post` are staged so they follow all results.
 */
import {
  type ContentBlock,
  type EventMap,
  type JsonValue,
  messageOf,
  type ToolCallBlock,
  type UserMessageData,
} from '../core/index.js'
import { saveToolOutputSync } from '../tools/output-spill.js'
import type { Tool, ToolContext, ToolOutput } from '../tools/tool.js'
import { type Deferred, defer, raceAbort } from './deferred.js'
import {
  runWaterfall,
  type ToolCallInfo,
  type ToolPostResult,
  type ToolPreResult,
} from './hooks.js'
import { toUserMessage } from './inputs.js'
import type { ApprovalDecision, TurnContext } from './turn-context.js'

type ResultData = EventMap['tool/result']
type Outcome = { readonly result: ResultData; readonly contexts: readonly UserMessageData[] }
type Runnable = { readonly tool: Tool; readonly args: unknown; readonly rawArgs: JsonValue }
type Plan =
  | { readonly kind: 'done'; readonly outcome: Outcome }
  | ({ readonly kind: 'run' } & Runnable)

/** How a batch ended: canceled part-way, and whether a tool asked to conclude the turn. */
export type BatchOutcome = { readonly isCanceled: boolean; readonly concludesTurn: boolean }

export async function runToolBatch(
  context: TurnContext,
  turn: number,
  step: number,
  calls: readonly ToolCallBlock[],
): Promise<BatchOutcome> {
  const plans: Plan[] = []
  // Decide every call first, in call order: unknown tools, bad arguments, hooks and approval.
  for (const call of calls) plans.push(await planCall(context, call))

  const outcomes: Deferred<Outcome>[] = plans.map((plan) => {
    const outcome = defer<Outcome>()
    if (plan.kind === 'done') outcome.resolve(plan.outcome)
    return outcome
  })
  // Results are logged in call order, each as soon as it and all before it are known.
  const logging = (async () => {
    for (const outcome of outcomes) {
      const { result, contexts } = await outcome.promise
      context.session.append('tool/result', result)
      for (const additional of contexts) context.stage(additional)
    }
  })()
  // Awaited below; until then this only keeps a failed append from counting as unhandled.
  logging.catch(() => {})

  let concludesTurn = false
  try {
    for (const group of executionGroups(plans)) {
      // A cancel can arrive while the group's tool/call events are appended (an observer of
      // them may cancel): calls not logged as started by then never start.
      const started: number[] = []
      for (const index of group) {
        if (context.signal.aborted) {
          outcomes[index]!.resolve(canceledBeforeStart(calls[index]!))
          continue
        }
        const plan = plans[index] as Runnable
        context.session.append('tool/call', {
          callId: calls[index]!.id,
          name: calls[index]!.name,
          args: plan.rawArgs,
        })
        started.push(index)
      }
      if (started.length === 0) continue
      // Durability point: a tool's side effects never precede the record that it started.
      await context.session.flush()
      await Promise.all(
        started.map(async (index) => {
          const outcome = await executeCall(
            context,
            turn,
            step,
            calls[index]!,
            plans[index] as Runnable,
            () => {
              concludesTurn = true
            },
          )
          outcomes[index]!.resolve(outcome)
        }),
      )
    }
  } finally {
    // Whatever failed above (a store write), no call may be left without a result.
    for (const [index, outcome] of outcomes.entries()) {
      if (!outcome.isSettled)
        outcome.resolve(
          failure(
            calls[index]!,
            'internal',
            `The tool ${calls[index]!.name} did not run: the agent failed before starting it.`,
          ),
        )
    }
  }
  await logging
  return { isCanceled: context.signal.aborted, concludesTurn }
}

/** Consecutive parallel calls share a group; an exclusive call runs alone. Calls already decided run nowhere. */
function executionGroups(plans: readonly Plan[]): number[][] {
  const groups: number[][] = []
  let current: number[] = []
  plans.forEach((plan, index) => {
    if (plan.kind !== 'run') return
    if (plan.tool.concurrency === 'exclusive') {
      if (current.length > 0) groups.push(current)
      groups.push([index])
      current = []
    } else current.push(index)
  })
  if (current.length > 0) groups.push(current)
  return groups
}

async function planCall(context: TurnContext, call: ToolCallBlock): Promise<Plan> {
  const done = (outcome: Outcome): Plan => ({ kind: 'done', outcome })
  if (context.signal.aborted) return done(canceledBeforeStart(call))
  const tool = context.tools.get(call.name)
  if (!tool) {
    const known = [...context.tools.keys()].join(', ') || 'none'
    return done(
      failure(
        call,
        'unknown-tool',
        `There is no tool named ${JSON.stringify(call.name)}. Available tools: ${known}.`,
      ),
    )
  }
  const parsed = tool.parse(call.args)
  if (!parsed.ok) return done(failure(call, 'invalid-arguments', parsed.message))

  const info: ToolCallInfo = { id: call.id, name: call.name, args: call.args }
  let decision: ToolPreResult
  try {
    decision = await runWaterfall(
      context.hooks.list('tool-pre'),
      { call: info, signal: context.signal },
      () => ({ action: 'run' }),
    )
    checkToolPreResult(decision)
  } catch (error) {
    context.reportError('hook:tool-pre', error)
    return done(
      failure(
        call,
        'hook-failed',
        `The tool ${call.name} did not run: a tool-pre hook failed (${messageOf(error)}).`,
      ),
    )
  }
  if (context.signal.aborted) return done(canceledBeforeStart(call))
  switch (decision.action) {
    case 'deny':
      return done(failure(call, 'denied', `The tool call was denied: ${decision.reason}`))
    case 'ask': {
      const runnable = replacedArguments(call, tool, parsed.args, decision.args)
      if (runnable.kind === 'done') return runnable
      const asked = runnable.rawArgs === call.args ? info : { ...info, args: runnable.rawArgs }
      const approval = await askApproval(context, asked, decision.reason)
      if (context.signal.aborted) return done(canceledBeforeStart(call))
      if (!approval.approved) return done(failure(call, 'not-approved', approval.reason))
      return runnable
    }
    case 'run':
      return replacedArguments(call, tool, parsed.args, decision.args)
  }
}

/** The call as it will run: with the arguments a `tool-pre` listener put in, if it did. */
function replacedArguments(
  call: ToolCallBlock,
  tool: Tool,
  parsedArgs: unknown,
  replacement: JsonValue | undefined,
): Plan {
  if (replacement === undefined) return { kind: 'run', tool, args: parsedArgs, rawArgs: call.args }
  const replaced = tool.parse(replacement)
  if (!replaced.ok)
    return {
      kind: 'done',
      outcome: failure(
        call,
        'invalid-arguments',
        `A tool-pre hook replaced the arguments with invalid ones. ${replaced.message}`,
      ),
    }
  return { kind: 'run', tool, args: replaced.args, rawArgs: replacement }
}

function checkToolPreResult(result: unknown): asserts result is ToolPreResult {
  const action = (result as { action?: unknown } | undefined)?.action
  if (action !== 'run' && action !== 'deny' && action !== 'ask') {
    throw new TypeError(
      `a tool-pre listener must return { action: 'run' | 'deny' | 'ask' }, got ${JSON.stringify(result)}`,
    )
  }
}

async function askApproval(
  context: TurnContext,
  call: ToolCallInfo,
  reason: string | undefined,
): Promise<{ approved: boolean; reason: string }> {
  try {
    const asked = Promise.resolve(
      context.approve({
        call,
        ...(reason === undefined ? {} : { reason }),
        signal: context.signal,
      }),
    )
    const answer = await raceAbort(asked, context.signal, () => false)
    return readApproval(answer, call.name)
  } catch (error) {
    context.reportError('approve', error)
    return {
      approved: false,
      reason: `Approval for ${call.name} failed (${messageOf(error)}); the tool did not run.`,
    }
  }
}

function readApproval(
  answer: ApprovalDecision,
  tool: string,
): { approved: boolean; reason: string } {
  const refusal = `The user did not approve this call to ${tool}.`
  if (typeof answer === 'boolean') return { approved: answer, reason: refusal }
  if (typeof answer === 'string')
    return { approved: answer === 'allow' || answer === 'run', reason: refusal }
  if (typeof answer === 'object' && answer !== null) {
    const approved =
      'approved' in answer
        ? answer.approved === true
        : answer.action === 'allow' || answer.action === 'run'
    return { approved, reason: answer.reason ?? refusal }
  }
  return {
    approved: false,
    reason: `${refusal} (the approver answered ${JSON.stringify(answer)}; expected true or false)`,
  }
}

async function executeCall(
  context: TurnContext,
  turn: number,
  step: number,
  call: ToolCallBlock,
  plan: Runnable,
  concludeTurn: () => void,
): Promise<Outcome> {
  const toolContext: ToolContext = {
    signal: context.signal,
    callId: call.id,
    cwd: context.cwd,
    session: context.session,
    agent: context.agent,
    update: (progress) =>
      context.emit({
        type: 'tool/progress',
        turn,
        step,
        callId: call.id,
        name: call.name,
        progress,
      }),
    concludeTurn,
  }
  let result: ResultData
  try {
    result = toResult(call, await plan.tool.execute(plan.args, toolContext))
  } catch (error) {
    const message = messageOf(error)
    result = {
      callId: call.id,
      name: call.name,
      content: [{ type: 'text', text: `Error: ${message}` }],
      isError: true,
      error: { code: 'tool-error', message },
    }
  }
  let contexts: readonly UserMessageData[] = []
  if (!context.signal.aborted) {
    const info: ToolCallInfo = { id: call.id, name: call.name, args: plan.rawArgs }
    try {
      const post: ToolPostResult = await runWaterfall(
        context.hooks.list('tool-post'),
        {
          call: info,
          result: { content: result.content, isError: result.isError },
          signal: context.signal,
        },
        () => ({ content: result.content, isError: result.isError, additionalContexts: [] }),
      )
      result = { ...result, content: post.content, isError: post.isError }
      contexts = (post.additionalContexts ?? []).map((additional) =>
        toUserMessage(additional, 'tool-post additionalContexts'),
      )
    } catch (error) {
      // The tool ran and its side effects happened: keep its own result, report the hook.
      context.reportError('hook:tool-post', error)
    }
  }
  return { result: truncate(context, result), contexts }
}

function toResult(call: ToolCallBlock, output: ToolOutput): ResultData {
  const base = { callId: call.id, name: call.name }
  if (typeof output === 'string')
    return { ...base, content: [{ type: 'text', text: output }], isError: false }
  if (Array.isArray(output))
    return { ...base, content: output as readonly ContentBlock[], isError: false }
  if (
    typeof output === 'object' &&
    output !== null &&
    Array.isArray((output as { content?: unknown }).content)
  ) {
    const { content, isError, meta } = output as Exclude<
      ToolOutput,
      string | readonly ContentBlock[]
    >
    return { ...base, content, isError: isError === true, ...(meta === undefined ? {} : { meta }) }
  }
  throw new TypeError(
    `the tool returned ${JSON.stringify(output)}; a tool must return a string, content blocks, or { content, isError?, meta? }`,
  )
}

/** Keeps a result under the limit; the full text goes to a file the note names. */
function truncate(context: TurnContext, result: ResultData): ResultData {
  let total = 0
  for (const block of result.content) if (block.type === 'text') total += block.text.length
  if (total <= context.toolOutput.limit) return result
  const full = result.content
    .map((block) => (block.type === 'text' ? block.text : `[${block.mediaType} image]`))
    .join('\n')
  let path: string
  try {
    // A private directory, a 0600 file, old files swept (src/tools/output-spill.ts).
    path = saveToolOutputSync({
      dir: context.toolOutput.dir,
      name: `${context.session.header.id}-${result.callId}`,
      text: full,
    })
  } catch (error) {
    path = `(could not be saved: ${messageOf(error)})`
  }
  let budget = context.toolOutput.limit
  const content: ContentBlock[] = []
  for (const block of result.content) {
    if (block.type !== 'text') {
      content.push(block)
      continue
    }
    const kept = block.text.slice(0, Math.max(0, budget))
    budget -= kept.length
    if (kept !== '') content.push({ type: 'text', text: kept })
  }
  content.push({
    type: 'text',
    text: `\n[Output truncated: showing the first ${context.toolOutput.limit} of ${total} characters. The full output is in ${path}]`,
  })
  return { ...result, content }
}

function failure(call: ToolCallBlock, code: string, message: string): Outcome {
  return {
    result: {
      callId: call.id,
      name: call.name,
      content: [{ type: 'text', text: message }],
      isError: true,
      error: { code, message },
    },
    contexts: [],
  }
}

function canceledBeforeStart(call: ToolCallBlock): Outcome {
  return failure(
    call,
    'canceled',
    `The tool ${call.name} did not run: the turn was canceled before it started.`,
  )
}
