/** MCP servers as tools, against the published servers and a fixture on the official SDK. */
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ToolContext } from '../../src/index.js'
import { mcpToolName } from '../../src/mcp/mcp-tools.js'
import { CHANGING, EVERYTHING, FILESYSTEM, manager, stdioServer, tempDir } from './support.js'

function context(signal = new AbortController().signal, progress: unknown[] = []): ToolContext {
  return {
    signal,
    callId: 'c1',
    cwd: '/',
    session: undefined as never,
    agent: undefined as never,
    update: (value) => progress.push(value),
    concludeTurn: () => {},
  }
}

const toolNamed = (tools: readonly { name: string }[], name: string) => {
  const tool = tools.find((candidate) => candidate.name === name)
  if (!tool) throw new Error(`no tool ${name} among ${tools.map((t) => t.name).join(', ')}`)
  return tool as (typeof tools)[number] & import('../../src/index.js').Tool<Record<string, unknown>>
}

describe('MCP tools from server-everything (stdio)', () => {
  it('lists tools as mcp__<server>__<tool> with their schema as given, and calls them', async () => {
    const { manager: mcp } = await manager([stdioServer('everything', EVERYTHING, ['stdio'])])
    await mcp.start({ everything: true })
    const tools = mcp.tools()
    const echo = toolNamed(tools, 'mcp__everything__echo')
    expect(echo.parameters).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
      $schema: 'http://json-schema.org/draft-07/schema#',
    })
    expect(await echo.execute({ message: 'hi' }, context())).toEqual({
      content: [{ type: 'text', text: 'Echo: hi' }],
      isError: false,
      meta: { server: 'everything', tool: 'echo' },
    })
    const structured = await toolNamed(tools, 'mcp__everything__get-structured-content').execute(
      { location: 'Chicago' },
      context(),
    )
    expect(structured).toMatchObject({
      isError: false,
      meta: { structuredContent: expect.any(Object) },
    })
    const image = await toolNamed(tools, 'mcp__everything__get-tiny-image').execute({}, context())
    expect(image).toMatchObject({
      content: expect.arrayContaining([
        expect.objectContaining({ type: 'image', mediaType: 'image/png' }),
      ]),
    })
    const links = await toolNamed(tools, 'mcp__everything__get-resource-links').execute(
      { count: 1 },
      context(),
    )
    expect(JSON.stringify(links)).toContain('[resource demo://resource/')
    expect(mcp.toolDefault('mcp__everything__echo')).toBe('allow')
    expect(mcp.toolDefault('mcp__everything__toggle-simulated-logging')).toBe('ask')
    expect(mcp.toolDefault('bash')).toBeUndefined()
  })

  it('gives an isError result for invalid arguments, and reports progress of a long call', async () => {
    const { manager: mcp } = await manager([stdioServer('everything', EVERYTHING, ['stdio'])])
    await mcp.start({ everything: true })
    const sum = toolNamed(mcp.tools(), 'mcp__everything__get-sum')
    const bad = await sum.execute({ a: 'one' }, context())
    expect(bad).toMatchObject({ isError: true })
    const progress: unknown[] = []
    const long = toolNamed(mcp.tools(), 'mcp__everything__trigger-long-running-operation')
    const done = await long.execute({ duration: 0.2, steps: 2 }, context(undefined, progress))
    expect(done).toMatchObject({ isError: false })
    expect(progress.length).toBeGreaterThanOrEqual(1)
  })
})

describe('lifecycle and faults', () => {
  it('sends notifications/cancelled when the turn is canceled mid-call', async () => {
    const dir = await tempDir()
    const { manager: mcp } = await manager([stdioServer('changing', CHANGING)], dir)
    await mcp.start({ everything: true })
    const wait = toolNamed(mcp.tools(), 'mcp__changing__wait')
    const controller = new AbortController()
    const marker = join(dir, 'marker')
    const call = wait.execute({ marker }, context(controller.signal))
    // Cancel once the server is inside the call: it answers pid only after the wait began.
    await toolNamed(mcp.tools(), 'mcp__changing__pid').execute({}, context())
    controller.abort()
    expect(await call).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('was canceled') }],
    })
    // The server saw the cancellation (it writes the marker in its abort handler).
    await toolNamed(mcp.tools(), 'mcp__changing__pid').execute({}, context())
    expect(readFileSync(marker, 'utf8')).toBe('canceled')
  })

  it('a server that dies mid-call gives the model an error, the person a notice, and drops its tools', async () => {
    const { manager: mcp, notices } = await manager([
      stdioServer('changing', CHANGING),
      stdioServer('everything', EVERYTHING, ['stdio']),
    ])
    await mcp.start({ everything: true })
    let changes = 0
    mcp.onToolsChanged(() => changes++)
    const result = await toolNamed(mcp.tools(), 'mcp__changing__crash').execute({}, context())
    expect(result).toMatchObject({ isError: true })
    expect(JSON.stringify(result)).toMatch(/MCP server changing could not run crash/)
    expect(notices.map((notice) => notice.server)).toContain('changing')
    expect(notices.find((notice) => notice.server === 'changing')?.message).toMatch(
      /stopped.*its log is .*changing\.log/,
    )
    expect(changes).toBeGreaterThanOrEqual(1)
    expect(mcp.tools().some((tool) => tool.name.startsWith('mcp__changing__'))).toBe(false)
    // The other server keeps working.
    expect(
      await toolNamed(mcp.tools(), 'mcp__everything__echo').execute(
        { message: 'still' },
        context(),
      ),
    ).toMatchObject({ isError: false })
    expect(mcp.summaries().find((server) => server.name === 'changing')?.state.state).toBe('failed')
  })

  it('a server that never starts fails within its start timeout with a notice naming it', async () => {
    const dir = await tempDir()
    const silent = join(dir, 'silent.mjs')
    await writeFile(silent, 'setInterval(() => {}, 1000)\n')
    const missing = stdioServer('missing', join(dir, 'no-such-file.mjs'))
    const { manager: mcp, notices } = await manager(
      [
        stdioServer('silent', silent, [], { startTimeoutMs: 300 }),
        { ...missing, startTimeoutMs: 2000 },
      ],
      dir,
    )
    await mcp.start({ everything: true })
    expect(mcp.tools()).toEqual([])
    const byServer = Object.fromEntries(notices.map((notice) => [notice.server, notice.message]))
    expect(byServer.silent).toMatch(/the MCP server silent did not start .*timed out/i)
    expect(byServer.missing).toMatch(/the MCP server missing did not start/)
    expect(mcp.summaries().map((server) => server.state.state)).toEqual(['failed', 'failed'])
  })

  it('follows tools/list_changed', async () => {
    const { manager: mcp } = await manager([stdioServer('changing', CHANGING)])
    await mcp.start({ everything: true })
    const changed = new Promise<void>((resolve) => {
      const stop = mcp.onToolsChanged(() => {
        stop()
        resolve()
      })
    })
    await toolNamed(mcp.tools(), 'mcp__changing__add-tool').execute({}, context())
    await changed
    expect(
      await toolNamed(mcp.tools(), 'mcp__changing__extra-1').execute({}, context()),
    ).toMatchObject({
      content: [{ type: 'text', text: 'extra-1 ran' }],
    })
  })
})

