/**
 * Large payloads (B13): a tool output or image above 1 MiB is written once to a
 * content-addressed file and referenced from its event, so no stored line or row exceeds
 * 1 MiB, while a reopened session is exactly what was appended.
 */
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { LogCorruptError, project } from '../../src/index.js'
import {
  assistant,
  stepEnd,
  stepStart,
  toolCall,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import type { StoreKind } from './support/stores.js'
import { FILE_STORE_KINDS, storeOf, tempDirectory } from './support/stores.js'

const MiB = 1024 * 1024

/** Stored lines (JSONL) or rows (SQLite) of every session, as byte lengths. */
function storedSizes(kind: StoreKind, directory: string): number[] {
  if (kind === 'jsonl') {
    const sessions = join(directory, 'jsonl', 'sessions')
    return readdirSync(sessions).flatMap((id) =>
      readFileSync(join(sessions, id, 'events.jsonl'), 'utf8')
        .split('\n')
        .map((line) => Buffer.byteLength(line)),
    )
  }
  const db = new Database(join(directory, 'sessions.db'), { readonly: true })
  try {
    return db
      .prepare<[], { size: number }>('SELECT length(CAST(line AS BLOB)) AS size FROM events')
      .all()
      .map((row) => row.size)
  } finally {
    db.close()
  }
}

function blobFiles(kind: StoreKind, directory: string): string[] {
  const root =
    kind === 'jsonl' ? join(directory, 'jsonl', 'blobs') : join(directory, 'sessions.db.blobs')
  return readdirSync(root).flatMap((shard) =>
    readdirSync(join(root, shard)).map((name) => join(root, shard, name)),
  )
}

describe.each(FILE_STORE_KINDS)('large payloads in the %s store', (kind) => {
  const bigOutput = 'line of tool output ✓\n'.repeat(Math.ceil((1.5 * MiB) / 22))
  const bigImage = Buffer.alloc(1.2 * MiB, 7).toString('base64')

  async function sessionWithPayloads(directory: string) {
    const store = await storeOf(kind, directory)
    const session = await store.create()
    appendAll(session, [
      turnStart(1),
      user('read it'),
      stepStart(1, 1),
      assistant('', [
        { id: 'c1', name: 'read' },
        { id: 'c2', name: 'read' },
      ]),
      toolCall('c1', 'read'),
      [
        'tool/result',
        {
          callId: 'c1',
          name: 'read',
          content: [{ type: 'text', text: bigOutput }],
          isError: false,
        },
      ],
      toolCall('c2', 'read'),
      [
        'tool/result',
        {
          callId: 'c2',
          name: 'read',
          content: [
            { type: 'text', text: 'the screenshot' },
            { type: 'image', mediaType: 'image/png', data: bigImage },
          ],
          isError: false,
        },
      ],
      stepEnd(1, 1),
      turnEnd(1),
      [
        'user/message',
        {
          id: 'again',
          content: [{ type: 'text', text: bigOutput }],
          source: { kind: 'plugin', name: 'p' },
        },
      ],
    ])
    await session.close()
    return { store, session }
  }

  it('keeps every stored line under 1 MiB and gives back exactly what was appended', async () => {
    const directory = tempDirectory()
    const { store, session } = await sessionWithPayloads(directory)
    expect(Math.max(...storedSizes(kind, directory))).toBeLessThanOrEqual(MiB)
    const reopened = await store.open(session.header.id)
    expect(reopened.residentEvents).toEqual(session.residentEvents)
    expect(reopened.messages()).toEqual(project(session.residentEvents))
    await reopened.close()
  })

  it('writes each distinct payload once, and shares it with forks', async () => {
    const directory = tempDirectory()
    const { store, session } = await sessionWithPayloads(directory)
    // The same output appears twice in the log but is stored once; plus the image.
    expect(blobFiles(kind, directory)).toHaveLength(2)
    const child = await store.fork(session.header.id)
    expect(child.residentEvents).toEqual(session.residentEvents)
    await child.close()
    expect(blobFiles(kind, directory)).toHaveLength(2)
    const sizes = blobFiles(kind, directory)
      .map((file) => statSync(file).size)
      .sort((a, b) => a - b)
    expect(sizes).toEqual([Buffer.byteLength(bigImage), Buffer.byteLength(bigOutput)])
  })

  it('inlines payloads in an export, and stores them as blobs again on import', async () => {
    const directory = tempDirectory()
    const { store, session } = await sessionWithPayloads(directory)
    const lines: string[] = []
    for await (const line of store.exportJsonl(session.header.id)) lines.push(line)
    expect(lines.join('')).toContain(bigImage)
    const target = tempDirectory()
    const other = await storeOf(kind, target)
    await other.importJsonl(lines)
    expect((await other.read(session.header.id)).events).toEqual(session.residentEvents)
    expect(Math.max(...storedSizes(kind, target))).toBeLessThanOrEqual(MiB)
  })

  it('moves a whole event out when many medium values add up past 1 MiB', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory)
    const session = await store.create()
    const args = { files: Array.from({ length: 40 }, (_, index) => `${index}`.padEnd(40_000, 'x')) }
    appendAll(session, [
      turnStart(1),
      user('write them'),
      stepStart(1, 1),
      [
        'assistant/message',
        {
          id: 'a',
          content: [{ type: 'tool-call', id: 'c1', name: 'write', args }],
          provider: 'p',
          model: 'm',
          stopReason: 'tool-calls',
          usage: { inputTokens: 1, outputTokens: 1 },
        },
      ],
    ])
    await session.close()
    expect(Math.max(...storedSizes(kind, directory))).toBeLessThanOrEqual(MiB)
    const reopened = await store.open(session.header.id)
    expect(reopened.residentEvents.slice(0, 4)).toEqual(session.residentEvents)
    await reopened.close()
  })

  it('refuses a log whose payload file is missing, naming the event', async () => {
    const directory = tempDirectory()
    const { store, session } = await sessionWithPayloads(directory)
    for (const file of blobFiles(kind, directory)) rmSync(file)
    const attempt = store.open(session.header.id)
    await expect(attempt).rejects.toBeInstanceOf(LogCorruptError)
    await expect(attempt).rejects.toThrowError(/large payload .* cannot be read/)
  })
})
