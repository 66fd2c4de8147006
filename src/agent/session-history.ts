/**
 * What an agent needs to know of the log it is created over.
 */
import { type EventMap, isCoreEvent, RudderError, type Session } from '../core/index.js'

/** What the agent needs from an existing log: the last turn, the last header, and how it started. */
export function readHistory(session: Session): {
  lastTurn: number
  lastHeader: EventMap['request/header'] | undefined
  startReason: 'new' | 'resume' | 'fork'
} {
  const events = session.events
  let lastTurn: number | undefined
  let lastHeader: EventMap['request/header'] | undefined
  for (
    let index = events.length - 1;
    index >= 0 && (lastTurn === undefined || lastHeader === undefined);
    index--
  ) {
    const event = events[index]
    if (!event || !isCoreEvent(event)) continue
    if (lastTurn === undefined && event.type === 'turn/start') {
      throw new RudderError(
        'WRONG_STATE',
        `createAgent: session ${session.header.id} ends inside turn ${event.data.turn} (opened at seq ${event.seq}); open it through a store, which repairs a crashed tail, before running an agent on it`,
      )
    }
    if (lastTurn === undefined && event.type === 'turn/end') lastTurn = event.data.turn
    if (lastHeader === undefined && event.type === 'request/header') lastHeader = event.data
  }
  const parent = session.header.parent
  const startReason =
    events.length === 0 ? 'new' : parent && events.length === parent.seq + 1 ? 'fork' : 'resume'
  return { lastTurn: lastTurn ?? 0, lastHeader, startReason }
}
