/**
 * fast-check arbitraries for valid session logs. A log is generated as a plan of random
 * choices, then assembled, so every generated log satisfies docs/spec.md §3.3 by construction.
 */
import fc from 'fast-check'
import type { EventMap, JsonValue, SessionEvent } from '../../src/index.js'
import type { Entry } from './log-builder.js'

type CallPlan = { started: boolean; isError: boolean; text: string; args: JsonValue }
type StepPlan = {
  text: string
  thinking: string | undefined
  calls: CallPlan[]
  header: boolean
  between: ('steer' | 'context' | 'compaction')[]
}
type TurnPlan = {
  trigger: 'prompt' | 'continue'
  prompt: string
  contexts: string[]
  steps: StepPlan[]
  end: EventMap['turn/end']['reason']
}
type SegmentPlan =
  | { kind: 'user'; text: string; meta: JsonValue | undefined }
  | { kind: 'compaction'; pick: number }
  | { kind: 'turn'; turn: TurnPlan }

const text = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.constantFrom(
    '<system-reminder>\nbe careful\n</system-reminder>',
    'héllo 🌍',
    '',
    '  spaced  ',
  ),
)
const json: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>

const callPlan: fc.Arbitrary<CallPlan> = fc.record({
  started: fc.boolean(),
  isError: fc.boolean(),
  text,
  args: json,
})
const stepPlan: fc.Arbitrary<StepPlan> = fc.record({
  text,
  thinking: fc.option(text, { nil: undefined }),
  calls: fc.array(callPlan, { maxLength: 3 }),
  header: fc.boolean(),
  between: fc.array(fc.constantFrom('steer' as const, 'context' as const, 'compaction' as const), {
    maxLength: 2,
  }),
})
const endReason: fc.Arbitrary<EventMap['turn/end']['reason']> = fc.constantFrom(
  { kind: 'completed' },
  { kind: 'max-tokens' },
  { kind: 'step-limit' },
  { kind: 'canceled', cause: 'user' },
  { kind: 'error', code: 'provider', message: 'boom' },
  { kind: 'interrupted' },
  { kind: 'stop-limit' },
)
const turnPlan: fc.Arbitrary<TurnPlan> = fc.record({
  trigger: fc.constantFrom('prompt' as const, 'continue' as const),
  prompt: text,
  contexts: fc.array(text, { maxLength: 2 }),
  steps: fc.array(stepPlan, { maxLength: 3 }),
  end: endReason,
})
const segmentPlan: fc.Arbitrary<SegmentPlan> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('user' as const),
      text,
      meta: fc.option(json, { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compaction' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('turn' as const), turn: turnPlan }) },
)

/** Random valid logs (possibly empty) of up to `maxSegments` turns and between-turn events. */
export function validLog(maxSegments = 6): fc.Arbitrary<SessionEvent[]> {
  return fc.array(segmentPlan, { maxLength: maxSegments }).map(assemble)
}

/** Random valid logs with at least one turn. */
export function validLogWithTurn(): fc.Arbitrary<SessionEvent[]> {
  return fc
    .tuple(validLog(3), turnPlan, validLog(2))
    .map(([before, turn, after]) =>
      assemble([...plansOf(before), { kind: 'turn', turn }, ...plansOf(after)]),
    )
}

// Logs are assembled from plans; to splice generated logs we keep their plans on the array.
const PLANS = Symbol('plans')
function plansOf(events: SessionEvent[]): SegmentPlan[] {
  return (events as SessionEvent[] & { [PLANS]?: SegmentPlan[] })[PLANS] ?? []
}

function assemble(plans: SegmentPlan[]): SessionEvent[] {
  const entries: Entry[] = []
  const boundaries: number[] = []
  let turnNumber = 0
  let ids = 0
  const content = (value: string) => [{ type: 'text' as const, text: value }]
  const push = (entry: Entry, isBoundary = false) => {
    if (isBoundary) boundaries.push(entries.length)
    entries.push(entry)
  }
  const compaction = (pick: number): Entry => {
    const seq = entries.length
    const firstKeptSeq =
      boundaries.length === 0 ? seq : (boundaries[pick % boundaries.length] ?? seq)
    return [
      'compaction',
      {
        id: `c${++ids}`,
        summary: content(`summary ${ids}`),
        firstKeptSeq,
        reason: 'auto',
        tokensBefore: 1000,
        tokensAfter: 100,
      },
    ]
  }
  for (const plan of plans) {
    if (plan.kind === 'user') {
      push(
        [
          'user/message',
          {
            id: `m${++ids}`,
            content: content(plan.text),
            source: { kind: 'plugin', name: 'gen' },
            ...(plan.meta === undefined ? {} : { meta: plan.meta }),
          },
        ],
        true,
      )
      continue
    }
    if (plan.kind === 'compaction') {
      push(compaction(plan.pick))
      continue
    }
    const turn = ++turnNumber
    const { trigger, prompt, contexts, steps, end } = plan.turn
    push(['turn/start', { turn, trigger }], true)
    if (trigger === 'prompt')
      push(
        ['user/message', { id: `m${++ids}`, content: content(prompt), source: { kind: 'user' } }],
        true,
      )
    for (const context of contexts)
      push(
        [
          'user/message',
          { id: `m${++ids}`, content: content(context), source: { kind: 'plugin', name: 'ctx' } },
        ],
        true,
      )
    steps.forEach((step, index) => {
      const stepNumber = index + 1
      push(['step/start', { turn, step: stepNumber }], true)
      if (step.header)
        push([
          'request/header',
          {
            provider: 'scripted',
            model: 'm',
            system: `system ${stepNumber}`,
            tools: [],
            params: {},
          },
        ])
      const calls = step.calls.map((call, callIndex) => ({
        ...call,
        id: `t${turn}-${stepNumber}-${callIndex}`,
        name: `tool${callIndex}`,
      }))
      push([
        'assistant/message',
        {
          id: `a${++ids}`,
          content: [
            ...(step.thinking === undefined
              ? []
              : [{ type: 'thinking' as const, text: step.thinking }]),
            ...(step.text === '' ? [] : [{ type: 'text' as const, text: step.text }]),
            ...calls.map((call) => ({
              type: 'tool-call' as const,
              id: call.id,
              name: call.name,
              args: call.args,
            })),
          ],
          provider: 'scripted',
          model: 'm',
          stopReason: calls.length > 0 ? 'tool-calls' : 'stop',
          usage: { inputTokens: 10, outputTokens: 5 },
        },
      ])
      for (const call of calls)
        if (call.started) push(['tool/call', { callId: call.id, name: call.name, args: call.args }])
      for (const call of calls)
        push([
          'tool/result',
          { callId: call.id, name: call.name, content: content(call.text), isError: call.isError },
        ])
      push(['step/end', { turn, step: stepNumber }])
      for (const item of step.between) {
        if (item === 'steer')
          push(
            [
              'steering/message',
              { id: `m${++ids}`, content: content('steer'), source: { kind: 'user' }, turn },
            ],
            true,
          )
        else if (item === 'context')
          push(
            [
              'user/message',
              { id: `m${++ids}`, content: content('ctx'), source: { kind: 'plugin', name: 'ctx' } },
            ],
            true,
          )
        else push(compaction(ids))
      }
    })
    push(['turn/end', { turn, reason: end }])
  }
  const events = entries.map(
    ([type, data], seq) => ({ seq, time: 1_700_000_000_000 + seq, type, data }) as SessionEvent,
  )
  Object.defineProperty(events, PLANS, { value: plans, enumerable: false })
  return events
}
