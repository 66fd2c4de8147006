/** Every event of a session, resident or not, through `readEvents` (what a test compares). */
import type { Session, SessionEvent } from '../../src/core/index.js'

export async function allEvents(session: Session): Promise<SessionEvent[]> {
  const events: SessionEvent[] = []
  for await (const batch of session.readEvents()) events.push(...batch)
  return events
}
