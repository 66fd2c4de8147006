/**
 * Runs the tool calls of one assistant message (docs/spec.md §7, §6.3, §6.4): every call gets exactly
 * one result, results are logged in call order, parallel calls run together and exclusive
 * ones alone, and contexts returned by `tool-post` are staged so they follow all results.
 */
import {
  appendOwned,
  type ContentBlock,
  messageOf,
  optional,
  type ToolCallBlock,
  type UserMessageData,
} from '../core/index.js'
import type { ToolContext, ToolOutput } from '../tools/tool.js'
import { type Deferred, defer } from './deferred.js'
import {
  runWaterfall,
  type ToolCallInfo,
  type ToolPostEvent,
  type ToolPostResult,
  type WaterfallListener,
} from './hooks.js'
import { toUserMessage } from './inputs.js'
import { truncateResult } from './tool-output.js'
import {
  canceledBeforeStart,
  failure,
  type Outcome,
  type Plan,
  planCall,
  type ResultData,
  type Runnable,
  type ToolFailureCode,
} from './tool-plan.js'
import type { StepContext } from './turn-context.js'

/** One call of the batch: what was decided for it, and its outcome once known. */
type Slot = {
  readonly call: ToolCallBlock
  /** The call as the assistant message logged it. */
  readonly logged: ToolCallBlock | undefined
  readonly plan: Plan
  readonly outcome: Deferred<Outcome>
}
type RunSlot = Slot & { readonly plan: Extract<Plan, { kind: 'run' }> }
const isRunSlot = (slot: Slot): slot is RunSlot => slot.plan.kind === 'run'

/** How a batch ended: canceled part-way, and whether a tool asked to conclude the turn. */
export type BatchOutcome = { readonly isCanceled: boolean; readonly concludesTurn: boolean }

/**
 * `calls` as the provider made them (tools and hooks get these), `logged` the same calls as
 * the assistant message's blocks hold them, in the same order.
 */
export function runToolBatch(
  context: StepContext,
  turn: number,
  step: number,
  calls: readonly ToolCallBlock[],
  logged: readonly ToolCallBlock[],
): Promise<BatchOutcome> {
  const [only] = calls
  return calls.length === 1 && only
    ? runOneCall(context, turn, step, only, logged[0])
    : runBatch(context, turn, step, calls, logged)
}

async function runBatch(
  context: StepContext,
  turn: number,
  step: number,
  calls: readonly ToolCallBlock[],
  logged: readonly ToolCallBlock[],
): Promise<BatchOutcome> {
  const slots: Slot[] = []
  // Decide every call first, in call order: unknown tools, bad arguments, hooks and approval.
  let index = 0
  for (const call of calls) {
    const planned = planCall(context, call)
    const plan = planned instanceof Promise ? await planned : planned
    const outcome = defer<Outcome>()
    if (plan.kind === 'done') outcome.resolve(plan.outcome)
    slots.push({ call, logged: logged[index++], plan, outcome })
  }
  const logging = logInCallOrder(context, slots)

  const executions: Execution[] = []
  try {
    for (const group of executionGroups(slots)) {
      // A cancel can arrive while the group's tool/call events are appended (an observer of
      // them may cancel): calls not logged as started by then never start.
      const started: RunSlot[] = []
      for (const slot of group) {
        if (context.signal.aborted) {
          slot.outcome.resolve(canceledBeforeStart(slot.call))
          continue
        }
        logStart(context, slot.call, slot.logged, slot.plan)
        started.push(slot)
      }
      if (started.length === 0) continue
      // Durability point: a tool's side effects never precede the record that it started.
      await context.session.flush()
      await Promise.all(
        started.map(async ({ call, plan, outcome }) => {
          const execution: Execution = { turn, step, call, plan, concludesTurn: false }
          executions.push(execution)
          outcome.resolve(await executeCall(context, execution))
        }),
      )
    }
  } finally {
    // Whatever failed above (a store write), no call may be left without a result.
    for (const { call, outcome } of slots) {
      if (!outcome.isSettled)
        outcome.resolve(
          failure(
            call,
            'internal',
            `The tool ${call.name} did not run: the agent failed before starting it.`,
          ),
        )
    }
  }
  await logging
  const concludesTurn = executions.some((execution) => execution.concludesTurn)
  return batchOutcome(context.signal.aborted, concludesTurn)
}

/**
 * A message with one call (the usual case), as `runToolBatch` runs it, in the same order:
 * decided, `tool/call`, a durability point, the tool, its result, its `tool-post` contexts.
 * With no slots, deferred outcomes and in-order logger, a step allocates a quarter less
 * (bench B5+).
 */
