/**
 * Payload text made on first use (B13, decision 0176): an ASCII blob's bytes are read and
 * checked when its event loads, and its string is made only when something reads it. What a
 * caller sees is unchanged: the same text, byte for byte, the same JSON, frozen, the same
 * transcript characters; and a blob missing or of the wrong size is reported at its event
 * when the log loads, as before.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { deepFreeze, type Message, type SessionEvent } from '../../src/core/index.js'
import type { Backend } from '../../src/stores/backend.js'
import type { SessionStore, StoreOptions } from '../../src/stores/index.js'
import { loadEvents } from '../../src/stores/log-loader.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import {
  assistant,
  type Entry,
  stepEnd,
  stepStart,
  toolCall,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import { adminQuery } from './support/postgres.js'
import { backendOf, type StoreKind, tempDirectory, urlOf } from './support/stores.js'

const KiB = 1024

/** Every close writes a checkpoint, however small the log. */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }

const stores: SessionStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

async function setup(kind: StoreKind) {
  const directory = tempDirectory()
  const backend = await backendOf(kind, directory)
  const store = createSessionStore(backend, EVERY_CLOSE)
  stores.push(store)
  return { directory, backend, store }
}

/** ASCII text (a build log) and non-ASCII text, each over the 64 KiB a blob holds at least. */
const OUTPUT = 'a line of build output, long enough to look real\n'.repeat(40_000)
const IMAGE = Buffer.alloc(900 * KiB, 3).toString('base64')
const NOT_ASCII = 'résumé ✓ 漢 😀\n'.repeat(30_000)
/**
 * Two large strings, one not ASCII, and a nested object in one object (tool-call arguments):
 * strings other than a `text` are held undecoded whatever their bytes.
 */
const ARGS = { first: 'x'.repeat(700 * KiB), second: 'ÿ✓'.repeat(300 * KiB), nested: { n: 1 } }

/** Seq 5: the results (ASCII text, image, non-ASCII text); seq 3: the call with `ARGS`. */
const entries: Entry[] = [
  turnStart(1),
  user('build it'),
  stepStart(1, 1),
  [
    'assistant/message',
    {
      ...(assistant('', [{ id: 'c1', name: 'bash' }])[1] as object),
      content: [{ type: 'tool-call', id: 'c1', name: 'bash', args: ARGS }],
    } as never,
  ],
  toolCall('c1', 'bash'),
  [
    'tool/result',
    {
      callId: 'c1',
      name: 'bash',
      content: [
        { type: 'text', text: OUTPUT },
        { type: 'image', mediaType: 'image/png', data: IMAGE },
        { type: 'text', text: NOT_ASCII },
      ],
      isError: false,
    },
  ],
  stepEnd(1, 1),
  turnEnd(1),
]
const CALL_SEQ = 3
const RESULT_SEQ = 5

/** Whether `object[key]` is still an accessor whose text has not been asked for. */
const isAccessor = (object: object, key: string) =>
  typeof Object.getOwnPropertyDescriptor(object, key)?.get === 'function'

const toolMessage = (messages: readonly Message[]) =>
  messages.find((message) => message.role === 'tool') as Extract<Message, { role: 'tool' }>

function blobFiles(kind: StoreKind, directory: string): string[] {
  const root =
    kind === 'jsonl' ? join(directory, 'jsonl', 'blobs') : join(directory, 'sessions.db.blobs')
  return readdirSync(root).flatMap((shard) =>
    readdirSync(join(root, shard)).map((name) => join(root, shard, name)),
  )
}

