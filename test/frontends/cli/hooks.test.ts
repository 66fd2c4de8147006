/**
 * Command hooks through the built `rudder` bin: a broken hook config exits 2 naming the file, a
 * systemMessage reaches stderr, a guard still runs when the policy asks and --yes approves, and
 * CLAUDE_ENV_FILE exports reach later bash calls.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanEnv, runCli } from './run-cli.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-cli-hooks-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

let count = 0
/** A home, a workspace and a scripted model, with `settings` as the user's ~/.claude/settings.json. */
function setup(settings: unknown, steps: unknown[]) {
  const root = join(scratch, `case-${++count}`)
  const home = join(root, 'home')
  const cwd = join(root, 'ws')
  mkdirSync(join(home, '.claude'), { recursive: true })
  mkdirSync(cwd, { recursive: true })
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify(settings, null, 2))
  const script = join(root, 'script.json')
  writeFileSync(script, JSON.stringify(steps))
  const hook = (name: string, body: string) => {
    const path = join(root, name)
    writeFileSync(path, `#!/bin/bash\n${body}\n`)
    chmodSync(path, 0o755)
    return path
  }
  return {
    home,
    cwd,
    hook,
    settingsFile: join(home, '.claude', 'settings.json'),
    args: (...rest: string[]) => [
      '--provider',
      `scripted:${script}`,
      '--cwd',
      cwd,
      '--store',
      'memory:',
      ...rest,
    ],
    env: () => cleanEnv({ HOME: home }),
  }
}

describe('rudder with command hooks', () => {
  it('exits 2 naming the file and key of a broken hook config, before the model is called', async () => {
    const box = setup(
      {
        hooks: {
          PreToolUse: [{ matcher: 'Bash(', hooks: [{ type: 'command', command: 'true' }] }],
        },
      },
      [{ text: 'never' }],
    )
    const result = await runCli(box.args('go'), { env: box.env() })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`${box.settingsFile}: key "hooks.PreToolUse[0].matcher"`)
    expect(result.stderr).not.toMatch(/\n\s+at /)

    writeFileSync(box.settingsFile, '{"hooks": [')
    const broken = await runCli(box.args('go'), { env: box.env() })
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain(`${box.settingsFile}: not valid JSON`)
  })

  it('prints a systemMessage on stderr; the guard runs even though the policy asks and --yes approves', async () => {
    const box = setup({}, [
      { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'rm -rf build' } }] },
      { text: 'All done.' },
    ])
    const guard = box.hook(
      'guard.sh',
      `input=$(cat)\nif [[ "$input" == *"rm -rf"* ]]; then echo '{"systemMessage":"guard: blocked a destructive command","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here"}}'; fi`,
    )
    writeFileSync(
      box.settingsFile,
      JSON.stringify({
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: guard }] }] },
      }),
    )
    mkdirSync(join(box.cwd, 'build'))
    const result = await runCli(box.args('--yes', '--json', 'clean'), { env: box.env() })
    expect(result.code).toBe(0)
    // The hook's own message, then the refusal as every refused call is shown (issue 10).
    expect(result.stderr).toBe(
      'rudder: hook:PreToolUse: guard: blocked a destructive command\nrudder: refused bash rm -rf build: not here\n',
    )
    const events = result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map(
        (line) =>
          JSON.parse(line) as {
            type: string
            event?: { type: string; data: Record<string, unknown> }
          },
      )
      .filter((line) => line.type === 'event')
      .map((line) => line.event!)
    expect(events.find((event) => event.type === 'tool/result')?.data).toMatchObject({
      isError: true,
      error: { code: 'denied', message: 'The tool call was denied: not here' },
    })
    expect(events.find((event) => event.type === 'hook/run')?.data).toMatchObject({
      event: 'PreToolUse',
      decision: 'deny',
      command: guard,
    })
  })

  it('SessionStart exports written to CLAUDE_ENV_FILE are seen by later bash calls', async () => {
    const box = setup({}, [
      { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'echo "value=$GREETING"' } }] },
      { text: 'done' },
    ])
    const start = box.hook(
      'start.sh',
      `cat > /dev/null\necho 'export GREETING=hello-from-hook' >> "$CLAUDE_ENV_FILE"`,
    )
    writeFileSync(
      box.settingsFile,
      JSON.stringify({
        hooks: { SessionStart: [{ hooks: [{ type: 'command', command: start }] }] },
      }),
    )
    const result = await runCli(box.args('--yes', '--json', 'greet'), { env: box.env() })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('value=hello-from-hook')
  })

  it('reports untrusted project hooks once on stderr and does not run them', async () => {
    const box = setup({}, [{ text: 'fine' }])
    mkdirSync(join(box.cwd, '.claude'))
    const marker = join(box.cwd, 'ran')
    const projectFile = join(box.cwd, '.claude', 'settings.json')
    writeFileSync(
      projectFile,
      JSON.stringify({
        hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: `touch ${marker}` }] }] },
      }),
    )
    const result = await runCli(box.args('hi'), { env: box.env() })
    expect(result).toMatchObject({ code: 0, stdout: 'fine\n' })
    expect(existsSync(marker)).toBe(false)
    expect(result.stderr).toBe(
      `rudder: hooks: ${projectFile}: its hooks were not loaded because ${box.cwd} is not a trusted directory. Run \`rudder trust\` there to load them.\n`,
    )
  })
})
