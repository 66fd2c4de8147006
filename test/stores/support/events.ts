/**
 * Appending test logs to live sessions: the `[type, data]` entries of log-builder.ts, appended
 * in order so that seqs match.
 */
import type { Session, SessionEvent } from '../../../src/index.js'
import {
  assistant,
  type Entry,
  header,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  user,
} from '../../support/log-builder.js'

export function appendAll(session: Session, entries: readonly Entry[]): void {
  for (const [type, data] of entries) session.append(type, data as never)
}

/** Appends events from a generated log (keeps types and data; seqs follow from the order). */
export function appendEvents(session: Session, events: readonly SessionEvent[]): void {
  for (const event of events) session.append(event.type as never, event.data as never)
}

export const text = (value: string) => [{ type: 'text' as const, text: value }]

/** The event types of `events`, space-separated: easy to compare whole logs by eye. */
export function typesOf(events: readonly SessionEvent[]): string {
  return events.map((event) => event.type).join(' ')
}

/** One closed turn with a tool round trip: 12 events. */
export const closedTurn = (turn: number, prompt: string): Entry[] => [
  turnStart(turn),
  user(prompt),
  stepStart(turn, 1),
  header(),
  assistant('', [{ id: `c${turn}` }]),
  toolCall(`c${turn}`),
  toolResult(`c${turn}`),
  stepEnd(turn, 1),
  stepStart(turn, 2),
  assistant(`done ${turn}`),
  stepEnd(turn, 2),
  turnEnd(turn),
]
