import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { builtinTools } from '../../src/tools/index.js'
import { runTool, tempDir, toolContext } from './context.js'

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

describe('built-in tools and a canceled call', () => {
  it('each returns a canceled error result without acting', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), 'text\n')
    const args: Record<string, unknown> = {
      read: { path: 'a.txt' },
      write: { path: 'b.txt', content: 'x' },
      edit: { path: 'a.txt', oldText: 'text', newText: 'changed' },
      bash: { command: 'touch c.txt' },
      grep: { pattern: 'text' },
      glob: { pattern: '*' },
      ls: {},
    }
    for (const tool of builtinTools({ workspace })) {
      const { context, controller } = toolContext(workspace)
      controller.abort()
      const result = await runTool(tool, args[tool.name], context)
      expect(result, tool.name).toMatchObject({
        isError: true,
        text: `${tool.name} was canceled before it finished.`,
      })
    }
    expect((await readdir(workspace)).sort()).toEqual(['a.txt'])
    expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('text\n')
  })
})
