/**
 * Script files are taken without zod when they plainly fit (docs/decisions/0147); this checks,
 * on random scripts, that the plain check accepts only what the zod schema accepts, with the
 * same value, and that a bad script is still worded by zod.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import {
  buildScriptSchemas,
  plainScript,
  scriptedProviderFromFile,
} from '../../../src/providers/scripted/script-file.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-script-file-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const json = fc.jsonValue({ maxDepth: 2 })
const odd = fc.constantFrom(-1, 0, 1.5, '', 'stop', 'x', true, null, [], {})
const field = fc.oneof(json, odd)
const step = fc.dictionary(
  fc.constantFrom(
    'text',
    'thinking',
    'toolCalls',
    'stop',
    'error',
    'delayMs',
    'holdUntilFile',
    'other',
  ),
  fc.oneof(
    field,
    fc.array(fc.dictionary(fc.constantFrom('id', 'name', 'args', 'extra'), field, { maxKeys: 3 }), {
      maxLength: 2,
    }),
    fc.dictionary(
      fc.constantFrom('code', 'message', 'retryable', 'retryAfterMs', 'extra'),
      fc.oneof(fc.string(), fc.boolean(), fc.integer()),
      { maxKeys: 4 },
    ),
  ),
  { maxKeys: 4 },
)
const script = fc.oneof(
  fc.array(step, { maxLength: 3 }),
  fc.record(
    { model: fc.oneof(fc.string(), fc.integer()), steps: fc.array(step, { maxLength: 2 }) },
    {
      requiredKeys: ['steps'],
    },
  ),
  field,
)

describe('script files', () => {
  it('are taken without zod only when zod takes them, as zod returns them (property, fixed seed)', () => {
    const { stepsSchema, objectSchema } = buildScriptSchemas()
    let plain = 0
    fc.assert(
      fc.property(script, (value) => {
        // Through JSON, as a file is read.
        const parsed = JSON.parse(JSON.stringify(value) ?? 'null') as unknown
        const zod = Array.isArray(parsed)
          ? stepsSchema.safeParse(parsed)
          : objectSchema.safeParse(parsed)
        const checked = plainScript(parsed)
        if (checked === undefined) return
        plain++
        expect(zod.success).toBe(true)
        expect(checked).toStrictEqual(Array.isArray(zod.data) ? { steps: zod.data } : zod.data)
      }),
      { seed: 1472, numRuns: 3000 },
    )
    expect(plain).toBeGreaterThan(100)
  })

  it('word a bad script with the path of its first problem', () => {
    const file = join(scratch, 'bad.json')
    writeFileSync(file, JSON.stringify([{ text: 'a' }, { toolCalls: [{ name: 3, args: {} }] }]))
    expect(() => scriptedProviderFromFile(file)).toThrow(/is invalid at 1\.toolCalls\.0\.name: /)
  })
})
