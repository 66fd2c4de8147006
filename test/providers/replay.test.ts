/**
 * The replay provider: recorded answers in order, and a clear error where the new run diverges.
 */
import { describe, expect, it } from 'vitest'
import type { Message } from '../../src/core/index.js'
import { replayProvider } from '../../src/providers/replay/index.js'
import {
  assistant,
  buildLog,
  compaction,
  header,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'
import { collect, requestOf } from './support/collect.js'

const recorded = buildLog([
  turnStart(1),
  user('What is the tide?'),
  stepStart(1, 1),
  header(),
  assistant('', [{ id: 'c1', name: 'tide' }]),
  toolCall('c1', 'tide'),
  toolResult('c1', 'High water 12:04', 'tide'),
  stepEnd(1, 1),
  stepStart(1, 2),
  assistant('High water at 12:04.'),
  stepEnd(1, 2),
  turnEnd(1),
])

const prompt: Message = { role: 'user', content: [{ type: 'text', text: 'What is the tide?' }] }
const call: Message = {
  role: 'assistant',
  content: [{ type: 'tool-call', id: 'c1', name: 'tide', args: {} }],
}
const result = (text: string, callId = 'c1'): Message => ({
  role: 'tool',
  callId,
  name: 'tide',
  content: [{ type: 'text', text }],
  isError: false,
})

describe('replayProvider', () => {
  it('answers each request with the next recorded assistant message, usage and stop reason', async () => {
    const provider = replayProvider(recorded)
    expect(provider.model).toBe('test')
    expect(await collect(provider, requestOf({ messages: [prompt] }))).toEqual([
      { type: 'tool-call', id: 'c1', name: 'tide', args: {} },
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'end', stopReason: 'tool-calls' },
    ])
    const second = await collect(
      provider,
      requestOf({ messages: [prompt, call, result('High water 12:04')] }),
    )
    expect(second).toEqual([
      { type: 'text-delta', text: 'High water at 12:04.' },
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'end', stopReason: 'stop' },
    ])
    expect(provider.answered).toBe(2)
  })

  it('diverges when a tool result differs from the recorded one, naming the request, message and difference', async () => {
    const provider = replayProvider(recorded)
    await collect(provider, requestOf({ messages: [prompt] }))
    const parts = await collect(
      provider,
      requestOf({ messages: [prompt, call, result('High water 12:05')] }),
    )
    expect(parts).toHaveLength(1)
    expect(parts[0]).toMatchObject({ type: 'error', code: 'replay-diverged', retryable: false })
    const message = (parts[0] as { message: string }).message
    expect(message).toContain('request 2 diverges')
    expect(message).toContain('message 3 (the result of call c1 (tide)) differs')
    expect(message).toContain('"High water 12:04"')
    expect(message).toContain('"High water 12:05"')
    expect(provider.answered).toBe(1)
  })

  it('diverges when a different tool call was answered than recorded', async () => {
    const provider = replayProvider(recorded)
    await collect(provider, requestOf({ messages: [prompt] }))
    const parts = await collect(
      provider,
      requestOf({ messages: [prompt, call, result('High water 12:04', 'c9')] }),
    )
    expect((parts[0] as { message: string }).message).toContain(
      'message 3 was the result of call c1 (tide) in the recording, but is the result of call c9 (tide) now',
    )
  })

  it('diverges on a different prompt, and on a request the recording has no answer for', async () => {
    const other = replayProvider(recorded)
    const changed = await collect(
      other,
      requestOf({
        messages: [{ role: 'user', content: [{ type: 'text', text: 'And the wind?' }] }],
      }),
    )
    expect((changed[0] as { message: string }).message).toMatch(
      /request 1 diverges .*message 1 \(a user message\) differs/,
    )

    const provider = replayProvider(recorded)
    await collect(provider, requestOf({ messages: [prompt] }))
    await collect(provider, requestOf({ messages: [prompt, call, result('High water 12:04')] }))
    const beyond = await collect(provider, requestOf({ messages: [prompt] }))
    expect(beyond[0]).toMatchObject({ type: 'error', code: 'replay-diverged', retryable: false })
    expect((beyond[0] as { message: string }).message).toContain(
      'request 3 has no recorded answer: the recording has 2 assistant message(s)',
    )
  })

  it('diverges on a missing or extra message', async () => {
    const provider = replayProvider(recorded)
    await collect(provider, requestOf({ messages: [prompt] }))
    const missing = await collect(provider, requestOf({ messages: [prompt, call] }))
    expect((missing[0] as { message: string }).message).toContain('message 3 is missing')
    const extra = await collect(
      provider,
      requestOf({ messages: [prompt, call, result('High water 12:04'), prompt] }),
    )
    expect((extra[0] as { message: string }).message).toContain('message 4 is new')
  })

  it('compares against the projection, so a compacted recording replays', async () => {
    const log = buildLog([
      turnStart(1),
      user('old question'),
      stepStart(1, 1),
      header(),
      assistant('old answer'),
      stepEnd(1, 1),
      turnEnd(1),
      compaction(7, 'we talked about tides'),
      turnStart(2),
      user('new question'),
      stepStart(2, 1),
      assistant('new answer'),
      stepEnd(2, 1),
      turnEnd(2),
    ])
    const provider = replayProvider(log)
    await collect(
      provider,
      requestOf({
        messages: [{ role: 'user', content: [{ type: 'text', text: 'old question' }] }],
      }),
    )
    const parts = await collect(
      provider,
      requestOf({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'we talked about tides' }] },
          { role: 'user', content: [{ type: 'text', text: 'new question' }] },
        ],
      }),
    )
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'new answer' })
  })

  it('replays a recorded failure as a non-retryable error after its content', async () => {
    const log = buildLog([
      turnStart(1),
      user('go'),
      stepStart(1, 1),
      [
        'assistant/message',
        {
          id: 'a-err',
          content: [{ type: 'text', text: 'partial' }],
          provider: 'openai',
          model: 'gpt-4.1',
          stopReason: 'error',
          usage: { inputTokens: 3, outputTokens: 1 },
        },
      ],
      stepEnd(1, 1),
      [
        'turn/end',
        { turn: 1, reason: { kind: 'error', code: 'http-400', message: 'bad request' } },
      ],
    ])
    const parts = await collect(
      replayProvider(log),
      requestOf({ messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] }),
    )
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'partial' })
    expect(parts.at(-1)).toMatchObject({ type: 'error', code: 'http-400', retryable: false })
    expect((parts.at(-1) as { message: string }).message).toContain('bad request')
  })
})
