/**
 * A stored session whose history a store does not read when it opens it (decision 0160): a
 * checkpoint written at close covers the whole log, and a compaction after the first turn keeps
 * only the second, so neither opening nor loading the projection reads the first turn. Front
 * ends that show or walk the history must read it with `readEvents`.
 */
import { expect } from 'vitest'
import { openStore, type SessionEvent, type StoreOptions } from '../../src/index.js'
import {
  assistant,
  compaction,
  type Entry,
  header,
  stepEnd,
  stepStart,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'

/** A checkpoint at every event, so the one written at close covers the whole log. */
export const CHECKPOINT_EVERY_EVENT: StoreOptions = {
  checkpointPolicy: { minCharacters: 0, everyCharacters: 1, everyEvents: 1 },
}

/** Two turns, then a compaction that keeps the second (from its `turn/start`, seq 7). */
export const UNREAD_HISTORY: readonly Entry[] = [
  turnStart(1),
  user('first question'),
  stepStart(1, 1),
  header(),
  assistant('first answer'),
  stepEnd(1, 1),
  turnEnd(1),
  turnStart(2),
  user('second question'),
  stepStart(2, 1),
  header(),
  assistant('second answer'),
  stepEnd(2, 1),
  turnEnd(2),
  compaction(7, 'the first turn, summarized'),
]

/**
 * Writes `entries` (default `UNREAD_HISTORY`) as a new session of the store at `url`, closes
 * it (writing the checkpoint), and checks that opening it again holds none of the first turn.
 * Returns its id and its events as stored.
 */
export async function writeUnreadSession(
  url: string,
  options: { readonly cwd?: string; readonly entries?: readonly Entry[] } = {},
): Promise<{ id: string; events: SessionEvent[] }> {
  const store = await openStore(url, CHECKPOINT_EVERY_EVENT)
  let id: string
  try {
    const session = await store.create(options.cwd === undefined ? {} : { cwd: options.cwd })
    id = session.header.id
    for (const [type, data] of options.entries ?? UNREAD_HISTORY)
      session.append(type, data as never)
    await session.close()
  } finally {
    await store.close()
  }
  const again = await openStore(url)
  try {
    const session = await again.open(id)
    try {
      expect(session.residentFrom).toBeGreaterThan(0)
      await session.loadProjection()
      // Even with its projection loaded, the session does not hold the first turn.
      expect(session.residentFrom).toBeGreaterThan(6)
      expect(session.eventAt(1)).toBeUndefined()
    } finally {
      await session.close()
    }
    return { id, events: [...(await again.read(id)).events] }
  } finally {
    await again.close()
  }
}

/** The text of the first text block of each `user/message` and `assistant/message`. */
export function dialogueOf(events: readonly SessionEvent[]): string[] {
  return events.flatMap((event) => {
    if (event.type !== 'user/message' && event.type !== 'assistant/message') return []
    const content = (event.data as { content: readonly { type: string; text?: string }[] }).content
    const text = content.find((block) => block.type === 'text')?.text
    return text === undefined ? [] : [text]
  })
}