describe.each(['jsonl', 'sqlite'] as const)(
  'payload text made on first use in the %s store',
  (kind) => {
    it('resumes holding ASCII payloads undecoded and gives back the bytes written on first use', async () => {
      const { directory, store } = await setup(kind)
      const session = await store.create()
      appendAll(session, entries)
      const written = session.residentEvents.map((event) => JSON.stringify(event))
      await session.loadProjection()
      const characters = session.transcriptCharacters()
      await session.close()

      const reopened = await store.open(session.header.id)
      await reopened.loadProjection()
      const [output, image, notAscii] = toolMessage(reopened.messages()).content as readonly {
        text?: string
        data?: string
      }[]
      // Loaded and projected, characters counted, and no ASCII payload made into a string yet.
      expect(reopened.transcriptCharacters()).toBe(characters)
      expect(isAccessor(output!, 'text')).toBe(true)
      expect(isAccessor(image!, 'data')).toBe(true)
      expect(isAccessor(notAscii!, 'text')).toBe(false)
      // The bytes are held: first use reads no file.
      for (const file of blobFiles(kind, directory)) rmSync(file)
      expect(Buffer.from(output!.text!, 'utf8').equals(Buffer.from(OUTPUT, 'utf8'))).toBe(true)
      expect(image!.data === IMAGE).toBe(true)
      expect(notAscii!.text === NOT_ASCII).toBe(true)
      // The same text on every read, the same JSON as appended, frozen.
      const [first, second] = [output!.text, output!.text]
      expect(first === second).toBe(true)
      const events: SessionEvent[] = []
      for await (const batch of reopened.readEvents()) events.push(...batch)
      expect(events.map((event) => JSON.stringify(event))).toEqual(written)
      expect(Object.isFrozen(output)).toBe(true)
      expect(() => {
        ;(output as { text: string }).text = 'changed'
      }).toThrow(TypeError)
      expect(output!.text === OUTPUT).toBe(true)
      await reopened.close()
    })

    it('places several payloads of one object and freezes the rest of it', async () => {
      const { directory, backend, store } = await setup(kind)
      const session = await store.create()
      appendAll(session, entries)
      await session.close()
      const loaded = (await loadEvents(backend, session.header.id)).events
      const call = loaded[CALL_SEQ]!.data as { content: { args: typeof ARGS }[] }
      const args = call.content[0]!.args
      expect(isAccessor(args, 'first') && isAccessor(args, 'second')).toBe(true)
      expect(Object.isFrozen(args) && Object.isFrozen(args.nested)).toBe(true)
      // The loader leaves the rest to whoever hands the events out (decision 0182), whose deep
      // freeze stops at the frozen holder.
      expect(Object.isFrozen(call.content)).toBe(false)
      for (const event of loaded) deepFreeze(event)
      expect(Object.isFrozen(call.content) && Object.isFrozen(loaded[RESULT_SEQ]!.data)).toBe(true)
      expect(isAccessor(args, 'first') && isAccessor(args, 'second')).toBe(true)
      for (const file of blobFiles(kind, directory)) rmSync(file)
      expect(JSON.stringify(args)).toBe(JSON.stringify(ARGS))
      expect(Object.keys(args)).toEqual(['first', 'second', 'nested'])
      expect({ ...args }).toEqual(ARGS)
      expect(structuredClone(args)).toEqual(ARGS)
    })

    it('ends a projection load with its abort when it comes while a large text is scanned', async () => {
      const backend = await backendOf(kind, tempDirectory())
      const blobs = backend.blobs!
      const large = 'b'.repeat(5 * 1024 * KiB)
      const controller = new AbortController()
      const reason = new Error('load stopped by the test')
      let armed = false
      // Once armed, the read of the large text brings the abort on the next turn, while the
      // scan of its bytes for ASCII waits between slices.
      const watched: Backend = {
        ...backend,
        blobs: {
          ...blobs,
          async read(address, location) {
            const bytes = await blobs.read(address, location)
            if (armed && bytes.length === large.length) {
              armed = false
              setImmediate(() => controller.abort(reason))
            }
            return bytes
          },
        },
      }
      const store = createSessionStore(watched, EVERY_CLOSE)
      stores.push(store)
      const session = await store.create()
      appendAll(session, [
        turnStart(1),
        [
          'user/message',
          { id: 'u', content: [{ type: 'text', text: large }], source: { kind: 'user' } },
        ],
        turnEnd(1),
      ])
      await session.close()
      const reopened = await store.open(session.header.id)
      armed = true
      await expect(reopened.loadProjection(controller.signal)).rejects.toBe(reason)
      expect(reopened.isProjectionLoaded).toBe(false)
      await reopened.loadProjection()
      const block = reopened.messages()[0]!.content[0] as { text: string }
      expect(isAccessor(block, 'text')).toBe(true)
      expect(block.text === large).toBe(true)
      await reopened.close()
    })

    it('decodes at load a large text that is not ASCII past its first slices', async () => {
      const { backend, store } = await setup(kind)
      const late = `${'a'.repeat(3 * 1024 * KiB)}é and on`
      const session = await store.create()
      appendAll(session, [
        turnStart(1),
        [
          'user/message',
          { id: 'u', content: [{ type: 'text', text: late }], source: { kind: 'user' } },
        ],
        turnEnd(1),
      ])
      await session.close()
      const loaded = (await loadEvents(backend, session.header.id)).events
      const block = (loaded[1]!.data as { content: { text: string }[] }).content[0]!
      expect(isAccessor(block, 'text')).toBe(false)
      expect(block.text === late).toBe(true)
    })

    it.each([
      ['missing', (file: string) => rmSync(file), /large payload .* cannot be read/],
      [
        'cut short',
        (file: string) => truncateSync(file, OUTPUT.length - 1),
        new RegExp(`has ${OUTPUT.length - 1} bytes but the event expects ${OUTPUT.length}`),
      ],
    ])(
      'reports an ASCII payload %s at its event when the log loads',
      async (_, change, message) => {
        const { directory, backend, store } = await setup(kind)
        const session = await store.create()
        appendAll(session, entries)
        await session.close()
        const file = blobFiles(kind, directory).find((path) =>
          readFileSync(path, 'latin1').startsWith('a line of build output'),
        )!
        change(file)
        const location = backend.locate(
          session.header.id,
          kind === 'jsonl' ? RESULT_SEQ + 2 : RESULT_SEQ,
        )
        // Opened from its checkpoint, the history is read by `loadProjection`; read in full, by open.
        const reopened = await store.open(session.header.id)
        await expect(reopened.loadProjection()).rejects.toThrow()
        await reopened.close()
        await expect(loadEvents(backend, session.header.id)).rejects.toMatchObject({
          location,
          message,
        })
        const salvage = await loadEvents(backend, session.header.id, { salvage: true })
        expect(salvage.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4])
      },
    )
  },
)

