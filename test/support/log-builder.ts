/**
 * Builds logs for tests from a compact description: each entry is `[type, data]`; seqs and
 * times are assigned in order. Lets a test state a whole log on a few lines.
 */
import type { EventMap, EventType, SessionEvent } from '../../src/index.js'

export type Entry = { [K in EventType]: readonly [K, EventMap[K]] }[EventType]

export function buildLog(entries: readonly Entry[]): SessionEvent[] {
  return entries.map(
    ([type, data], seq) => ({ seq, time: 1_700_000_000_000 + seq, type, data }) as SessionEvent,
  )
}

/** Renumbers seqs after a test has inserted or removed events. */
export function renumber(events: readonly SessionEvent[]): SessionEvent[] {
  return events.map((event, seq) => ({ ...event, seq }))
}

let nextId = 0
const id = (prefix: string) => `${prefix}-${++nextId}`

export const user = (text: string, kind = 'user'): Entry => [
  'user/message',
  {
    id: id('m'),
    content: [{ type: 'text', text }],
    source: kind === 'user' ? { kind: 'user' } : { kind: 'plugin', name: kind },
  },
]
export const steering = (text: string, turn: number): Entry => [
  'steering/message',
  { id: id('m'), content: [{ type: 'text', text }], source: { kind: 'user' }, turn },
]
export const turnStart = (turn: number, trigger: 'prompt' | 'continue' = 'prompt'): Entry => [
  'turn/start',
  { turn, trigger },
]
export const turnEnd = (turn: number): Entry => [
  'turn/end',
  { turn, reason: { kind: 'completed' } },
]
export const stepStart = (turn: number, step: number): Entry => ['step/start', { turn, step }]
export const stepEnd = (turn: number, step: number): Entry => ['step/end', { turn, step }]
export const header = (system = 'be brief'): Entry => [
  'request/header',
  { provider: 'scripted', model: 'test', system, tools: [], params: {} },
]
export const assistant = (
  text: string,
  calls: readonly { id: string; name?: string }[] = [],
): Entry => [
  'assistant/message',
  {
    id: id('a'),
    content: [
      ...(text === '' ? [] : [{ type: 'text' as const, text }]),
      ...calls.map((call) => ({
        type: 'tool-call' as const,
        id: call.id,
        name: call.name ?? 'echo',
        args: {},
      })),
    ],
    provider: 'scripted',
    model: 'test',
    stopReason: calls.length > 0 ? 'tool-calls' : 'stop',
    usage: { inputTokens: 1, outputTokens: 1 },
  },
]
export const toolCall = (callId: string, name = 'echo'): Entry => [
  'tool/call',
  { callId, name, args: {} },
]
export const toolResult = (callId: string, text = 'ok', name = 'echo'): Entry => [
  'tool/result',
  { callId, name, content: [{ type: 'text', text }], isError: false },
]
export const compaction = (firstKeptSeq: number, summary = 'summary'): Entry => [
  'compaction',
  {
    id: id('c'),
    summary: [{ type: 'text', text: summary }],
    firstKeptSeq,
    reason: 'manual',
    tokensBefore: 100,
  },
]
