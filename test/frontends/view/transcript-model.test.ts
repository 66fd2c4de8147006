/** The shared transcript and pending-panel models, fed by a real agent's log and notifications. */
import { describe, expect, it } from 'vitest'
import { createInputsModel, type InputsModel } from '../../../src/frontends/view/inputs-model.js'
import {
  createTranscriptModel,
  type TranscriptItem,
  type TranscriptModel,
} from '../../../src/frontends/view/transcript-model.js'
import { type Agent, assertNever, type Session } from '../../../src/index.js'
import { echo, gate, toolWith } from '../../agent/tools.js'
import { agentHarness } from '../../support/agent-harness.js'

function follow(
  session: Session,
  agent: Agent,
): { transcript: TranscriptModel; inputs: InputsModel } {
  const transcript = createTranscriptModel()
  const inputs = createInputsModel()
  for (const event of session.residentEvents) transcript.applyEvent(event)
  session.subscribe((event) => {
    transcript.applyEvent(event)
    inputs.applyEvent(event)
    inputs.applyPending(agent.pending())
  })
  agent.subscribe((notification) => {
    transcript.applyNotification(notification)
    inputs.applyNotification(notification)
    inputs.applyPending(agent.pending())
  })
  return { transcript, inputs }
}

const shape = (items: readonly TranscriptItem[]) =>
  items.map((item) => {
    switch (item.kind) {
      case 'user':
        return `${item.role}[${item.label}](${item.text})`
      case 'steering':
        return `steer(${item.text})@${item.turn}.${item.beforeStep}`
      case 'assistant':
        return `assistant(${item.text})${item.isStreaming ? '…' : ''}`
      case 'tool':
        return `tool ${item.name}:${item.status}`
      case 'turn-start':
        return `turn ${item.turn}`
      case 'turn-end':
        return `end ${item.turn} ${item.reason.kind}`
      case 'compaction':
        return `compaction ${item.reason}`
      case 'extension':
        return `ext ${item.type}`
      default:
        return assertNever(item)
    }
  })

