/**
 * Tool moments (docs/hooks.md, "Mapping"): `PreToolUse` → `tool-pre` (deny > ask > allow,
 * `updatedInput` mapped back to the tool's arguments before the call is logged),
 * `PostToolUse` / `PostToolUseFailure` → `tool-post`, and, around the agent's approve callback,
 * `PermissionRequest` (answer for the person) and `Notification` (`permission_prompt`).
 */
import type {
  ApprovalDecision,
  ApproveCallback,
  ToolPostEvent,
  ToolPostResult,
  ToolPreEvent,
  ToolPreResult,
} from '../agent/index.js'
import { type JsonValue, textOf, type UserMessageData } from '../core/index.js'
import { type BridgeCore, hookContext } from './bridge-core.js'
import type { Dialect } from './hook-config.js'
import type { HookRun, PlannedRun } from './hook-runs.js'
import { claudeToolName, fromUpdatedInput, toolView } from './tool-input.js'

/** What a hook's `continue: false` leaves for the next `step` to do. */
export type StopRequest = { reason?: string }

export function createToolHooks(core: BridgeCore, requestStop: (request: StopRequest) => void) {
  const { cwd } = core.options

  /** The runs of `events` for one call, each dialect seeing the call its own way. */
  function plan(
    events: Readonly<Partial<Record<Dialect, string>>>,
    call: { readonly id: string; readonly name: string; readonly args: JsonValue },
    extra: (dialect: Dialect) => Record<string, JsonValue>,
  ): PlannedRun[] {
    const views = {
      claude: toolView('claude', call.name, call.args, cwd),
      codex: toolView('codex', call.name, call.args, cwd),
    }
    return core
      .select(events, (dialect) => views[dialect]?.matchNames)
      .map((spec) => {
        const view = views[spec.dialect]!
        return {
          spec,
          input: {
            ...core.commonInput(spec.dialect, spec.event),
            tool_name: view.toolName,
            tool_input: view.toolInput,
            ...extra(spec.dialect),
          },
        }
      })
  }

  async function toolPre(
    { call, signal }: ToolPreEvent,
    next: () => Promise<ToolPreResult>,
  ): Promise<ToolPreResult> {
    const planned = plan({ claude: 'PreToolUse', codex: 'PreToolUse' }, call, () => ({
      tool_use_id: call.id,
    }))
    if (planned.length === 0) return next()
    const runs = ok(await core.run(planned, signal))
    core.record(runs.all, { callId: call.id })
    for (const run of runs.answered)
      for (const text of run.reply.contexts)
        core.agent.inject(hookContext('tool-pre', run.spec, text))
    const stopping = runs.answered.find((run) => run.reply.stop)
    if (stopping) {
      const reason = stopping.reply.stop?.reason
      requestStop(reason === undefined ? {} : { reason })
      return { action: 'deny', reason: reason ?? 'A hook stopped the agent before this call.' }
    }
    const denying = runs.answered.filter((run) => run.reply.decision === 'deny')
    if (denying.length > 0)
      return {
        action: 'deny',
        reason:
          denying
            .map((run) => run.reply.reason)
            .filter((reason) => reason !== undefined && reason !== '')
            .join('\n') || `A PreToolUse hook denied ${claudeToolName(call.name)}.`,
      }
    // updatedInput: the last in config order wins (runs are in config order, not finish order).
    let args: JsonValue | undefined
    for (const run of runs.answered) {
      if (run.reply.updatedInput === undefined) continue
      const mapped = fromUpdatedInput({
        dialect: run.spec.dialect,
        name: call.name,
        originalArgs: call.args,
        updatedInput: run.reply.updatedInput,
        cwd,
      })
      if ('error' in mapped)
        core.options.notify({
          level: 'warning',
          source: 'hook:PreToolUse',
          message: `${run.spec.command}: ${mapped.error}; the call runs with its own arguments.`,
        })
      else args = mapped.args
    }
    const asking = runs.answered.filter((run) => run.reply.decision === 'ask')
    const downstream = await next()
    if (downstream.action === 'deny') return downstream
    const finalArgs = downstream.args ?? args
    const withArgs = finalArgs === undefined ? {} : { args: finalArgs }
    if (asking.length > 0 || downstream.action === 'ask') {
      const reason =
        asking.map((run) => run.reply.reason).find((text) => text !== undefined) ??
        (downstream.action === 'ask' ? downstream.reason : undefined)
      return { action: 'ask', ...(reason === undefined ? {} : { reason }), ...withArgs }
    }
    return { action: 'run', ...withArgs }
  }

  async function toolPost(
    event: ToolPostEvent,
    next: () => Promise<ToolPostResult>,
  ): Promise<ToolPostResult> {
    const downstream = await next()
    const { call, signal } = event
    const text = textOf(downstream.content)
    const planned = plan(
      { claude: downstream.isError ? 'PostToolUseFailure' : 'PostToolUse', codex: 'PostToolUse' },
      call,
      (dialect) =>
        dialect === 'claude' && downstream.isError
          ? { tool_use_id: call.id, error: text, is_interrupt: false }
          : { tool_use_id: call.id, tool_response: text },
    )
    if (planned.length === 0) return downstream
    const runs = ok(await core.run(planned, signal))
    core.record(runs.all, { callId: call.id })
    let content = downstream.content
    const contexts: UserMessageData[] = []
    for (const run of runs.answered) {
      const { reply, spec } = run
      for (const context of reply.contexts) contexts.push(hookContext('tool-post', spec, context))
      if (spec.dialect === 'codex') {
        // Codex replaces the tool result with the feedback (or the stop text).
        const feedback = reply.decision === 'block' ? reply.reason : undefined
        const replacement = reply.stop ? (reply.stop.reason ?? feedback) : feedback
        if (replacement !== undefined) content = [{ type: 'text', text: replacement }]
        continue
      }
      // Claude Code shows the reason next to the result, which stays as it was.
      if (reply.decision === 'block' && reply.reason !== undefined)
        contexts.push(hookContext('tool-post', spec, reply.reason))
      if (reply.updatedOutput !== undefined) content = [{ type: 'text', text: reply.updatedOutput }]
      if (reply.stop)
        requestStop(reply.stop.reason === undefined ? {} : { reason: reply.stop.reason })
    }
    return {
      content,
      isError: downstream.isError,
      additionalContexts: [...downstream.additionalContexts, ...contexts],
    }
  }

  /** Wraps the agent's approve callback with PermissionRequest and Notification hooks. */
  function wrapApprove(approve: ApproveCallback): ApproveCallback {
    return async (request) => {
      const { call, signal } = request
      notifyPermissionPrompt(call.name, signal)
      const planned = plan(
        { claude: 'PermissionRequest', codex: 'PermissionRequest' },
        call,
        () => ({}),
      )
      // Codex adds the approval reason to the input as `description`.
      const withReason = planned.map((entry) =>
        entry.spec.dialect === 'codex' &&
        request.reason !== undefined &&
        isObject(entry.input.tool_input)
          ? {
              ...entry,
              input: {
                ...entry.input,
                tool_input: { ...entry.input.tool_input, description: request.reason },
              },
            }
          : entry,
      )
      if (withReason.length > 0) {
        const runs = ok(await core.run(withReason, signal))
        core.record(runs.all, { callId: call.id })
        const deny = runs.answered.find((run) => run.reply.decision === 'deny')
        if (deny)
          return {
            approved: false,
            reason: deny.reply.reason ?? 'A PermissionRequest hook denied this call.',
          } satisfies ApprovalDecision
        if (runs.answered.some((run) => run.reply.decision === 'allow')) return true
      }
      return approve(request)
    }
  }

  /** Claude Code's `Notification` with `permission_prompt`: side effects only, not awaited. */
  function notifyPermissionPrompt(name: string, signal: AbortSignal): void {
    const specs = core.select({ claude: 'Notification' }, () => ['permission_prompt'])
    if (specs.length === 0) return
    const planned = specs.map((spec) => ({
      spec,
      input: {
        ...core.commonInput('claude', 'Notification'),
        message: `rudder needs your permission to use ${claudeToolName(name)}`,
        title: 'Permission needed',
        notification_type: 'permission_prompt',
      },
    }))
    // Output is ignored, as documented; the runs are logged if their turn is still open.
    void core.run(planned, signal).then((runs) => {
      if (core.isTurnOpen()) core.record(runs)
      else for (const run of runs) core.report(run)
    })
  }

  return { toolPre, toolPost, wrapApprove }
}

const isObject = (value: JsonValue | undefined): value is { [key: string]: JsonValue } =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The runs, and those that answered (not failed, not canceled), both in config order. */
export function ok(runs: HookRun[]): { all: HookRun[]; answered: HookRun[] } {
  return { all: runs, answered: runs.filter((run) => run.reply.status === 'ok') }
}
