/**
 * Arrays the append path pushes events and messages onto start with object elements (decision
 * 0172): V8's optimised `push` deoptimised ("not a Smi") at the first object pushed onto each
 * new `[]`, session after session. The elements kind is read with V8's own intrinsic.
 */
import { setFlagsFromString } from 'node:v8'
import { describe, expect, it } from 'vitest'
import {
  createProjector,
  emptyObjectArray,
  openLiveSession,
  type SessionEvent,
} from '../../src/core/index.js'
import { buildLog, header, turnEnd, turnStart, user } from '../support/log-builder.js'

setFlagsFromString('--allow-natives-syntax')
const hasObjectElements = new Function('array', 'return %HasObjectElements(array)') as (
  array: unknown,
) => boolean
const hasSmiElements = new Function('array', 'return %HasSmiElements(array)') as (
  array: unknown,
) => boolean

describe('emptyObjectArray', () => {
  it('makes a new empty array with object elements, unlike a literal []', () => {
    const array = emptyObjectArray<{ id: number }>()
    expect(array).toEqual([])
    expect(Array.isArray(array)).toBe(true)
    expect(Object.isFrozen(array)).toBe(false)
    expect(hasObjectElements(array)).toBe(true)
    expect(hasSmiElements([])).toBe(true) // what the helper avoids
    expect(emptyObjectArray()).not.toBe(emptyObjectArray())
  })

  it('holds what is pushed, in order, and nothing else', () => {
    const array = emptyObjectArray<{ id: number }>()
    const first = { id: 1 }
    array.push(first, { id: 2 })
    expect(array).toEqual([{ id: 1 }, { id: 2 }])
    expect(array[0]).toBe(first)
    expect(array.length).toBe(2)
    expect(hasObjectElements(array)).toBe(true)
  })
})

describe('the arrays of a live session', () => {
  const log: SessionEvent[] = buildLog([header(), turnStart(1), user('hi'), turnEnd(1)])

  it('start with object elements, empty or after a release', () => {
    const empty = openLiveSession({
      header: { id: 's', formatVersion: 1, createdAt: 0 },
      events: [],
    })
    expect(hasObjectElements(empty.residentEvents)).toBe(true)
    const session = openLiveSession({
      header: { id: 's', formatVersion: 1, createdAt: 0 },
      events: structuredClone(log),
    })
    const history = {
      async *read() {},
      mismatch: (reason: string) => new Error(reason),
    }
    expect(session.release(history, log.length - 1)).toBe(true)
    expect(session.residentEvents).toEqual([])
    expect(hasObjectElements(session.residentEvents)).toBe(true)
  })

  it('leave the projection as it was: a projector starts empty and projects in order', () => {
    const projector = createProjector(() => undefined)
    expect(projector.messages()).toEqual([])
    for (const event of structuredClone(log)) projector.apply(event)
    expect(projector.messages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ])
  })
})
