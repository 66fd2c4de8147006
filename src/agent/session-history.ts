/**
 * What an agent needs to know of the log it is created over, read from the session's fold of
 * it (no history is read: a resumed session need not hold its events, docs/spec.md §9.2).
 */
import { RudderError, type Session } from '../core/index.js'

/** What the agent needs from an existing log: the last turn and how it started. */
export function readHistory(session: Session): {
  lastTurn: number
  startReason: 'new' | 'resume' | 'fork'
} {
  const state = session.state()
  if (state.openTurn)
    throw new RudderError(
      'WRONG_STATE',
      `createAgent: session ${session.header.id} ends inside turn ${state.openTurn.turn} (opened at seq ${state.openTurn.seq}); open it through a store, which repairs a crashed tail, before running an agent on it`,
    )
  const count = session.nextSeq
  const parent = session.header.parent
  const startReason = count === 0 ? 'new' : parent && count === parent.seq + 1 ? 'fork' : 'resume'
  return { lastTurn: state.lastTurn, startReason }
}
