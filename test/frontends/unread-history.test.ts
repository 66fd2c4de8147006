/** The fixture itself: a stored session whose first turn is not read when it is opened. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { dialogueOf, writeUnreadSession } from './unread-history.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-unread-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('a session whose history is not read at open', () => {
  it.each(['sqlite', 'jsonl'])(
    'is written whole and reopened without its first turn (%s)',
    async (kind) => {
      const url =
        kind === 'sqlite' ? `sqlite:${join(scratch, 'a.db')}` : `jsonl:${join(scratch, 'j')}`
      const { events } = await writeUnreadSession(url)
      expect(dialogueOf(events)).toEqual([
        'first question',
        'first answer',
        'second question',
        'second answer',
      ])
    },
  )
})
