/**
 * The web host's HTTP API (docs/web-api.md) against a real server on 127.0.0.1: every
 * endpoint, each input answering with its delivery id and then its result, approvals.
 */
import { describe, expect, it } from 'vitest'
import type { StreamMessage } from '../../../src/frontends/web/wire.js'
import type { EventMap } from '../../../src/index.js'
import { typesOf, webPlace } from './web-support.js'

type Created = { header: { id: string; title?: string; parent?: { sessionId: string } } }
type Answer = { id: string; kind: string; settled: boolean; result?: Record<string, unknown> }

const isDelta = (text: string) => (message: StreamMessage) =>
  message.type === 'notification' &&
  message.notification.type === 'assistant/delta' &&
  message.notification.text.length > 0 &&
  text.endsWith(message.notification.text)

describe('the web API', () => {
  it('creates, lists, reads, searches, forks, closes, opens and exports sessions', async () => {
    const place = await webPlace([{ text: 'the answer is forty-two' }])
    const created = await place.call('/api/sessions', { json: { title: 'first' } })
    expect(created.status).toBe(201)
    const { header } = (await created.json()) as Created
    expect(header.title).toBe('first')
    const id = header.id

    const done = await place.json<Answer>(`/api/sessions/${id}/send?wait=true`, {
      json: { text: 'what is the answer?' },
    })
    expect(done).toMatchObject({
      kind: 'prompt',
      settled: true,
      result: { status: 'completed', turn: 1 },
    })

    const listed = await place.json<{ sessions: Record<string, unknown>[] }>('/api/sessions')
    expect(listed.sessions).toMatchObject([{ id, title: 'first', live: true, status: 'idle' }])
    expect(await place.json(`/api/sessions/${id}`)).toMatchObject({
      header: { id },
      mode: { kind: 'live' },
      label: 'scripted/demo',
      approvalMode: 'ask',
    })
    const search = await place.json<{ hits: { sessionId: string }[] }>('/api/search?q=forty-two')
    expect(search.hits.map((hit) => hit.sessionId)).toContain(id)
    expect((await place.call('/api/search')).status).toBe(400)

    const forked = await place.call(`/api/sessions/${id}/fork`, { json: {} })
    expect(forked.status).toBe(201)
    const fork = ((await forked.json()) as Created).header
    expect(fork.parent?.sessionId).toBe(id)

    expect(await place.json(`/api/sessions/${id}/close`, { json: {} })).toEqual({ closed: true })
    expect(await place.json(`/api/sessions/${id}/close`, { json: {} })).toEqual({ closed: false })
    expect(await place.json(`/api/sessions/${id}`)).toMatchObject({ mode: { kind: 'follow' } })
    const afterClose = await place.json<{ sessions: { id: string; live: boolean }[] }>(
      '/api/sessions',
    )
    expect(afterClose.sessions.find((row) => row.id === id)?.live).toBe(false)
    expect(await place.json(`/api/sessions/${id}/open`, { json: {} })).toMatchObject({
      mode: { kind: 'live' },
    })

    const exported = await place.call(`/api/sessions/${id}/export`)
    expect(exported.headers.get('content-type')).toMatch(/x-ndjson/)
    const lines = (await exported.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    const log = await place.checkedLog(id)
    expect(lines[0]).toMatchObject({ id })
    expect(lines.slice(1)).toEqual(JSON.parse(JSON.stringify(log)))
    expect((await place.call('/api/sessions/missing/export')).status).toBe(404)
    await place.checkedLog(fork.id)
  })

  it('send, steer, inject, continue, cancel and compact answer with a delivery id, then the result', async () => {
    const place = await webPlace([
      { text: 'first part', holdUntilFile: 'go-1' },
      { text: 'after the steer' },
      { text: 'continued' },
      { text: 'will be cut', holdUntilFile: 'never' },
    ])
    const { header } = await place.json<Created>('/api/sessions', { json: {} })
    const path = `/api/sessions/${header.id}`
    const stream = place.stream(header.id)

    const sent = await place.call(`${path}/send`, { json: { text: 'start' } })
    expect(sent.status).toBe(202)
    const send = (await sent.json()) as Answer
    expect(send).toMatchObject({ kind: 'prompt', settled: false })
    await stream.until(isDelta('first part'))
    const steer = await place.json<Answer>(`${path}/steer`, { json: { text: 'also this' } })
    const inject = await place.json<Answer>(`${path}/inject`, {
      json: { text: 'ci is green', source: { kind: 'plugin', name: 'ci' }, meta: { run: 7 } },
    })
    expect(await place.json(`${path}/deliveries/${steer.id}`)).toMatchObject({ settled: false })
    // The pending panel's state reaches every client.
    await stream.until(
      (message) =>
        message.type === 'input' &&
        message.input.id === steer.id &&
        message.input.status === 'staged',
    )
    await place.release('go-1')
    expect(await place.json(`${path}/deliveries/${send.id}?wait=true`)).toMatchObject({
      settled: true,
      result: { status: 'completed', turn: 1, text: 'after the steer' },
    })
    expect(await place.json(`${path}/deliveries/${steer.id}?wait=true`)).toMatchObject({
      result: { status: 'completed', turn: 1 },
    })
    expect(await place.json(`${path}/deliveries/${inject.id}?wait=true`)).toMatchObject({
      result: { status: 'logged' },
    })
    expect((await place.call(`${path}/deliveries/nope`)).status).toBe(404)

    const continued = await place.json<Answer>(`${path}/continue?wait=true`, { json: {} })
    expect(continued).toMatchObject({
      kind: 'continue',
      result: { status: 'completed', turn: 2, text: 'continued' },
    })

    const long = await place.json<Answer>(`${path}/send`, { json: { text: 'long one' } })
    await stream.until(isDelta('will be cut'))
    const queued = await place.json<Answer>(`${path}/send`, { json: { text: 'queued follow-up' } })
    const canceled = await place.json<{ discarded: { id: string }[] }>(`${path}/cancel`, {
      json: {},
    })
    expect(canceled.discarded.map((item) => item.id)).toEqual([queued.id])
    expect(await place.json(`${path}/deliveries/${long.id}?wait=true`)).toMatchObject({
      result: { status: 'canceled', turn: 3 },
    })
    expect(await place.json(`${path}/deliveries/${queued.id}?wait=true`)).toMatchObject({
      result: { status: 'discarded', reason: 'canceled' },
    })
    await stream.until(
      (message) =>
        message.type === 'input' &&
        message.input.id === queued.id &&
        message.input.status === 'discarded',
    )

    const compacted = await place.json<Answer>(`${path}/compact?wait=true`, { json: {} })
    expect(compacted).toMatchObject({
      kind: 'compact',
      settled: true,
      result: { status: 'skipped' },
    })

    const log = await place.checkedLog(header.id)
    const turn1 = log.slice(0, log.findIndex((event) => event.type === 'turn/end') + 1)
    expect(typesOf(turn1)).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/header',
      'assistant/message',
      'step/end',
      'steering/message',
      'user/message',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const context = turn1[7]!.data as EventMap['user/message']
    expect(context).toMatchObject({
      id: inject.id,
      source: { kind: 'plugin', name: 'ci' },
      meta: { run: 7 },
    })
    expect(log.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'canceled' } } })
  })

  it('puts approval questions to every client, re-sends open ones on reconnect, and takes answers', async () => {
    const place = await webPlace([
      { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'echo one' } }] },
      { toolCalls: [{ id: 'c2', name: 'bash', args: { command: 'echo two' } }] },
      { toolCalls: [{ id: 'c3', name: 'bash', args: { command: 'echo two' } }] },
      { toolCalls: [{ id: 'c4', name: 'bash', args: { command: 'echo four' } }] },
      { text: 'done' },
    ])
    const { header } = await place.json<Created>('/api/sessions', { json: {} })
    const path = `/api/sessions/${header.id}`
    const first = place.stream(header.id)
    const send = await place.json<Answer>(`${path}/send`, { json: { text: 'run things' } })
    const ask = async (callId: string) => {
      const message = await first.until(
        (candidate) => candidate.type === 'approval' && candidate.approval.callId === callId,
      )
      return message.type === 'approval' ? message.approval : undefined
    }

    const one = (await ask('c1'))!
    expect(one).toMatchObject({ name: 'bash', rule: { tool: 'bash', command: 'echo one' } })
    // A page that connects now is asked the same open question.
    const late = place.stream(header.id)
    const caughtUp = await late.until((message) => message.type === 'caught-up')
    expect(caughtUp.type === 'caught-up' && caughtUp.live.approvals).toEqual([one])
    await place.json(`${path}/approvals/${one.id}`, { json: { answer: 'deny', reason: 'not now' } })
    await late.until((message) => message.type === 'approval/end' && message.id === one.id)
    expect(
      (await place.call(`${path}/approvals/${one.id}`, { json: { answer: 'allow' } })).status,
    ).toBe(404)

    const two = (await ask('c2'))!
    await place.json(`${path}/approvals/${two.id}`, { json: { answer: 'allow', always: true } })
    // "Always" remembered this exact command: c3 runs without a question.
    await ask('c4').then((four) =>
      place.json(`${path}/approvals/${four!.id}`, { json: { answer: 'allow' } }),
    )
    expect(await place.json(`${path}/deliveries/${send.id}?wait=true`)).toMatchObject({
      result: { status: 'completed', text: 'done' },
    })
    expect(first.messages.filter((message) => message.type === 'approval')).toHaveLength(3)
    const results = (await place.checkedLog(header.id))
      .filter((event) => event.type === 'tool/result')
      .map((event) => event.data as EventMap['tool/result'])
    expect(results.map((result) => [result.callId, result.isError])).toEqual([
      ['c1', true],
      ['c2', false],
      ['c3', false],
      ['c4', false],
    ])
    expect(JSON.stringify(results[0]!.content)).toMatch(/not now/)
    expect(await place.json(`${path}/approval-mode`, { json: { mode: 'yolo' } })).toEqual({
      mode: 'yolo',
    })
    expect((await place.call(`${path}/approval-mode`, { json: { mode: 'reckless' } })).status).toBe(
      400,
    )
  })

  it('a question waits for an answer until its turn is canceled, then the call is refused', async () => {
    const place = await webPlace([
      { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'rm -rf build' } }] },
    ])
    const { header } = await place.json<Created>('/api/sessions', { json: {} })
    const path = `/api/sessions/${header.id}`
    const stream = place.stream(header.id)
    const send = await place.json<Answer>(`${path}/send`, { json: { text: 'clean up' } })
    const asked = await stream.until((message) => message.type === 'approval')
    await place.json(`${path}/cancel`, { json: {} })
    const ended = await stream.until((message) => message.type === 'approval/end')
    expect(ended).toMatchObject({
      id: asked.type === 'approval' ? asked.approval.id : '',
      outcome: 'canceled',
    })
    expect(await place.json(`${path}/deliveries/${send.id}?wait=true`)).toMatchObject({
      result: { status: 'canceled' },
    })
    const result = (await place.checkedLog(header.id)).find((event) => event.type === 'tool/result')
    expect(result?.data).toMatchObject({ callId: 'c1', isError: true })
  })
})
