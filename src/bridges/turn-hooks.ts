/**
 * Session and turn moments (docs/hooks.md, "Mapping"): `SessionStart` → `session-start`,
 * `UserPromptSubmit` → `prompt-submit`, `Stop` → `turn-stopping`, `StopFailure` after a turn
 * that ended in an error, `SessionEnd` when the session closes; and the `step` listener that
 * flushes held records and carries out a `continue: false` from a tool hook.
 */
import type {
  PromptSubmitEvent,
  PromptSubmitResult,
  SessionStartEvent,
  StepEvent,
  TurnStoppingEvent,
} from '../agent/index.js'
import { type EventMap, type JsonObject, textOf, type UserMessageData } from '../core/index.js'
import { type BridgeCore, hookContext } from './bridge-core.js'
import type { StopRequest } from './tool-hooks.js'
import { ok } from './tool-hooks.js'

export function createTurnHooks(core: BridgeCore, takeStop: () => StopRequest | undefined) {
  const { agent, session, options } = core

  async function sessionStart({ reason, signal }: SessionStartEvent): Promise<void> {
    const source = {
      claude: reason === 'new' ? 'startup' : reason,
      codex: reason === 'new' ? 'startup' : 'resume',
    }
    const planned = core
      .select({ claude: 'SessionStart', codex: 'SessionStart' }, (dialect) => [source[dialect]])
      .map((spec) => ({
        spec,
        input: {
          ...core.commonInput(spec.dialect, 'SessionStart'),
          source: source[spec.dialect],
          ...(spec.dialect === 'claude' ? { model: agent.settings.model } : {}),
        },
      }))
    const runs = ok(await core.run(planned, signal))
    core.hold(core.record(runs.all))
    for (const run of runs.answered) {
      // Exit 2 cannot block a session start: its stderr is for the person only.
      if (run.reply.decision === 'block' && run.reply.reason !== undefined)
        options.notify({ level: 'warning', source: 'hook:SessionStart', message: run.reply.reason })
      for (const text of run.reply.contexts)
        agent.inject(hookContext('session-start', run.spec, text))
    }
  }

  async function promptSubmit(
    { prompt, signal }: PromptSubmitEvent,
    next: () => Promise<PromptSubmitResult>,
  ): Promise<PromptSubmitResult> {
    const text = textOf(prompt.content)
    const planned = core
      .select({ claude: 'UserPromptSubmit', codex: 'UserPromptSubmit' })
      .map((spec) => ({
        spec,
        input: { ...core.commonInput(spec.dialect, 'UserPromptSubmit'), prompt: text },
      }))
    if (planned.length === 0) return next()
    const runs = ok(await core.run(planned, signal))
    const records = core.record(runs.all)
    // `continue: false` stops the prompt too; its stopReason, like a block's reason, is for the person.
    const stopping = runs.answered.find((run) => run.reply.stop)
    if (stopping)
      return {
        action: 'block',
        reason: stopping.reply.stop?.reason ?? 'A hook stopped this prompt.',
      }
    const blocking = runs.answered.filter((run) => run.reply.decision === 'block')
    if (blocking.length > 0)
      return {
        action: 'block',
        reason: blocking.map((run) => run.reply.reason ?? 'blocked by a hook').join('\n'),
      }
    const contexts: UserMessageData[] = runs.answered.flatMap((run) =>
      run.reply.contexts.map((context) => hookContext('prompt-submit', run.spec, context)),
    )
    const downstream = await next()
    if (downstream.action === 'block') return downstream
    // Admitted: the records join the turn that is about to open.
    core.hold(records)
    return { ...downstream, additionalContexts: [...downstream.additionalContexts, ...contexts] }
  }

  function step({ stop }: StepEvent): void {
    core.flush()
    if (takeStop()) stop()
  }

  async function turnStopping({ stopCount, signal, stop }: TurnStoppingEvent): Promise<void> {
    const planned = core.select({ claude: 'Stop', codex: 'Stop' }).map((spec) => ({
      spec,
      input: {
        ...core.commonInput(spec.dialect, 'Stop'),
        // True once a Stop hook has already kept this turn going.
        stop_hook_active: stopCount > 0,
        last_assistant_message: lastAssistantText() ?? null,
      },
    }))
    if (planned.length === 0) return
    const runs = ok(await core.run(planned, signal))
    core.record(runs.all)
    // continue: false wins over every request to go on.
    const stopping = runs.answered.find((run) => run.reply.stop)
    if (stopping) {
      const reason = stopping.reply.stop?.reason
      if (reason !== undefined)
        options.notify({ level: 'warning', source: 'hook:Stop', message: reason })
      stop()
      return
    }
    for (const run of runs.answered) {
      if (run.reply.decision === 'block')
        agent.steer(
          hookContext(
            'turn-stopping',
            run.spec,
            run.reply.reason ?? 'A Stop hook asked to continue.',
          ),
        )
      // Claude Code's non-error feedback keeps the turn going as well.
      if (run.spec.dialect === 'claude')
        for (const context of run.reply.contexts)
          agent.steer(hookContext('turn-stopping', run.spec, context))
    }
  }

  /** `StopFailure`: after a turn that ended in an error; output ignored, as documented. */
  function afterTurnEnd(data: EventMap['turn/end']): void {
    if (data.reason.kind !== 'error') return
    const error = errorType(data.reason.code)
    const specs = core.select({ claude: 'StopFailure' }, () => [error])
    if (specs.length === 0) return
    const planned = specs.map((spec) => ({
      spec,
      input: {
        ...core.commonInput('claude', 'StopFailure'),
        error,
        error_details: data.reason.kind === 'error' ? data.reason.message : '',
        last_assistant_message: lastAssistantText() ?? '',
      } as JsonObject,
    }))
    void core.run(planned, AbortSignal.timeout(60_000)).then((runs) => {
      for (const run of runs) if (run.reply.status === 'error') core.report(run)
    })
  }

  /** `SessionEnd` (Claude Code), when the session closes; JSON output is discarded. */
  async function sessionEnd(reason: string): Promise<void> {
    const specs = core.select({ claude: 'SessionEnd' }, () => [reason])
    const planned = specs.map((spec) => ({
      spec,
      input: { ...core.commonInput('claude', 'SessionEnd'), reason },
    }))
    const runs = await core.run(planned, AbortSignal.timeout(60_000))
    for (const run of runs) {
      if (run.reply.status === 'error') core.report(run)
      else if (run.reply.decision === 'block' && run.reply.reason)
        options.notify({ level: 'warning', source: 'hook:SessionEnd', message: run.reply.reason })
    }
  }

  /**
   * The text of the last assistant message of the current (or just ended) turn. Its events were
   * logged after the session was opened, so they are held in memory; an event not held is
   * before the turn (docs/spec.md §9.2).
   */
  function lastAssistantText(): string | undefined {
    for (let seq = session.nextSeq - 1; seq >= 0; seq--) {
      const event = session.eventAt(seq)
      if (event === undefined || event.type === 'turn/start') return undefined
      if (event.type === 'assistant/message')
        return textOf(
          (event.data as EventMap['assistant/message']).content.filter(
            (block) => block.type === 'text',
          ),
        )
    }
    return undefined
  }

  return { sessionStart, promptSubmit, step, turnStopping, afterTurnEnd, sessionEnd }
}

/** Claude Code's StopFailure error types, guessed from rudder's error code. */
function errorType(code: string): string {
  if (/rate|429/.test(code)) return 'rate_limit'
  if (/overload|529/.test(code)) return 'overloaded'
  if (/auth|401|403/.test(code)) return 'authentication_failed'
  if (/not.found|404/.test(code)) return 'model_not_found'
  if (/5\d\d|server/.test(code)) return 'server_error'
  if (/request|400/.test(code)) return 'invalid_request'
  return 'unknown'
}
