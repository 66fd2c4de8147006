/**
 * The server-sent event reader on byte streams split at awkward places, as a network splits them.
 */
import { describe, expect, it } from 'vitest'
import { readServerSentEvents, type ServerSentEvent } from '../../src/providers/sse.js'
import { ResponseGuard } from '../../src/providers/stream-guard.js'

function bodyOf(pieces: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece))
      controller.close()
    },
  })
}

async function eventsOf(
  pieces: readonly string[] | ReadableStream<Uint8Array>,
): Promise<ServerSentEvent[]> {
  const body = Array.isArray(pieces) ? bodyOf(pieces) : (pieces as ReadableStream<Uint8Array>)
  const guard = new ResponseGuard({
    limits: { idleTimeoutMs: 60_000, maxResponseChars: 1_000_000 },
    provider: 'test',
    endpoint: { url: 'http://127.0.0.1:1', source: 'a test' },
  })
  const events: ServerSentEvent[] = []
  for await (const event of readServerSentEvents(body, guard, 'test')) events.push(event)
  return events
}

describe('readServerSentEvents', () => {
  it('reads events, names, comments and multi-line data, whatever the line endings', async () => {
    expect(
      await eventsOf([
        ': OPENROUTER PROCESSING\n\n',
        'event: ping\r\ndata: {}\r\n\r\n',
        'data: first\rdata:second\r\r',
        'id: 7\nretry: 10\ndata\n\n',
        'event: lonely\n\n',
      ]),
    ).toEqual([
      { event: 'ping', data: '{}' },
      { event: 'message', data: 'first\nsecond' },
      { event: 'message', data: '' },
    ])
  })

  it('joins lines split across pieces, including a \\r\\n split between them', async () => {
    expect(await eventsOf(['da', 'ta: {"a"', ':1}\r', '\n\r', '\ndata: é', 'tat\n', '\n'])).toEqual(
      [
        { event: 'message', data: '{"a":1}' },
        { event: 'message', data: 'état' },
      ],
    )
  })

  it('decodes a character split between pieces', async () => {
    const bytes = new TextEncoder().encode('data: ⛵\n\n')
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 8))
        controller.enqueue(bytes.slice(8))
        controller.close()
      },
    })
    expect(await eventsOf(body)).toEqual([{ event: 'message', data: '⛵' }])
  })

  it('dispatches a last event without its blank line only when its last line is whole', async () => {
    expect(await eventsOf(['data: one\n\n', 'data: [DONE]\n'])).toEqual([
      { event: 'message', data: 'one' },
      { event: 'message', data: '[DONE]' },
    ])
    expect(await eventsOf(['data: one\n\n', 'data: {"cut'])).toEqual([
      { event: 'message', data: 'one' },
    ])
  })
})
