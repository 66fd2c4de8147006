/** `rudder mcp list` through the built CLI, with real MCP servers. */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EVERYTHING, tempDir } from '../../mcp/support.js'
import { cleanEnv, runCli } from './run-cli.js'

describe('rudder mcp list', () => {
  it('starts the servers of a trusted project, lists their tools, and reports one that fails', async () => {
    const cwd = await tempDir()
    const env = cleanEnv()
    await mkdir(env.RUDDER_HOME as string, { recursive: true })
    await writeFile(
      join(env.RUDDER_HOME as string, 'config.json'),
      JSON.stringify({ trustedDirectories: [cwd] }),
    )
    await writeFile(
      join(cwd, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          broken: { command: process.execPath, args: ['-e', 'process.exit(4)'] },
        },
      }),
    )
    const run = await runCli(['mcp', 'list', '--cwd', cwd], { env })
    expect(run.stdout).toMatch(/^everything \(stdio, from .*\.mcp\.json\): ready, \d+ tools$/m)
    expect(run.stdout).toMatch(/^ {2}echo$/m)
    expect(run.stdout).toMatch(
      /^broken \(stdio, from .*\): failed: the MCP server broken did not start/m,
    )
    expect(run.code).toBe(1)
  })

  it('does not start the servers of an untrusted project and says how to trust it', async () => {
    const cwd = await tempDir()
    await writeFile(
      join(cwd, '.mcp.json'),
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      }),
    )
    const run = await runCli(['mcp', 'list', '--cwd', cwd, '--json'], { env: cleanEnv() })
    expect(JSON.parse(run.stdout)).toMatchObject({
      servers: [],
      ignored: [{ names: ['everything'] }],
    })
    expect(run.stderr).toContain(`rudder trust ${cwd}`)
    expect(run.code).toBe(0)
  })

  it('names the file and key of a bad entry and exits 2', async () => {
    const cwd = await tempDir()
    const env = cleanEnv()
    await mkdir(env.RUDDER_HOME as string, { recursive: true })
    await writeFile(
      join(env.RUDDER_HOME as string, 'config.json'),
      JSON.stringify({ mcpServers: { bad: { args: ['x'] } } }),
    )
    const run = await runCli(['mcp', 'list', '--cwd', cwd], { env })
    expect(run.stderr).toMatch(/config\.json: mcpServers\.bad is not a valid MCP server/)
    expect(run.code).toBe(2)
  })
})

describe('@server:uri in a task', () => {
  it('attaches the MCP resource as a context labelled by its server, before the prompt', async () => {
    const cwd = await tempDir()
    const env = cleanEnv()
    await mkdir(env.RUDDER_HOME as string, { recursive: true })
    await writeFile(
      join(env.RUDDER_HOME as string, 'config.json'),
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      }),
    )
    const script = join(cwd, 'script.json')
    await writeFile(script, JSON.stringify([{ text: 'read it' }]))
    const run = await runCli(
      [
        '--provider',
        `scripted:${script}`,
        '--cwd',
        cwd,
        '--json',
        'summarize @everything:demo://resource/static/document/architecture.md please',
      ],
      { env },
    )
    expect(run.code).toBe(0)
    const events = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((line) => line.type === 'event')
      .map((line) => line.event)
    const types = events.map((event: { type: string }) => event.type)
    expect(types.slice(0, 3)).toEqual(['user/message', 'turn/start', 'user/message'])
    expect(events[0].data.source).toEqual({ kind: 'plugin', name: 'mcp:everything' })
    expect(events[2].data.content[0].text).toBe(
      'summarize @everything:demo://resource/static/document/architecture.md please',
    )
  })
})
