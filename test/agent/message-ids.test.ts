import { describe, expect, it } from 'vitest'
import { newMessageId } from '../../src/agent/inputs.js'

describe('message ids', () => {
  it('are msg_ and a version 4 UUID, all different across batches of random bytes', () => {
    const ids = Array.from({ length: 1000 }, () => newMessageId())
    for (const id of ids)
      expect(id).toMatch(
        /^msg_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      )
    expect(new Set(ids).size).toBe(ids.length)
  })
})
