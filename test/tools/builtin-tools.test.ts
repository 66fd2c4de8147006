import { describe, expect, it } from 'vitest'
import { builtinTools } from '../../src/tools/index.js'

describe('builtinTools', () => {
  it('makes the seven built-in tools with JSON Schema parameters', () => {
    const tools = builtinTools({ workspace: '/w' })
    expect(tools.map((tool) => tool.name)).toEqual([
      'read',
      'write',
      'edit',
      'bash',
      'grep',
      'glob',
      'ls',
    ])
    for (const tool of tools) {
      expect(tool.parameters.type, tool.name).toBe('object')
      expect(tool.description.length, tool.name).toBeGreaterThan(20)
    }
    expect(
      tools.filter((tool) => tool.concurrency === 'exclusive').map((tool) => tool.name),
    ).toEqual(['write', 'edit', 'bash'])
  })

  it('passes per-tool options through', () => {
    const [, , , bash] = builtinTools({
      workspace: '/w',
      bash: { timeoutMs: 5000, maxTimeoutMs: 9000 },
    })
    expect(bash!.description).toContain('Default timeout 5s')
    expect(bash!.parse({ command: 'x', timeout: 10 }).ok).toBe(false)
  })
})
