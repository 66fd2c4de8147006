/**
 * The terminal UI with a project's `.mcp.json` (issues 16 item 6 and 9 item 1): the UI asks
 * once whether to trust the directory, then the server's prompts are slash commands and
 * `@server:uri` attaches a resource as a context labelled by its server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkLog, openStore } from '../../../src/index.js'
import { EVERYTHING } from '../../mcp/support.js'
import { cleanEnv } from '../cli/run-cli.js'
import { KEYS, killAfterEach, runInTerminal } from './pty.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-tui-mcp-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const track = killAfterEach()

describe('MCP in the terminal UI', () => {
  it('asks once to trust the project, then offers its prompts as commands and attaches @server:uri', async () => {
    const dir = mkdtempSync(join(scratch, 'case-'))
    const workspace = mkdtempSync(join(dir, 'ws-'))
    writeFileSync(
      join(workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      }),
    )
    const script = join(dir, 'script.json')
    writeFileSync(
      script,
      JSON.stringify([{ text: 'Noted the weather.' }, { text: 'Read the doc.' }]),
    )
    const store = `sqlite:${join(dir, 'sessions.db')}`
    const run = runInTerminal(
      ['-i', '--provider', `scripted:${script}`, '--store', store, '--cwd', workspace],
      { env: cleanEnv(), cwd: workspace },
    )
    track(run)
    await run.waitFor(/\.mcp\.json starts the MCP servers everything: .*Trust/s)
    run.type('y')
    await run.waitFor(/trusted .*its \.rudder\/config\.json applies in full/)
    await run.waitFor(/MCP prompts: .*\/mcp__everything__args-prompt/)
    run.type('/mcp__everything__args-prompt city=Oslo')
    run.type(KEYS.enter)
    await run.waitFor('Noted the weather.')
    run.type('read @everything:demo://resource/static/document/architecture.md')
    run.type(KEYS.enter)
    const screen = await run.waitFor('Read the doc.')
    expect(screen).toMatch(/▸ plugin:mcp:everything \(\d+ lines, Ctrl-O to expand\)/)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)

    const opened = await openStore(store)
    try {
      const [listing] = await opened.list({ limit: 10 })
      const { events } = await opened.read(listing!.id)
      expect(checkLog(events)).toEqual([])
      const messages = events
        .filter((event) => event.type === 'user/message')
        .map((event) => event.data as { source: { kind: string; name?: string }; content: unknown })
      const prompt = messages.find((data) => JSON.stringify(data.content).includes('Oslo'))
      expect(prompt?.source).toEqual({ kind: 'user' })
      const resource = messages.find((data) => data.source.name === 'mcp:everything')
      expect(resource).toBeDefined()
    } finally {
      await opened.close()
    }
  })
})
