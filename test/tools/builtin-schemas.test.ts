/**
 * The built-in tools write their JSON Schema out (so a session opens without zod work, bench
 * B10); this checks each written schema is exactly what zod derives from the zod schema the
 * tool validates with, for the default bounds and for changed ones, and that the tools send it.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { bashParameters } from '../../src/tools/builtin/bash.js'
import { editParameters } from '../../src/tools/builtin/edit.js'
import { globParameters } from '../../src/tools/builtin/glob.js'
import { grepParameters } from '../../src/tools/builtin/grep.js'
import { lsParameters } from '../../src/tools/builtin/ls.js'
import { readParameters } from '../../src/tools/builtin/read.js'
import { writeParameters } from '../../src/tools/builtin/write.js'
import { builtinTools } from '../../src/tools/index.js'

function derived(schema: z.ZodType): unknown {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>
  delete json.$schema
  return json
}

describe('the built-in tools’ written JSON Schemas', () => {
  it.each([
    ['default bounds', { workspace: '/w' }, [120_000, 600_000], [100, 1000], [500, 5000]],
    [
      'changed bounds',
      {
        workspace: '/w',
        bash: { timeoutMs: 5000, maxTimeoutMs: 9000 },
        grep: { defaultLimit: 7, maxLimit: 70 },
        glob: { defaultLimit: 9, maxLimit: 90 },
      },
      [5000, 9000],
      [7, 70],
      [9, 90],
    ],
  ] as const)(
    'equal what zod derives, and are what the tools send (%s)',
    (_, options, bash, grep, glob) => {
      const written = {
        read: readParameters,
        write: writeParameters,
        edit: editParameters,
        bash: bashParameters(bash[0], bash[1]),
        grep: grepParameters(grep[0], grep[1]),
        glob: globParameters(glob[0], glob[1]),
        ls: lsParameters,
      }
      for (const [name, { parameters, jsonSchema }] of Object.entries(written))
        expect(jsonSchema, name).toEqual(derived(parameters()))
      for (const tool of builtinTools(options))
        expect(tool.parameters, tool.name).toEqual(
          written[tool.name as keyof typeof written].jsonSchema,
        )
    },
  )

  it('still validate the arguments with zod', () => {
    const [read] = builtinTools({ workspace: '/w' })
    const parsed = read!.parse({ path: 42 })
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(parsed.message).toContain('path: Invalid input: expected string')
    expect(read!.parse({ path: 'a', offset: 0 }).ok).toBe(false)
    expect(read!.parse({ path: 'a', offset: 1.5 }).ok).toBe(false)
    expect(read!.parse({ path: 'a', offset: 2 })).toEqual({
      ok: true,
      args: { path: 'a', offset: 2 },
    })
  })
})
