/** `rudder sessions …` as a subprocess over a real SQLite store. */
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createAgent, openStore } from '../../../src/index.js'
import { scriptedProvider } from '../../../src/testing.js'
import { cleanEnv, runCli } from './run-cli.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-sessions-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A store holding one session with a prompt, injected context and steering. */
async function seed(url: string, cwd: string): Promise<string> {
  const store = await openStore(url)
  const session = await store.create({ cwd, title: 'seeded session' })
  let steered = false
  const agent = createAgent({
    session,
    provider: scriptedProvider([
      (request) => {
        if (!steered) {
          steered = true
          agent.steer('use tabs')
        }
        return { text: `saw ${request.messages.length} messages` }
      },
      { text: 'done with tabs' },
    ]),
  })
  agent.inject({
    content: [{ type: 'text', text: '<system-reminder>house rules</system-reminder>' }],
    source: { kind: 'plugin', name: 'house-rules' },
  })
  await agent.send('format the file').result
  await agent.dispose()
  const id = session.header.id
  await session.close()
  await store.close()
  return id
}

describe('rudder sessions', () => {
  const url = `sqlite:${join(scratch, 'sessions.db')}`
  const cwd = join(scratch, 'project')
  const ready = seed(url, cwd)

  it('list shows the sessions of this directory, newest first, from metadata', async () => {
    const id = await ready
    const result = await runCli(['sessions', 'list', '--store', url, '--cwd', cwd], {
      env: cleanEnv(),
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(id)
    expect(result.stdout).toContain('seeded session')
    const elsewhere = await runCli(['sessions', 'list', '--store', url, '--cwd', scratch], {
      env: cleanEnv(),
    })
    expect(elsewhere.stdout).toContain('no sessions for')
  })

  it('show prints a transcript that marks injected context and steering by their source', async () => {
    const id = await ready
    const result = await runCli(['sessions', 'show', id, '--store', url], { env: cleanEnv() })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(
      '[context · plugin house-rules]: <system-reminder>house rules</system-reminder>',
    )
    expect(result.stdout).toContain('you: format the file')
    expect(result.stdout).toContain('[steering · user]: use tabs')
    expect(result.stdout).toContain('assistant: done with tabs')
    expect(result.stdout).toContain('── end of turn 1: completed ──')
  })

  it('export then import into another store gives an identical export', async () => {
    const id = await ready
    const out = join(scratch, 'export.jsonl')
    expect(
      (await runCli(['sessions', 'export', id, '--store', url, '--out', out], { env: cleanEnv() }))
        .code,
    ).toBe(0)
    const other = `jsonl:${join(scratch, 'other-store')}`
    const imported = await runCli(['sessions', 'import', out, '--store', other], {
      env: cleanEnv(),
    })
    expect(imported).toMatchObject({ code: 0, stdout: `${id}\n` })
    const again = await runCli(['sessions', 'export', id, '--store', other], { env: cleanEnv() })
    expect(again.stdout).toBe(readFileSync(out, 'utf8'))
  })

  it('fork copies the session into a new one whose parent is the source', async () => {
    const id = await ready
    // Seq 0 is the context injected before the first turn; seq 1 opens turn 1.
    const inside = await runCli(['sessions', 'fork', id, '--store', url, '--at', '1'], {
      env: cleanEnv(),
    })
    expect(inside.code).toBe(2)
    expect(inside.stderr).toContain('turn')
    const result = await runCli(['sessions', 'fork', id, '--store', url, '--at', '0'], {
      env: cleanEnv(),
    })
    expect(result.code).toBe(0)
    const child = result.stdout.trim()
    const store = await openStore(url)
    try {
      const snapshot = await store.read(child)
      expect(snapshot.header.parent).toEqual({ sessionId: id, seq: 0 })
      expect(snapshot.events.map((e) => e.type)).toEqual(['user/message'])
    } finally {
      await store.close()
    }
  })

  it('repair salvages a damaged JSONL log into a new session and leaves the original as it was', async () => {
    const dir = join(scratch, 'jsonl-store')
    const jsonl = `jsonl:${dir}`
    const id = await seed(jsonl, cwd)
    const file = readdirSync(join(dir), { recursive: true })
      .map(String)
      .find((name) => name.includes(id) && name.endsWith('.jsonl'))
    expect(file).toBeDefined()
    const path = join(dir, file!)
    const lines = readFileSync(path, 'utf8').split('\n')
    lines[4] = '{"this is": not json'
    writeFileSync(path, lines.join('\n'))
    appendFileSync(path, '')
    const before = readFileSync(path, 'utf8')
    const script = join(scratch, 'unused-script.json')
    writeFileSync(script, '[]')
    const refused = await runCli(
      ['--resume', id, '--store', jsonl, '--provider', `scripted:${script}`, 'go'],
      { env: cleanEnv() },
    )
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('rudder sessions repair')
    const result = await runCli(['sessions', 'repair', id, '--store', jsonl], { env: cleanEnv() })
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).not.toBe(id)
    expect(result.stderr).toContain('The original is unchanged')
    expect(readFileSync(path, 'utf8')).toBe(before)
  })
})
