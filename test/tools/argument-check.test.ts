/**
 * The built-in tools take arguments their written JSON Schema plainly accepts without zod
 * (docs/decisions/0147); this checks, on random arguments, that whatever that check accepts zod
 * accepts too with the same result, and that each tool's `parse` answers exactly as its zod
 * schema does (same success, same value, zod's wording of a failure).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { JsonObject } from '../../src/core/index.js'
import { checkArguments } from '../../src/tools/argument-check.js'
import { bashParameters } from '../../src/tools/builtin/bash.js'
import { editParameters } from '../../src/tools/builtin/edit.js'
import { globParameters } from '../../src/tools/builtin/glob.js'
import { grepParameters } from '../../src/tools/builtin/grep.js'
import { lsParameters } from '../../src/tools/builtin/ls.js'
import { readParameters } from '../../src/tools/builtin/read.js'
import { writeParameters } from '../../src/tools/builtin/write.js'
import { builtinTools } from '../../src/tools/index.js'

const written = {
  read: readParameters,
  write: writeParameters,
  edit: editParameters,
  bash: bashParameters(120_000, 600_000),
  grep: grepParameters(100, 1000),
  glob: globParameters(500, 5000),
  ls: lsParameters,
}

/** Values near every bound the tools use, of every JSON type and a few that are not JSON. */
const value = fc.oneof(
  fc.string({ maxLength: 3 }),
  fc.constantFrom('', 'a', 'src/**/*.ts'),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, 1.5, -0, 99, 100, 101, 599, 600, 601, 999, 1000, 1001, 4999, 5000, 5001),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, Number.NaN, Infinity),
  fc.double(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 2 }), fc.integer(), { maxKeys: 2 }),
)
const names = [
  'path',
  'content',
  'oldText',
  'newText',
  'replaceAll',
  'offset',
  'limit',
  'command',
  'timeout',
  'pattern',
  'glob',
  'ignoreCase',
  'literal',
  'other',
  '__proto__',
]
const args = fc.oneof(
  { weight: 8, arbitrary: fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 6 }) },
  { weight: 1, arbitrary: value },
)

describe('the built-in tools’ argument check', () => {
  it('accepts only what zod accepts, with the value zod returns (property, fixed seed)', () => {
    let accepted = 0
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(written)), args, (name, input) => {
        const { parameters, jsonSchema } = written[name as keyof typeof written]
        const zod = parameters().safeParse(input)
        const checked = checkArguments(jsonSchema as JsonObject, input)
        if (checked !== undefined) {
          accepted++
          expect(zod.success).toBe(true)
          expect(checked).toStrictEqual(zod.data)
        }
      }),
      { seed: 1470, numRuns: 5000 },
    )
    expect(accepted).toBeGreaterThan(250)
  })

  it('lets a tool answer as its zod schema does (property, fixed seed)', () => {
    const tools = new Map(builtinTools({ workspace: '/w' }).map((tool) => [tool.name, tool]))
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(written)), args, (name, input) => {
        const zod = written[name as keyof typeof written].parameters().safeParse(input)
        const parsed = tools.get(name)!.parse(input)
        expect(parsed.ok).toBe(zod.success)
        if (parsed.ok) expect(parsed.args).toStrictEqual(zod.data)
        else for (const issue of zod.error!.issues) expect(parsed.message).toContain(issue.message)
      }),
      { seed: 1471, numRuns: 3000 },
    )
  })

  it('takes well-formed arguments without zod, and leaves what it does not know to zod', () => {
    const schema = written.read.jsonSchema as JsonObject
    expect(checkArguments(schema, { path: 'a', offset: 2, other: 1 })).toStrictEqual({
      path: 'a',
      offset: 2,
    })
    expect(checkArguments(schema, { path: '' })).toBeUndefined()
    expect(checkArguments(schema, { offset: 2 })).toBeUndefined()
    expect(checkArguments(schema, [])).toBeUndefined()
    expect(
      checkArguments({ ...schema, additionalProperties: false }, { path: 'a' }),
    ).toBeUndefined()
    expect(
      checkArguments(
        { type: 'object', properties: { a: { type: 'string', pattern: 'x' } } },
        { a: 'y' },
      ),
    ).toBeUndefined()
  })
})
