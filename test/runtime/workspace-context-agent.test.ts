import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import {
  buildWorkspaceContext,
  installWorkspaceContext,
} from '../../src/runtime/workspace-context.js'
import { agentHarness } from '../support/agent-harness.js'

async function project() {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'rudder-context-agent-')))
  onTestFinished(() => rm(root, { recursive: true, force: true }))
  const home = join(root, 'home')
  const cwd = join(root, 'repo')
  await mkdir(join(cwd, '.git'), { recursive: true })
  await mkdir(join(home, '.rudder'), { recursive: true })
  await writeFile(join(home, '.rudder', 'AGENTS.md'), 'Answer briefly.\n')
  await writeFile(join(cwd, 'AGENTS.md'), 'Run npm test before finishing.\n')
  return { home, cwd, env: {} }
}

describe('workspace context with the real agent', () => {
  it('reaches the first request byte for byte, before the prompt, as its own message', async () => {
    const options = await project()
    const harness = agentHarness([{ text: 'ok' }], { cwd: options.cwd })
    installWorkspaceContext(harness.agent, options)
    const result = await harness.agent.send('hello').result
    expect(result.status).toBe('completed')
    const framed = [
      '<system-reminder>',
      'Instructions from AGENTS.md and CLAUDE.md files that apply to this workspace, from the most general to the most specific. Follow them; where they disagree, the later file wins.',
      '',
      `Contents of ${join(options.home, '.rudder', 'AGENTS.md')} (the user's instructions for every project):`,
      '',
      'Answer briefly.',
      '',
      `Contents of ${join(options.cwd, 'AGENTS.md')} (instructions for this project):`,
      '',
      'Run npm test before finishing.',
      '</system-reminder>',
    ].join('\n')
    expect(harness.provider.requests[0]!.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: framed }] },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
    ])
    // Logged between turns at session start: no turn opened for it.
    expect(harness.notation()).toMatch(
      /^U\(<system-reminder>[\s\S]*\) T\+1 U\(hello\) S\+1 H A S-1 T-1\(completed\)$/,
    )
    expect(harness.session.residentEvents[0]!.data).toMatchObject({
      source: { kind: 'plugin', name: 'workspace-context' },
    })
  })

  it('adds the context after the prompt only when the files changed', async () => {
    const options = await project()
    const harness = agentHarness([{ text: 'one' }, { text: 'two' }, { text: 'three' }], {
      cwd: options.cwd,
    })
    installWorkspaceContext(harness.agent, options)
    await harness.agent.send('first').result
    await harness.agent.send('second').result
    expect(harness.requestTexts(1).slice(-2)).toEqual(['assistant:one', 'second'])
    await writeFile(join(options.cwd, 'AGENTS.md'), 'Run npm test and npm run lint.\n')
    await harness.agent.send('third').result
    const changed = await buildWorkspaceContext(options)
    expect(harness.requestTexts(2).slice(-3)).toEqual([
      'assistant:two',
      'third',
      (changed!.message.content[0] as { text: string }).text,
    ])
  })
})
