/**
 * Deciding a tool call before anything runs (docs/spec.md §6.3, §7): an unknown tool, invalid
 * arguments, the `tool-pre` waterfall and the approver. A decided call either has its result
 * already (`done`) or is ready to run with the arguments it will run with.
 */
import {
  type EventMap,
  type JsonValue,
  messageOf,
  type ToolCallBlock,
  type UserMessageData,
} from '../core/index.js'
import type { Tool } from '../tools/tool.js'
import { askApproval } from './approval.js'
import {
  runWaterfall,
  type ToolCallInfo,
  type ToolPreEvent,
  type ToolPreResult,
  type WaterfallListener,
} from './hooks.js'
import type { StepContext } from './turn-context.js'

export type ResultData = EventMap['tool/result']
/** The codes of the error results the agent itself writes (a tool's own failure is `tool-error`). */
export type ToolFailureCode =
  | 'unknown-tool'
  | 'invalid-arguments'
  | 'hook-failed'
  | 'denied'
  | 'not-approved'
  | 'canceled'
  | 'internal'
  | 'tool-error'
export type Outcome = {
  readonly result: ResultData
  readonly contexts: readonly UserMessageData[]
  /**
   * The agent built `result` from a tool's text and nobody else holds it: the log takes it
   * over without a copy (decision 0077). Absent where a tool or hook gave any part of it.
   */
  readonly isOwned?: true
}
export type Runnable = { readonly tool: Tool; readonly args: unknown; readonly rawArgs: JsonValue }
export type Plan =
  | { readonly kind: 'done'; readonly outcome: Outcome }
  | ({ readonly kind: 'run' } & Runnable)

/**
 * Decides one call, in call order; a cancel meanwhile gives it a `canceled` result. With no
 * `tool-pre` listener the decision is made at once, with no promise (bench B5+): the call runs
 * with its own arguments, as the waterfall's default would say.
 */
export function planCall(context: StepContext, call: ToolCallBlock): Plan | Promise<Plan> {
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
  const listeners = context.hooks.list('tool-pre')
  if (listeners.length === 0) return { kind: 'run', tool, args: parsed.args, rawArgs: call.args }
  return decide(context, call, tool, parsed.args, listeners)
}

const done = (outcome: Outcome): Plan => ({ kind: 'done', outcome })

/** The `tool-pre` waterfall, then the approver if it asks. */
async function decide(
  context: StepContext,
  call: ToolCallBlock,
  tool: Tool,
  parsedArgs: unknown,
  listeners: readonly WaterfallListener<ToolPreEvent, ToolPreResult>[],
): Promise<Plan> {
  const info: ToolCallInfo = { id: call.id, name: call.name, args: call.args }
  let decision: ToolPreResult
  try {
    decision = await runWaterfall(listeners, { call: info, signal: context.signal }, () => ({
      action: 'run',
    }))
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
      const runnable = replacedArguments(call, tool, parsedArgs, decision.args)
      if (runnable.kind === 'done') return runnable
      const asked = runnable.rawArgs === call.args ? info : { ...info, args: runnable.rawArgs }
      const approval = await askApproval({
        approve: context.approve,
        call: asked,
        reason: decision.reason,
        signal: context.signal,
        reportError: context.reportError,
      })
      if (context.signal.aborted) return done(canceledBeforeStart(call))
      if (!approval.approved) return done(failure(call, 'not-approved', approval.reason))
      return runnable
    }
    case 'run':
      return replacedArguments(call, tool, parsedArgs, decision.args)
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

export function failure(call: ToolCallBlock, code: ToolFailureCode, message: string): Outcome {
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

export function canceledBeforeStart(call: ToolCallBlock): Outcome {
  return failure(
    call,
    'canceled',
    `The tool ${call.name} did not run: the turn was canceled before it started.`,
  )
}
