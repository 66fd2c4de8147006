/**
 * Issue 9 item 16: a tool result cut for the model is saved where only the user can read it,
 * and old saved outputs are removed.
 */
import { chownSync, existsSync, readFileSync, statSync, symlinkSync, utimesSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/tools/index.js'
import { defaultSpillDirectory, saveToolOutputSync } from '../../src/tools/output-spill.js'
import { agentHarness } from '../support/agent-harness.js'
import { tempDir } from './context.js'

describe('saving a cut tool result', () => {
  it('the agent saves it in a 0700 directory as a 0600 file, and the note names it', async () => {
    const dir = join(await tempDir(), 'private', 'tool-output')
    const big = defineTool({
      name: 'big',
      description: 'big output',
      parameters: z.object({}),
      execute: () => 'secret '.repeat(500),
    })
    const h = agentHarness([{ toolCalls: [{ id: 'c1', name: 'big', args: {} }] }, { text: 'ok' }], {
      tools: [big],
      toolOutput: { limit: 100, dir },
    })
    await h.agent.send('go').result
    const result = h.session.residentEvents.find((event) => event.type === 'tool/result')!
    const note = (result.data as { content: { text: string }[] }).content.at(-1)!.text
    const path = /The full output is in (.+)\]$/.exec(note)![1]!
    expect(path.startsWith(dir)).toBe(true)
    expect(readFileSync(path, 'utf8')).toBe('secret '.repeat(500))
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
  })

  it('by default in a directory of this user only', () => {
    expect(defaultSpillDirectory()).toMatch(new RegExp(`rudder-${process.getuid?.() ?? ''}`))
  })

  it('never writes through a symlink or into a directory another user owns', async () => {
    const root = await tempDir()
    await mkdir(join(root, 'elsewhere'))
    symlinkSync(join(root, 'elsewhere'), join(root, 'linked'))
    expect(() => saveToolOutputSync({ dir: join(root, 'linked'), name: 'x', text: 't' })).toThrow(
      'is not a directory (a symlink?)',
    )
    const dir = join(root, 'out')
    saveToolOutputSync({ dir, name: 'first', text: 'one' })
    symlinkSync(join(root, 'elsewhere', 'target.txt'), join(dir, 'taken.txt'))
    const path = saveToolOutputSync({ dir, name: 'taken', text: 'two' })
    expect(path).toBe(join(dir, 'taken-2.txt'))
    expect(existsSync(join(root, 'elsewhere', 'target.txt'))).toBe(false)
    if (process.getuid?.() === 0) {
      chownSync(dir, 65534, 65534)
      expect(() => saveToolOutputSync({ dir, name: 'y', text: 't' })).toThrow(
        'belongs to another user',
      )
    }
  })

  it('removes saved outputs older than a week when it saves another', async () => {
    const dir = join(await tempDir(), 'out')
    const old = saveToolOutputSync({ dir, name: 'old', text: 'old' })
    const recent = saveToolOutputSync({ dir, name: 'recent', text: 'recent' })
    await writeFile(join(dir, 'notes.md'), 'not ours')
    const eightDaysAgo = (Date.now() - 8 * 24 * 60 * 60 * 1000) / 1000
    utimesSync(old, eightDaysAgo, eightDaysAgo)
    utimesSync(join(dir, 'notes.md'), eightDaysAgo, eightDaysAgo)
    saveToolOutputSync({ dir, name: 'new', text: 'new' })
    expect(existsSync(old)).toBe(false)
    expect(existsSync(recent)).toBe(true)
    expect(existsSync(join(dir, 'notes.md'))).toBe(true)
  })
})
