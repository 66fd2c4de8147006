/**
 * Turning what listeners and turns produce into the agent's results: a checked admission
 * decision, and the delivery result of a turn that ended.
 */
import { type DeliveryResult, optional } from '../core/index.js'
import type { PromptSubmitResult } from './hooks.js'
import { toUserMessage } from './inputs.js'
import type { TurnOutcome } from './turn.js'

/** The delivery result of a prompt (or steering) whose turn ended. */
export function deliveryResult(outcome: TurnOutcome, turn: number): DeliveryResult {
  const text = optional('text', outcome.text)
  const reason = outcome.reason
  switch (reason.kind) {
    case 'completed':
    case 'max-tokens':
    case 'step-limit':
    case 'stop-limit':
    case 'canceled':
      return { status: reason.kind, turn, ...text }
    case 'error':
      return {
        status: 'error',
        turn,
        ...text,
        error: { code: reason.code, message: reason.message },
      }
    case 'interrupted':
      return {
        status: 'error',
        turn,
        ...text,
        error: { code: 'interrupted', message: 'the turn was interrupted' },
      }
  }
}

/** Checks what the prompt-submit waterfall returned; a malformed result throws (and blocks). */
export function checkAdmission(result: unknown): PromptSubmitResult {
  const value = result as Partial<Record<string, unknown>> | undefined
  if (value?.action === 'block') {
    return {
      action: 'block',
      reason: typeof value.reason === 'string' ? value.reason : 'blocked by a prompt-submit hook',
    }
  }
  if (value?.action !== 'admit')
    throw new TypeError(
      `a prompt-submit listener must return { action: 'admit', … } or { action: 'block', reason }, got ${JSON.stringify(result)}`,
    )
  const content = toUserMessage(
    { content: value.content, source: { kind: 'user' } },
    'prompt-submit content',
  ).content
  const contexts = value.additionalContexts ?? []
  if (!Array.isArray(contexts))
    throw new TypeError(
      'a prompt-submit result needs additionalContexts to be an array of { content, source }',
    )
  return {
    action: 'admit',
    content,
    additionalContexts: contexts.map((context) =>
      toUserMessage(context, 'prompt-submit additionalContexts'),
    ),
  }
}
