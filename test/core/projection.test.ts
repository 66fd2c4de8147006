import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createSession,
  type EventMap,
  type EventType,
  project,
  type SessionEvent,
} from '../../src/index.js'
import { validLog } from '../support/arbitraries.js'
import {
  assistant,
  buildLog,
  compaction,
  steering,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'

describe('project', () => {
  it('passes a <system-reminder> text through byte for byte and never renders meta or source', () => {
    const reminder = '<system-reminder>\nThe user prefers tabs.\n</system-reminder>'
    const log = buildLog([
      [
        'user/message',
        {
          id: 'm1',
          content: [{ type: 'text', text: reminder }],
          source: { kind: 'plugin', name: 'workspace' },
          meta: { secret: 'META-VALUE' },
        },
      ],
    ])
    const messages = project(log)
    expect(messages).toEqual([{ role: 'user', content: [{ type: 'text', text: reminder }] }])
    expect(JSON.stringify(messages)).not.toContain('META-VALUE')
    expect(JSON.stringify(messages)).not.toContain('workspace')
  })

  it('keeps consecutive user-role messages separate, steering included', () => {
    const log = buildLog([user('a'), turnStart(1), user('b'), steering('c', 1), turnEnd(1)])
    expect(project(log)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
      { role: 'user', content: [{ type: 'text', text: 'c' }] },
    ])
  })

  it('projects assistant messages, tool results, and omits empty assistant content', () => {
    const log = buildLog([
      turnStart(1),
      user('P'),
      stepStart(1, 1),
      assistant('', [{ id: 'c1', name: 'read' }]),
      toolCall('c1', 'read'),
      toolResult('c1', 'file body', 'read'),
      stepEnd(1, 1),
      stepStart(1, 2),
      assistant(''),
      stepEnd(1, 2),
      turnEnd(1),
    ])
    expect(project(log)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'P' }] },
      { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'read', args: {} }] },
      {
        role: 'tool',
        callId: 'c1',
        name: 'read',
        content: [{ type: 'text', text: 'file body' }],
        isError: false,
      },
    ])
  })

  it('replaces history before firstKeptSeq with the summary (docs/spec.md §10)', () => {
    const log = buildLog([
      user('old'), // 0
      turnStart(1),
      user('P1'),
      stepStart(1, 1),
      assistant('A1'),
      stepEnd(1, 1),
      turnEnd(1), // 1-6
      turnStart(2),
      user('P2'),
      stepStart(2, 1),
      assistant('A2'),
      stepEnd(2, 1),
      turnEnd(2), // 7-12
      compaction(7, 'SUMMARY'), // 13
      user('after'), // 14
    ])
    expect(project(log)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'SUMMARY' }] },
      { role: 'user', content: [{ type: 'text', text: 'P2' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'A2' }] },
      { role: 'user', content: [{ type: 'text', text: 'after' }] },
    ])
  })

  it('uses only the latest compaction, and a compaction keeping nothing shows just its summary', () => {
    const log = buildLog([
      user('a'),
      user('b'),
      compaction(1, 'S1'),
      user('c'),
      compaction(3, 'S2'),
      user('d'),
      compaction(6, 'S3'),
    ])
    expect(project(log.slice(0, 6))).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'S2' }] },
      { role: 'user', content: [{ type: 'text', text: 'c' }] },
      { role: 'user', content: [{ type: 'text', text: 'd' }] },
    ])
    expect(project(log)).toEqual([{ role: 'user', content: [{ type: 'text', text: 'S3' }] }])
  })

  it('passes content by reference from the log (nothing is re-rendered)', () => {
    const log = buildLog([user('x')])
    const first = log[0] as SessionEvent & { data: EventMap['user/message'] }
    expect(project(log)[0]!.content).toBe(first.data.content)
  })
})

function replay(events: readonly SessionEvent[]) {
  const session = createSession({ checkInvariants: true })
  const snapshots: unknown[] = []
  for (const event of events) {
    session.append(event.type as EventType, event.data as never)
    snapshots.push(session.messages())
  }
  return { session, snapshots }
}

describe('projection properties', () => {
  it('incremental projection equals projection from scratch at every prefix', () => {
    fc.assert(
      fc.property(validLog(), (events) => {
        const { session, snapshots } = replay(events)
        snapshots.forEach((snapshot, index) => {
          expect(snapshot).toEqual(project(session.residentEvents.slice(0, index + 1)))
        })
      }),
      { numRuns: 200 },
    )
  })

  it('is deterministic: the same events give the same messages', () => {
    fc.assert(
      fc.property(validLog(), (events) => {
        expect(project(events)).toEqual(project(structuredClone(events)))
      }),
      { numRuns: 200 },
    )
  })

  it('messages() snapshots do not change when the log grows', () => {
    const session = createSession()
    session.append('user/message', {
      id: 'a',
      content: [{ type: 'text', text: 'a' }],
      source: { kind: 'user' },
    })
    const before = session.messages()
    session.append('user/message', {
      id: 'b',
      content: [{ type: 'text', text: 'b' }],
      source: { kind: 'user' },
    })
    expect(before).toHaveLength(1)
    expect(before[1]).toBeUndefined()
    expect([...before]).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a' }] }])
    expect(session.messages()).toHaveLength(2)
    expect(Object.isFrozen(before[0])).toBe(true)
  })
})