async function runOneCall(
  context: StepContext,
  turn: number,
  step: number,
  call: ToolCallBlock,
  logged: ToolCallBlock | undefined,
): Promise<BatchOutcome> {
  const planned = planCall(context, call)
  const plan = planned instanceof Promise ? await planned : planned
  let outcome: Outcome | undefined
  let execution: Execution | undefined
  try {
    if (plan.kind === 'done') outcome = plan.outcome
    else if (context.signal.aborted) outcome = canceledBeforeStart(call)
    else {
      logStart(context, call, logged, plan)
      // Durability point: a tool's side effects never precede the record that it started.
      await context.session.flush()
      execution = { turn, step, call, plan, concludesTurn: false }
      const executed = executeCall(context, execution)
      outcome = executed instanceof Promise ? await executed : executed
    }
  } finally {
    if (!outcome) {
      // Whatever failed above (a store write), the call may not be left without a result;
      // the failure itself goes on to stop the agent.
      const internal = failure(
        call,
        'internal',
        `The tool ${call.name} did not run: the agent failed before starting it.`,
      )
      try {
        context.session.append('tool/result', internal.result)
      } catch {
        // The store that failed refuses this too; crash repair gives the call its result.
      }
    }
  }
  logResult(context, outcome)
  // Indexed: a `for…of` over the frozen empty list made an iterator a step (bench B5+).
  const { contexts } = outcome
  for (let index = 0; index < contexts.length; index++)
    context.stage(contexts[index] as UserMessageData)
  return batchOutcome(context.signal.aborted, execution?.concludesTurn === true)
}

/**
 * Logs a call's `tool/call`. With the arguments the provider sent, it takes over the logged
 * call's frozen arguments: the log holds them already, in the assistant message (decision
 * 0079). Arguments a `tool-pre` hook put in are the hook's value: copied.
 */
function logStart(
  context: StepContext,
  call: ToolCallBlock,
  logged: ToolCallBlock | undefined,
  plan: Runnable,
): void {
  if (logged && plan.rawArgs === call.args)
    appendOwned(context.session, 'tool/call', {
      callId: logged.id,
      name: logged.name,
      args: logged.args,
    })
  else context.session.append('tool/call', { callId: call.id, name: call.name, args: plan.rawArgs })
}

// The four outcomes a batch can have, made once (bench B5+).
const NEXT_BATCH: BatchOutcome = Object.freeze({ isCanceled: false, concludesTurn: false })
const CONCLUDING: BatchOutcome = Object.freeze({ isCanceled: false, concludesTurn: true })
const CANCELED: BatchOutcome = Object.freeze({ isCanceled: true, concludesTurn: false })
const CANCELED_CONCLUDING: BatchOutcome = Object.freeze({ isCanceled: true, concludesTurn: true })

function batchOutcome(isCanceled: boolean, concludesTurn: boolean): BatchOutcome {
  if (isCanceled) return concludesTurn ? CANCELED_CONCLUDING : CANCELED
  return concludesTurn ? CONCLUDING : NEXT_BATCH
}

/**
 * Logs each result in call order as soon as it and all before it are known (docs/spec.md §3.3
 * rule 3), and stages its `tool-post` contexts, so they follow every result of the batch.
 */
function logInCallOrder(context: StepContext, slots: readonly Slot[]): Promise<void> {
  const logging = (async () => {
    for (const { outcome } of slots) {
      const settled = await outcome.promise
      logResult(context, settled)
      for (const additional of settled.contexts) context.stage(additional)
    }
  })()
  // Awaited by the batch; until then this only keeps a failed append from counting as unhandled.
  logging.catch(() => {})
  return logging
}

/** Consecutive parallel calls share a group; an exclusive call runs alone. Calls already decided run nowhere. */
function executionGroups(slots: readonly Slot[]): RunSlot[][] {
  const groups: RunSlot[][] = []
  let current: RunSlot[] = []
  for (const slot of slots) {
    if (!isRunSlot(slot)) continue
    if (slot.plan.tool.concurrency === 'exclusive') {
      if (current.length > 0) groups.push(current)
      groups.push([slot])
      current = []
    } else current.push(slot)
  }
  if (current.length > 0) groups.push(current)
  return groups
}

const NO_CONTEXTS: readonly UserMessageData[] = Object.freeze([])

/** One call being run; `concludesTurn` is set by the tool's `context.concludeTurn()`. */
type Execution = {
  readonly turn: number
  readonly step: number
  readonly call: ToolCallBlock
  readonly plan: Runnable
  concludesTurn: boolean
}

/**
 * Runs one call, then its `tool-post` waterfall, then keeps its result under the limit. A
 * tool that answers at once, with no `tool-post` listener and a result within the limit, is
 * done with no promise at all (bench B5+).
 */