describe('transcript model', () => {
  it('shows prompt, context by its source, steering where it joined, tool cards and the answer', async () => {
    const release = gate()
    const holder = toolWith('wait', () => release.promise)
    const harness = agentHarness(
      [
        {
          text: 'looking',
          toolCalls: [
            { name: 'wait', args: {} },
            { name: 'echo', args: { text: 'x' } },
          ],
        },
        { text: 'done' },
      ],
      { tools: [holder, echo] },
    )
    const { transcript, inputs } = follow(harness.session, harness.agent)
    const prompt = harness.agent.send('fix it')
    inputs.track({
      id: prompt.id,
      kind: 'prompt',
      data: { content: [{ type: 'text', text: 'fix it' }], source: { kind: 'user' } },
    })
    // Wait until the tool runs, then steer and inject while the turn is open.
    await new Promise<void>((resolve) => {
      const stop = harness.session.subscribe((event) => {
        if (event.type === 'tool/call') {
          stop()
          resolve()
        }
      })
    })
    const steer = harness.agent.steer('use tabs')
    inputs.track({
      id: steer.id,
      kind: 'steering',
      data: { content: [{ type: 'text', text: 'use tabs' }], source: { kind: 'user' } },
    })
    inputs.applyPending(harness.agent.pending())
    expect(inputs.open.map((input) => [input.text, input.status])).toEqual([
      ['fix it', 'logged'],
      ['use tabs', 'staged'],
    ])
    harness.agent.inject({
      content: [{ type: 'text', text: '<note>ci is red</note>' }],
      source: { kind: 'plugin', name: 'ci' },
    })
    const running = transcript.items.find((item) => item.kind === 'tool' && item.name === 'wait')
    expect(running).toMatchObject({ status: 'running' })
    release.open()
    await prompt.result
    expect(shape(transcript.items)).toEqual([
      'turn 1',
      'prompt[user](fix it)',
      'assistant(looking)',
      'tool wait:ok',
      'tool echo:ok',
      'steer(use tabs)@1.2',
      'context[plugin:ci](<note>ci is red</note>)',
      'assistant(done)',
      'end 1 completed',
    ])
    const finished = transcript.items.find((item) => item.kind === 'tool' && item.name === 'wait')
    expect(finished).toMatchObject({ status: 'ok', output: 'wait done' })
    expect(finished?.kind === 'tool' && typeof finished.durationMs).toBe('number')
    expect(inputs.all.map((input) => [input.text, input.status])).toEqual([
      ['fix it', 'completed'],
      ['use tabs', 'completed'],
    ])
    expect(transcript.status).toMatchObject({
      agent: 'idle',
      provider: 'scripted',
      model: 'scripted',
    })
    expect(transcript.status.turn).toBeUndefined()
  })

  it('streams deltas into one item that the logged message replaces; a retry voids the failed attempt', async () => {
    const hold = gate()
    const harness = agentHarness([
      { text: 'lost words', error: { code: 'overloaded', message: 'busy', retryable: true } },
      { text: 'kept words', hold: hold.promise },
    ])
    const { transcript } = follow(harness.session, harness.agent)
    const result = harness.agent.send('hi').result
    await new Promise<void>((resolve) => {
      const stop = harness.agent.subscribe((notification) => {
        if (
          notification.type === 'assistant/delta' &&
          notification.attempt === 2 &&
          notification.text.endsWith('s')
        ) {
          stop()
          resolve()
        }
      })
    })
    expect(shape(transcript.items)).toEqual([
      'turn 1',
      'prompt[user](hi)',
      'assistant(kept words)…',
    ])
    hold.open()
    await result
    expect(shape(transcript.items)).toEqual([
      'turn 1',
      'prompt[user](hi)',
      'assistant(kept words)',
      'end 1 completed',
    ])
    expect(transcript.items.filter((item) => item.kind === 'assistant')).toHaveLength(1)
  })

  it('a request/start re-sent to a reconnecting follower replaces the partial stream it showed', () => {
    const transcript = createTranscriptModel()
    const delta = (text: string) =>
      ({
        type: 'assistant/delta',
        turn: 1,
        step: 1,
        attempt: 1,
        block: 0,
        kind: 'text',
        text,
      }) as const
    transcript.applyNotification({
      type: 'request/start',
      turn: 1,
      step: 1,
      attempt: 1,
      maxAttempts: 5,
    })
    transcript.applyNotification(delta('Work'))
    // The connection drops; the host re-sends the stream so far from its start.
    transcript.applyNotification({
      type: 'request/start',
      turn: 1,
      step: 1,
      attempt: 1,
      maxAttempts: 5,
    })
    transcript.applyNotification(delta('Working on it'))
    expect(shape(transcript.items)).toEqual(['assistant(Working on it)…'])
  })

  it("keeps a streaming text's pieces: each object's first pieceCount joined are its text", () => {
    const transcript = createTranscriptModel()
    const delta = (text: string, kind: 'text' | 'thinking' = 'text') =>
      ({ type: 'assistant/delta', turn: 1, step: 1, attempt: 1, block: 0, kind, text }) as const
    const pieces = (item: TranscriptItem | undefined) =>
      item?.kind === 'assistant' && item.textPieces !== undefined
        ? item.textPieces.slice(0, item.pieceCount).join('')
        : undefined
    transcript.applyNotification(delta('Hel'))
    const first = transcript.items[0]
    transcript.applyNotification(delta('hmm', 'thinking'))
    transcript.applyNotification(delta('lo '))
    transcript.applyNotification(delta('world'))
    const last = transcript.items[0]
    expect(pieces(first)).toBe('Hel')
    expect(last).toMatchObject({ text: 'Hello world', thinking: 'hmm' })
    expect(pieces(last)).toBe('Hello world')
    // A retry streams afresh: the pieces start over with the text.
    transcript.applyNotification({
      type: 'request/start',
      turn: 1,
      step: 1,
      attempt: 2,
      maxAttempts: 5,
    })
    transcript.applyNotification(delta('Again'))
    expect(pieces(transcript.items[0])).toBe('Again')
    expect(pieces(last)).toBe('Hello world')
  })

  it('marks denied and canceled tools, and discarded inputs after a cancel', async () => {
    const hold = gate()
    const harness = agentHarness(
      [
        { toolCalls: [{ name: 'echo', args: { text: 'no' } }] },
        { text: 'partial', hold: hold.promise },
      ],
      { tools: [echo], hooks: { 'tool-pre': () => ({ action: 'deny', reason: 'not today' }) } },
    )
    const { transcript, inputs } = follow(harness.session, harness.agent)
    const first = harness.agent.send('one')
    inputs.track({ id: first.id, kind: 'prompt' })
    const second = harness.agent.send('two')
    inputs.track({ id: second.id, kind: 'prompt' })
    await new Promise<void>((resolve) => {
      const stop = harness.agent.subscribe((notification) => {
        if (notification.type === 'assistant/delta') {
          stop()
          resolve()
        }
      })
    })
    harness.agent.cancel()
    await first.result
    expect(transcript.items.find((item) => item.kind === 'tool')).toMatchObject({
      status: 'denied',
      errorCode: 'denied',
    })
    expect(inputs.all.map((input) => [input.status, input.reason])).toEqual([
      ['canceled', undefined],
      ['discarded', 'canceled'],
    ])
    expect(transcript.items.at(-1)).toMatchObject({
      kind: 'turn-end',
      reason: { kind: 'canceled' },
    })
  })

  it('ignores events it has seen and refuses a gap, naming the seq to resume from', () => {
    const transcript = createTranscriptModel()
    const event = (seq: number) => ({
      seq,
      time: 0,
      type: 'turn/start' as const,
      data: { turn: seq + 1, trigger: 'prompt' as const },
    })
    transcript.applyEvent(event(0))
    transcript.applyEvent(event(0))
    expect(transcript.items).toHaveLength(1)
    expect(() => transcript.applyEvent(event(2))).toThrow(/resume the stream from seq 1/)
  })
})
