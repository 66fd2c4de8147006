import assert from 'node:assert/strict'
import { test } from 'node:test'
import { average, sum } from './stats.js'

test('sum adds the values', () => {
  assert.equal(sum([1, 2, 3]), 6)
})

test('average divides the sum by the number of values', () => {
  assert.equal(average([2, 4, 6]), 4)
})

test('average of nothing is 0', () => {
  assert.equal(average([]), 0)
})