function executeCall(context: StepContext, execution: Execution): Outcome | Promise<Outcome> {
  const { call, plan } = execution
  // Methods rather than arrow functions: they use no `this`, so a tool may still take them
  // out of the context.
  const toolContext: ToolContext = {
    signal: context.signal,
    callId: call.id,
    cwd: context.cwd,
    session: context.session,
    agent: context.agent,
    update(progress) {
      context.emit({
        type: 'tool/progress',
        turn: execution.turn,
        step: execution.step,
        callId: call.id,
        name: call.name,
        progress,
      })
    },
    concludeTurn() {
      execution.concludesTurn = true
    },
  }
  let output: ToolOutput | Promise<ToolOutput>
  try {
    output = plan.tool.execute(plan.args, toolContext)
  } catch (error) {
    return afterTool(context, execution, toolFailed(call, error), false)
  }
  if (isPromiseLike(output)) return settleTool(context, execution, output)
  let result: ResultData
  try {
    result = toResult(call, output)
  } catch (error) {
    result = toolFailed(call, error)
  }
  return afterTool(context, execution, result, typeof output === 'string')
}

async function settleTool(
  context: StepContext,
  execution: Execution,
  output: PromiseLike<ToolOutput>,
): Promise<Outcome> {
  let result: ResultData
  try {
    result = toResult(execution.call, await output)
  } catch (error) {
    result = toolFailed(execution.call, error)
  }
  const outcome = afterTool(context, execution, result, false)
  return outcome instanceof Promise ? await outcome : outcome
}

/** The error result of a tool that threw (or returned what no result can be made of). */
function toolFailed(call: ToolCallBlock, error: unknown): ResultData {
  const message = messageOf(error)
  return {
    callId: call.id,
    name: call.name,
    content: [{ type: 'text', text: `Error: ${message}` }],
    isError: true,
    error: { code: 'tool-error' satisfies ToolFailureCode, message },
  }
}

/** The `tool-post` waterfall (unless the turn was canceled), then the limit. */
/** `isBuilt`: the agent made `result` itself (from a tool's text), so nobody else holds it. */
function afterTool(
  context: StepContext,
  execution: Execution,
  result: ResultData,
  isBuilt: boolean,
): Outcome | Promise<Outcome> {
  const listeners = context.hooks.list('tool-post')
  if (listeners.length > 0 && !context.signal.aborted)
    return postAndKeep(context, execution, result, listeners)
  const kept = keep(context, result)
  if (kept instanceof Promise)
    return kept.then((truncated) => ({ result: truncated, contexts: NO_CONTEXTS }))
  return isBuilt && kept === result
    ? { result: kept, contexts: NO_CONTEXTS, isOwned: true }
    : { result: kept, contexts: NO_CONTEXTS }
}

/**
 * Logs a call's result: handed over when the agent built it (decision 0077), else copied, as
 * a tool's or a hook's value may still be held by them.
 */
function logResult(context: StepContext, outcome: Outcome): void {
  if (outcome.isOwned) appendOwned(context.session, 'tool/result', outcome.result)
  else context.session.append('tool/result', outcome.result)
}

async function postAndKeep(
  context: StepContext,
  { call, plan }: Execution,
  toolResult: ResultData,
  listeners: readonly WaterfallListener<ToolPostEvent, ToolPostResult>[],
): Promise<Outcome> {
  let result = toolResult
  let contexts: readonly UserMessageData[] = []
  const info: ToolCallInfo = { id: call.id, name: call.name, args: plan.rawArgs }
  try {
    const post: ToolPostResult = await runWaterfall(
      listeners,
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
  return { result: await keep(context, result), contexts }
}

function keep(context: StepContext, result: ResultData): ResultData | Promise<ResultData> {
  return truncateResult({
    result,
    limit: context.toolOutput.limit,
    dir: context.toolOutput.dir,
    sessionId: context.session.header.id,
  })
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

function toResult(call: ToolCallBlock, output: ToolOutput): ResultData {
  const { id: callId, name } = call
  if (typeof output === 'string')
    return { callId, name, content: [{ type: 'text', text: output }], isError: false }
  if (Array.isArray(output))
    return { callId, name, content: output as readonly ContentBlock[], isError: false }
  if (
    typeof output === 'object' &&
    output !== null &&
    Array.isArray((output as { content?: unknown }).content)
  ) {
    const { content, isError, meta } = output as Exclude<
      ToolOutput,
      string | readonly ContentBlock[]
    >
    return { callId, name, content, isError: isError === true, ...optional('meta', meta) }
  }
  throw new TypeError(
    `the tool returned ${JSON.stringify(output)}; a tool must return a string, content blocks, or { content, isError?, meta? }`,
  )
}
