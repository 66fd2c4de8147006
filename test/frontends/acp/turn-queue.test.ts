/**
 * The ordering rules of a session's turn queue, in process over a real agent (the scripted
 * model is the only double): arrival order, cancel marks that reach turns whose handlers run
 * late, and the macrotask between one turn's end and the next turn's start.
 */
import { describe, expect, it } from 'vitest'
import { createTurnQueue, type TurnEnd } from '../../../src/frontends/acp/turn-queue.js'
import type { UserMessageData } from '../../../src/index.js'
import { agentHarness } from '../../support/agent-harness.js'

const person = (text: string): UserMessageData => ({
  content: [{ type: 'text', text }],
  source: { kind: 'user' },
})

function setUp(script: Parameters<typeof agentHarness>[0], cancelMark = () => -1) {
  const harness = agentHarness(script)
  const logs: string[] = []
  const queue = createTurnQueue({
    agent: harness.agent,
    session: harness.session,
    cancelMark,
    log: (message) => logs.push(message),
  })
  const ends: Promise<TurnEnd>[] = []
  const add = (arrival: number, text: string) => {
    let cancel = () => {}
    ends.push(
      new Promise<TurnEnd>((onEnd) => {
        cancel = queue.add({ arrival, prompt: person(text), contexts: [], onEnd })
      }),
    )
    return cancel
  }
  return { harness, queue, add, ends, logs }
}

describe('turn queue', () => {
  it('runs turns in arrival order, whatever order their handlers added them in', async () => {
    const { harness, add, ends } = setUp([{ text: 'a' }, { text: 'b' }])
    add(2, 'arrived second')
    add(1, 'arrived first')
    await Promise.all(ends)
    expect(harness.notation()).toBe(
      'T+1 U(arrived first) S+1 H A S-1 T-1(completed) T+2 U(arrived second) S+1 A S-1 T-2(completed)',
    )
  })

  it('ends a turn at once when a cancel that arrived after it was already handled', async () => {
    const { harness, add, ends } = setUp([{ text: 'never' }], () => 5)
    add(3, 'too late')
    expect(await ends[0]).toEqual({ kind: 'canceled' })
    await harness.agent.idle()
    expect(harness.session.residentEvents).toEqual([])
  })

  it('cancels queued and running turns that arrived before a cancel, and keeps later ones', async () => {
    let mark = -1
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const { harness, queue, add, ends } = setUp(
      [{ text: 'held', hold: held }, { text: 'later one' }],
      () => mark,
    )
    add(1, 'running')
    add(2, 'queued')
    add(4, 'after the cancel')
    await new Promise((resolve) => setImmediate(resolve))
    mark = 3
    queue.cancelBefore(mark)
    release()
    const [running, queued, later] = await Promise.all(ends)
    expect(running).toMatchObject({
      kind: 'ended',
      isCanceled: true,
      result: { status: 'canceled' },
    })
    expect(queued).toEqual({ kind: 'canceled' })
    expect(later).toMatchObject({
      kind: 'ended',
      isCanceled: false,
      result: { status: 'completed' },
    })
    expect(harness.notation()).toBe(
      'T+1 U(running) S+1 H A{interrupted} S-1 T-1(canceled) T+2 U(after the cancel) S+1 A S-1 T-2(completed)',
    )
  })

  it('starts the next turn only after a macrotask, so a response written a few microtasks later comes first', async () => {
    const { harness, queue, ends } = setUp([{ text: 'one' }, { text: 'two' }])
    let turnsSeenLate = -1
    ends.push(
      new Promise<TurnEnd>((resolve) => {
        queue.add({
          arrival: 1,
          prompt: person('first'),
          contexts: [],
          onEnd: (end) => {
            resolve(end)
            // What the SDK does after a handler settles: a few microtasks, then the write.
            void (async () => {
              for (let hop = 0; hop < 20; hop++) await Promise.resolve()
              turnsSeenLate = harness.session.residentEvents.filter(
                (event) => event.type === 'turn/start',
              ).length
            })()
          },
        })
        queue.add({ arrival: 2, prompt: person('second'), contexts: [], onEnd: () => {} })
      }),
    )
    await ends[0]
    await new Promise((resolve) => setImmediate(resolve))
    await harness.agent.idle()
    expect(turnsSeenLate).toBe(1)
    expect(harness.notation()).toMatch(/T-1\(completed\) T\+2 U\(second\)/)
  })

  it('steers only a turn that is open and arrived before the steering', async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const { harness, queue, add, ends } = setUp([
      { text: 'working', hold: held },
      { text: 'steered' },
    ])
    expect(queue.steer(1, person('nobody runs'), [])).toBeUndefined()
    add(2, 'task')
    await new Promise((resolve) => setImmediate(resolve))
    expect(queue.steer(1, person('arrived before the task'), [])).toBeUndefined()
    const delivery = queue.steer(3, person('go left'), [])
    expect(delivery).toBeDefined()
    release()
    await Promise.all(ends)
    expect(harness.notation()).toBe('T+1 U(task) S+1 H A S-1 G(go left) S+2 A S-2 T-1(completed)')
  })
})
