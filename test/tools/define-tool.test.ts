/**
 * `defineTool` derives the JSON Schema with the schema's own `toJSONSchema` method, so defining
 * a tool does not load zod (docs/decisions/0147); this checks it sends what zod's function
 * derives, and still validates with the given schema.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/tools/index.js'

describe('defineTool', () => {
  const parameters = z.object({
    query: z.string().min(2).describe('What to look for.'),
    mode: z.enum(['fast', 'full']).optional(),
    tags: z.array(z.string()).max(3).optional(),
  })
  const tool = defineTool({
    name: 'lookup',
    description: 'Looks up.',
    parameters,
    execute: () => '',
  })

  it('sends the JSON Schema zod derives (draft 7, input side)', () => {
    const derived = z.toJSONSchema(parameters, { target: 'draft-7', io: 'input' }) as Record<
      string,
      unknown
    >
    delete derived.$schema
    expect(tool.parameters).toEqual(derived)
  })

  it('validates with the zod schema and words its issues', () => {
    expect(tool.parse({ query: 'ab', mode: 'full', extra: 1 })).toEqual({
      ok: true,
      args: { query: 'ab', mode: 'full' },
    })
    const parsed = tool.parse({ query: 'a', mode: 'slow' })
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) {
      expect(parsed.message).toContain('- query: ')
      expect(parsed.message).toContain('- mode: ')
    }
  })
})