describe('payload text made on first use in the postgres store', () => {
  it('resumes holding an ASCII payload undecoded, and reports its row missing at its event', async () => {
    const { directory, backend, store } = await setup('postgres')
    const session = await store.create()
    appendAll(session, entries)
    await session.loadProjection()
    const characters = session.transcriptCharacters()
    await session.close()
    const reopened = await store.open(session.header.id)
    await reopened.loadProjection()
    const [output, image] = toolMessage(reopened.messages()).content as readonly {
      text?: string
      data?: string
    }[]
    expect(reopened.transcriptCharacters()).toBe(characters)
    expect(isAccessor(output!, 'text') && isAccessor(image!, 'data')).toBe(true)
    expect(output!.text === OUTPUT && image!.data === IMAGE).toBe(true)
    await reopened.close()
    const sha256 = createHash('sha256').update(OUTPUT).digest('hex')
    const schema = new URL(urlOf('postgres', directory)).searchParams.get('schema')
    await adminQuery(`DELETE FROM ${schema}.blobs WHERE sha256 = $1`, [sha256])
    await expect(loadEvents(backend, session.header.id)).rejects.toMatchObject({
      location: backend.locate(session.header.id, RESULT_SEQ),
      message: expect.stringMatching(/missing from the blobs table/),
    })
  })
})
