import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonLength } from '../../src/core/json-length.js'

describe('jsonLength', () => {
  it('equals the length of JSON.stringify for any value', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBoxedValues: false,
          withMap: false,
          withSet: false,
          withBigInt: false,
          withTypedArray: false,
          withSparseArray: true,
          withNullPrototype: true,
          withObjectString: true,
          withDate: true,
          withUnicodeString: true,
        }),
        (value) => jsonLength(value) === (JSON.stringify(value)?.length ?? 0),
      ),
      { numRuns: 2000 },
    )
  })

  it('counts escapes and lone surrogates as JSON writes them', () => {
    const code = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit))
    fc.assert(
      fc.property(fc.string({ unit: code }), (text) => {
        expect(jsonLength(text)).toBe(JSON.stringify(text).length)
        expect(jsonLength({ [text]: text })).toBe(JSON.stringify({ [text]: text }).length)
      }),
      { numRuns: 2000 },
    )
  })

  it('measures a value with toJSON, a class instance and numbers as JSON.stringify does', () => {
    const values = [
      { toJSON: () => 'x' },
      new Date(0),
      [1.5, -0, Number.NaN, 1e21],
      { a: undefined },
    ]
    for (const value of values) expect(jsonLength(value)).toBe(JSON.stringify(value).length)
  })
})