describe('server-filesystem and the streamable HTTP transport', () => {
  it('reads files of its allowed directory with structured results', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'notes.txt'), 'hello from a file\n')
    const { manager: mcp } = await manager([stdioServer('fs', FILESYSTEM, [dir])], dir)
    await mcp.start({ everything: true })
    const read = toolNamed(mcp.tools(), 'mcp__fs__read_text_file')
    const result = await read.execute({ path: join(dir, 'notes.txt') }, context())
    expect(result).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: 'hello from a file\n' }],
    })
    const outside = await read.execute({ path: '/etc/hostname' }, context())
    expect(outside).toMatchObject({ isError: true })
  })

  it('talks to server-everything over streamable HTTP', async () => {
    const { spawn } = await import('node:child_process')
    const { createServer } = await import('node:net')
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address()
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
      })
    })
    const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const listening = new Promise<void>((resolve) => {
      const watch = (chunk: Buffer) => {
        if (chunk.toString().includes(String(port))) resolve()
      }
      child.stdout.on('data', watch)
      child.stderr.on('data', watch)
    })
    try {
      await listening
      const { manager: mcp } = await manager([
        { transport: 'http', name: 'remote', file: 'test', url: `http://127.0.0.1:${port}/mcp` },
      ])
      await mcp.start({ everything: true })
      const echo = toolNamed(mcp.tools(), 'mcp__remote__echo')
      expect(await echo.execute({ message: 'over http' }, context())).toMatchObject({
        content: [{ type: 'text', text: 'Echo: over http' }],
      })
      await mcp.close()
    } finally {
      child.kill()
    }
  })
})

describe('resources and prompts', () => {
  it('reads a resource as a context from the server, and fills in a prompt as a message', async () => {
    const { manager: mcp } = await manager([stdioServer('everything', EVERYTHING, ['stdio'])])
    await mcp.start({ everything: true })
    const context = await mcp.resourceContext(
      'everything',
      'demo://resource/static/document/architecture.md',
    )
    expect(context.source).toEqual({ kind: 'plugin', name: 'mcp:everything' })
    expect(context.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('#') })
    const prompts = await mcp.prompts()
    expect(prompts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          server: 'everything',
          name: 'args-prompt',
          arguments: [
            { name: 'city', required: true },
            { name: 'state', required: false },
          ],
        }),
      ]),
    )
    const message = await mcp.promptMessage('everything', 'args-prompt', { city: 'Oslo' })
    expect(message.source).toEqual({ kind: 'user' })
    expect(JSON.stringify(message.content)).toContain('Oslo')
  })

  it('finds @server:uri references of configured servers only', async () => {
    const { findResourceReferences } = await import('../../src/runtime/mcp-references.js')
    expect(
      findResourceReferences('see @docs:file:///a.md, and @mail:x and @docs:file:///a.md', [
        'docs',
      ]),
    ).toEqual([{ server: 'docs', uri: 'file:///a.md' }])
  })
})

describe('names', () => {
  it('keeps safe names, replaces unsafe characters and shortens long names with a hash', () => {
    expect(mcpToolName('github', 'create_issue')).toBe('mcp__github__create_issue')
    expect(mcpToolName('fs', 'read.file')).toMatch(/^mcp__fs__read_file_[0-9a-f]{8}$/)
    const long = mcpToolName('server', 'x'.repeat(80))
    expect(long).toHaveLength(64)
    expect(long).not.toBe(mcpToolName('server', `${'x'.repeat(79)}y`))
  })
})
