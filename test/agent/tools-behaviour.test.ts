/** Tool execution: ordering, concurrency, validation, hooks, approval, and one result per call on every path. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, type SessionEvent } from '../../src/index.js'
import { agentHarness } from '../support/agent-harness.js'
import { echo, gate, toolWith } from './tools.js'

const call = (id: string, name = 'echo', args: object = { text: id }) => ({
  id,
  name,
  args: args as never,
})
const results = (events: readonly SessionEvent[]) =>
  events
    .filter((e) => e.type === 'tool/result')
    .map(
      (e) =>
        e.data as {
          callId: string
          isError: boolean
          content: { text: string }[]
          error?: { code: string }
        },
    )

describe('tool execution', () => {
  it('runs parallel calls together and logs results in call order, whatever finishes first', async () => {
    const release = gate()
    const finished: string[] = []
    const slow = toolWith('slow', async () => {
      await release.promise
      finished.push('slow')
    })
    const fast = toolWith('fast', () => {
      finished.push('fast')
      release.open()
    })
    const harness = agentHarness(
      [{ toolCalls: [call('c1', 'slow', {}), call('c2', 'fast', {})] }, { text: 'ok' }],
      { tools: [slow, fast] },
    )
    await harness.agent.send('P').result
    expect(finished).toEqual(['fast', 'slow'])
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(c1) TC(c2) TR(c1) TR(c2) S-1 S+2 A S-2 T-1(completed)',
    )
  })

  it('runs an exclusive call alone', async () => {
    let active = 0
    const overlaps: number[] = []
    const track = (name: string, concurrency: 'parallel' | 'exclusive') =>
      toolWith(
        name,
        async () => {
          active++
          overlaps.push(active)
          await new Promise((resolve) => setImmediate(resolve))
          active--
        },
        concurrency,
      )
    const harness = agentHarness(
      [
        {
          toolCalls: [
            call('p1', 'par', {}),
            call('x', 'excl', {}),
            call('p2', 'par', {}),
            call('p3', 'par', {}),
          ],
        },
        { text: 'ok' },
      ],
      {
        tools: [track('par', 'parallel'), track('excl', 'exclusive')],
      },
    )
    await harness.agent.send('P').result
    const order = harness.session.residentEvents
      .filter((e) => e.type === 'tool/call' || e.type === 'tool/result')
      .map(
        (e) => `${e.type === 'tool/call' ? 'TC' : 'TR'}(${(e.data as { callId: string }).callId})`,
      )
    // x starts only after p1 has finished, and p2/p3 only after x has finished.
    expect(order.indexOf('TC(x)')).toBeGreaterThan(order.indexOf('TC(p1)'))
    expect(order.indexOf('TC(p2)')).toBeGreaterThan(order.indexOf('TC(x)'))
    expect(overlaps).toEqual([1, 1, 1, 2])
    expect(results(harness.session.residentEvents).map((r) => r.callId)).toEqual([
      'p1',
      'x',
      'p2',
      'p3',
    ])
  })

  it('gives invalid arguments an error result naming the field, and the model can retry', async () => {
    let ran = 0
    const read = defineTool({
      name: 'read',
      description: 'reads',
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => `read ${path} ${++ran}`,
    })
    const harness = agentHarness(
      [
        { toolCalls: [call('c1', 'read', { path: 42 })] },
        { toolCalls: [call('c2', 'read', { path: 'a.txt' })] },
        { text: 'ok' },
      ],
      { tools: [read] },
    )
    await harness.agent.send('P').result
    const [bad, good] = results(harness.session.residentEvents)
    expect(bad).toMatchObject({ callId: 'c1', isError: true, error: { code: 'invalid-arguments' } })
    expect(bad!.content[0]!.text).toContain('path')
    expect(bad!.content[0]!.text).toContain('expected string')
    expect(good).toMatchObject({
      callId: 'c2',
      isError: false,
      content: [{ text: 'read a.txt 1' }],
    })
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TR(c1) S-1 S+2 A TC(c2) TR(c2) S-2 S+3 A S-3 T-1(completed)',
    )
  })

  it('answers an unknown tool, a throw and an invalid return value with error results', async () => {
    const thrower = toolWith('thrower', () => {
      throw new Error('disk on fire')
    })
    const weird = defineTool({
      name: 'weird',
      description: 'returns a number',
      parameters: z.object({}),
      execute: () => 42 as never,
    })
    const harness = agentHarness(
      [
        { toolCalls: [call('c1', 'nope', {}), call('c2', 'thrower', {}), call('c3', 'weird', {})] },
        { text: 'ok' },
      ],
      { tools: [thrower, weird] },
    )
    await harness.agent.send('P').result
    const [unknown, thrown, invalid] = results(harness.session.residentEvents)
    expect(unknown).toMatchObject({ isError: true, error: { code: 'unknown-tool' } })
    expect(unknown!.content[0]!.text).toContain('thrower, weird')
    expect(thrown).toMatchObject({
      isError: true,
      error: { code: 'tool-error' },
      content: [{ text: 'Error: disk on fire' }],
    })
    expect(invalid).toMatchObject({ isError: true, error: { code: 'tool-error' } })
  })

  it('denies a call from tool-pre without running it', async () => {
    let ran = false
    const tool = toolWith('work', () => {
      ran = true
    })
    const harness = agentHarness([{ toolCalls: [call('c1', 'work', {})] }, { text: 'ok' }], {
      tools: [tool],
      hooks: { 'tool-pre': () => ({ action: 'deny', reason: 'not in this repo' }) },
    })
    await harness.agent.send('P').result
    expect(ran).toBe(false)
    expect(results(harness.session.residentEvents)[0]).toMatchObject({
      isError: true,
      error: { code: 'denied' },
      content: [{ text: 'The tool call was denied: not in this repo' }],
    })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TR(c1) S-1 S+2 A S-2 T-1(completed)')
  })

  it('runs a call with arguments replaced by tool-pre, and logs the replaced arguments', async () => {
    const harness = agentHarness(
      [{ toolCalls: [call('c1', 'echo', { text: 'model' })] }, { text: 'ok' }],
      {
        tools: [echo],
        hooks: { 'tool-pre': () => ({ action: 'run', args: { text: 'hook' } }) },
      },
    )
    await harness.agent.send('P').result
    expect(harness.session.residentEvents.find((e) => e.type === 'tool/call')!.data).toMatchObject({
      args: { text: 'hook' },
    })
    expect(results(harness.session.residentEvents)[0]).toMatchObject({
      content: [{ text: 'echo: hook' }],
    })
  })

  it.each([
    ['allowed', true, false],
    ['refused', false, true],
  ])('asks the approve callback: %s', async (_, answer, isError) => {
    const asked: string[] = []
    const harness = agentHarness([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      tools: [echo],
      hooks: { 'tool-pre': () => ({ action: 'ask', reason: 'writes files' }) },
      approve: ({ call: info, reason }) => {
        asked.push(`${info.name}:${reason}`)
        return answer
      },
    })
    await harness.agent.send('P').result
    expect(asked).toEqual(['echo:writes files'])
    expect(results(harness.session.residentEvents)[0]).toMatchObject({
      isError,
      ...(isError ? { error: { code: 'not-approved' } } : {}),
    })
    expect(harness.session.residentEvents.some((e) => e.type === 'tool/call')).toBe(!isError)
  })

  it.each([
    ['allow', true],
    [{ action: 'run' }, true],
    [{ approved: false, reason: 'too risky today' }, false],
    ['deny', false],
  ] as const)('understands the approver answer %j', async (answer, approved) => {
    const harness = agentHarness([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      tools: [echo],
      hooks: { 'tool-pre': () => ({ action: 'ask' }) },
      approve: () => answer,
    })
    await harness.agent.send('P').result
    const [result] = results(harness.session.residentEvents)
    expect(result!.isError).toBe(!approved)
    if (typeof answer === 'object' && 'reason' in answer)
      expect(result!.content[0]!.text).toBe(answer.reason)
  })

  it('refuses an ask with no approver, saying how to allow the tool', async () => {
    const harness = agentHarness([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      tools: [echo],
      hooks: { 'tool-pre': () => ({ action: 'ask' }) },
    })
    await harness.agent.send('P').result
    const [result] = results(harness.session.residentEvents)
    expect(result).toMatchObject({ isError: true, error: { code: 'not-approved' } })
    expect(result!.content[0]!.text).toContain('approval policy')
  })

  it('keeps the tool’s own result when a tool-post listener throws, and reports the listener', async () => {
    const harness = agentHarness([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      tools: [echo],
      hooks: {
        'tool-post': () => {
          throw new Error('post hook broke')
        },
      },
    })
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed' })
    expect(results(harness.session.residentEvents)[0]).toMatchObject({
      isError: false,
      content: [{ text: 'echo: c1' }],
    })
    expect(harness.notifications).toContainEqual(
      expect.objectContaining({
        type: 'listener/error',
        source: 'hook:tool-post',
        message: 'post hook broke',
      }),
    )
  })

  it('fails closed when a tool-pre listener throws', async () => {
    const harness = agentHarness([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      tools: [echo],
      hooks: {
        'tool-pre': () => {
          throw new Error('pre hook broke')
        },
      },
    })
    await harness.agent.send('P').result
    expect(results(harness.session.residentEvents)[0]).toMatchObject({
      isError: true,
      error: { code: 'hook-failed' },
    })
    expect(harness.session.residentEvents.some((e) => e.type === 'tool/call')).toBe(false)
  })

  it('lets tool-post rewrite a result', async () => {
    const harness = agentHarness([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      tools: [echo],
      hooks: {
        'tool-post': () => ({
          content: [{ type: 'text', text: 'redacted' }],
          isError: true,
          additionalContexts: [],
        }),
      },
    })
    await harness.agent.send('P').result
    expect(results(harness.session.residentEvents)[0]).toMatchObject({
      isError: true,
      content: [{ text: 'redacted' }],
    })
  })

  it('truncates a huge result and saves the full output where the note says', async () => {
    const big = 'x'.repeat(3000)
    const tool = toolWith('big', () => big)
    const harness = agentHarness([{ toolCalls: [call('c1', 'big', {})] }, { text: 'ok' }], {
      tools: [tool],
      toolOutput: { limit: 1000 },
    })
    await harness.agent.send('P').result
    const [result] = results(harness.session.residentEvents)
    expect(result!.content[0]!.text).toBe('x'.repeat(1000))
    const note = result!.content[1]!.text
    expect(note).toContain('first 1000 of 3000 characters')
    const path = note.match(/The full output is in (.+)\]$/)![1]!
    expect(readFileSync(path, 'utf8')).toBe(big)
  })

  it('ends the turn after the batch when a tool concludes it', async () => {
    const tool = toolWith('finish', (ctx) => ctx.concludeTurn())
    const harness = agentHarness([{ toolCalls: [call('c1', 'finish', {})] }], { tools: [tool] })
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed', turn: 1 })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TC(c1) TR(c1) S-1 T-1(completed)')
    expect(harness.provider.requests).toHaveLength(1)
  })

  it('ends the turn after a batch of several calls when one of them concludes it', async () => {
    const tool = toolWith('finish', (ctx) => ctx.concludeTurn())
    const harness = agentHarness(
      [{ toolCalls: [call('c1'), call('c2', 'finish', {}), call('c3')] }],
      { tools: [echo, tool] },
    )
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed', turn: 1 })
    expect(harness.provider.requests).toHaveLength(1)
    expect(results(harness.session.residentEvents).map((result) => result.callId)).toEqual([
      'c1',
      'c2',
      'c3',
    ])
  })

  it('lets a tool take update and concludeTurn out of its context', async () => {
    const tool = toolWith('detached', ({ update, concludeTurn }) => {
      update({ percent: 100 })
      concludeTurn()
    })
    const harness = agentHarness([{ toolCalls: [call('c1', 'detached', {})] }], { tools: [tool] })
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed', turn: 1 })
    expect(harness.provider.requests).toHaveLength(1)
    expect(harness.notifications).toContainEqual(
      expect.objectContaining({ type: 'tool/progress', callId: 'c1', progress: { percent: 100 } }),
    )
  })

  it('reports tool progress live', async () => {
    const tool = toolWith('work', (ctx) => ctx.update({ percent: 50 }))
    const harness = agentHarness([{ toolCalls: [call('c1', 'work', {})] }, { text: 'ok' }], {
      tools: [tool],
    })
    await harness.agent.send('P').result
    expect(harness.notifications).toContainEqual({
      type: 'tool/progress',
      turn: 1,
      step: 1,
      callId: 'c1',
      name: 'work',
      progress: { percent: 50 },
    })
  })

  it('gives a running tool the abort signal on cancel and logs its result when it returns', async () => {
    const started = gate()
    let sawAbort = false
    const tool = toolWith('long', async (ctx) => {
      started.open()
      await new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
      )
      sawAbort = true
      return 'stopped early'
    })
    const harness = agentHarness([{ toolCalls: [call('c1', 'long', {}), call('c2')] }], {
      tools: [tool, echo],
    })
    const prompt = harness.agent.send('P')
    await started.promise
    harness.agent.cancel()
    expect(await prompt.result).toMatchObject({ status: 'canceled' })
    expect(sawAbort).toBe(true)
    // c1 and c2 ran in one parallel group: both started, both logged.
    expect(
      results(harness.session.residentEvents).map((r) => [r.callId, r.content[0]!.text]),
    ).toEqual([
      ['c1', 'stopped early'],
      ['c2', 'echo: c2'],
    ])
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(c1) TC(c2) TR(c1) TR(c2) S-1 T-1(canceled)',
    )
  })

  it('never starts a call of the group once an observer of an earlier tool/call cancels', async () => {
    const ran: string[] = []
    const work = toolWith('work', (ctx) => {
      ran.push(ctx.callId)
    })
    const harness = agentHarness(
      [{ toolCalls: [call('c1', 'work', {}), call('c2', 'work', {})] }],
      {
        tools: [work],
      },
    )
    harness.session.subscribe((event) => {
      if (event.type === 'tool/call' && (event.data as { callId: string }).callId === 'c1')
        harness.agent.cancel()
    })
    await harness.agent.send('P').result
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TC(c1) TR(c1) TR(c2) S-1 T-1(canceled)')
    expect(results(harness.session.residentEvents)[1]).toMatchObject({
      callId: 'c2',
      error: { code: 'canceled' },
    })
    expect(ran).toEqual(['c1'])
  })

  it('gives calls after a running exclusive call canceled results when the turn is canceled', async () => {
    const started = gate()
    const tool = toolWith(
      'long',
      async (ctx) => {
        started.open()
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        )
      },
      'exclusive',
    )
    const harness = agentHarness([{ toolCalls: [call('c1', 'long', {}), call('c2')] }], {
      tools: [tool, echo],
    })
    const prompt = harness.agent.send('P')
    await started.promise
    harness.agent.cancel()
    await prompt.result
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TC(c1) TR(c1) TR(c2) S-1 T-1(canceled)')
    expect(results(harness.session.residentEvents)[1]).toMatchObject({
      callId: 'c2',
      error: { code: 'canceled' },
    })
  })
})
