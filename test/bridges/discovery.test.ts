/** Discovery, config errors, trust, matchers and the placeholder trust check. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { discoverHooks } from '../../src/bridges/index.js'
import { compileMatcher } from '../../src/bridges/matcher.js'
import { ConfigError } from '../../src/index.js'
import { loadConfig } from '../../src/runtime/config.js'
import { isDirectoryTrusted } from '../../src/runtime/trust.js'
import { hooks, sandbox } from './support.js'

const discover = (box: ReturnType<typeof sandbox>, isProjectTrusted = true, env = {}) =>
  discoverHooks({
    cwd: box.cwd,
    home: box.home,
    env,
    isProjectTrusted,
    rudderUserFile: join(box.home, '.rudder', 'config.json'),
    rudderProjectFile: join(box.cwd, '.rudder', 'config.json'),
  })

const thrown = (run: () => unknown): Error => {
  try {
    run()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

describe('discovery', () => {
  it('loads every layer in config order: user (Claude Code, rudder, Codex), then project likewise', () => {
    const box = sandbox()
    const one = (command: string) => ({ hooks: hooks({ Stop: [{ command }] }) })
    box.json('home/.claude/settings.json', one('claude-user'))
    box.json('home/.rudder/config.json', one('rudder-user'))
    box.json('home/.codex/hooks.json', one('codex-user'))
    box.json('project/.claude/settings.json', one('claude-project'))
    box.json('project/.claude/settings.local.json', one('claude-local'))
    box.json('project/.rudder/config.json', one('rudder-project'))
    mkdirSync(join(box.cwd, '.codex'))
    writeFileSync(
      join(box.cwd, '.codex', 'config.toml'),
      '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "codex-project-toml"\ntimeout = 5\n',
    )
    const found = discover(box)
    expect(found.specs.map((spec) => [spec.command, spec.dialect])).toEqual([
      ['claude-user', 'claude'],
      ['rudder-user', 'claude'],
      ['codex-user', 'codex'],
      ['claude-project', 'claude'],
      ['claude-local', 'claude'],
      ['rudder-project', 'claude'],
      ['codex-project-toml', 'codex'],
    ])
    expect(found.specs.at(-1)).toMatchObject({ timeoutMs: 5000, key: 'hooks.Stop[0].hooks[0]' })
    expect(found.notices).toEqual([])
  })

  it('leaves untrusted project hooks out and says so once per file, naming it and how to trust', () => {
    const box = sandbox()
    box.json('home/.claude/settings.json', { hooks: hooks({ Stop: [{ command: 'mine' }] }) })
    const project = box.json('project/.claude/settings.json', {
      hooks: hooks({ Stop: [{ command: 'theirs' }] }),
    })
    const found = discover(box, false)
    expect(found.specs.map((spec) => spec.command)).toEqual(['mine'])
    expect(found.notices).toEqual([
      `${project}: its hooks were not loaded because ${box.cwd} is not a trusted directory. Run \`rudder trust\` there to load them.`,
    ])
  })

  it('a broken file is a ConfigError naming the file; a wrong shape names the key', () => {
    const box = sandbox()
    const file = join(box.home, '.claude', 'settings.json')
    box.json('home/.claude/settings.json', {})
    writeFileSync(file, '{ "hooks": ')
    expect(thrown(() => discover(box))).toBeInstanceOf(ConfigError)
    expect(thrown(() => discover(box)).message).toContain(`${file}: not valid JSON`)

    box.json('home/.claude/settings.json', { hooks: { PreToolUse: { matcher: 'Bash' } } })
    expect(thrown(() => discover(box)).message).toMatch(
      /settings\.json: invalid hooks configuration:\n- key "hooks\.PreToolUse": must be an array/,
    )
    box.json('home/.claude/settings.json', {
      hooks: { PreToolUse: [{ hooks: [{ type: 'command' }] }] },
    })
    expect(thrown(() => discover(box)).message).toContain(
      'key "hooks.PreToolUse[0].hooks[0].command" is missing',
    )
    box.json('project/.codex/hooks.json', {})
    writeFileSync(join(box.cwd, '.codex', 'config.toml'), '[[hooks.Stop]\n')
    box.json('home/.claude/settings.json', {})
    expect(thrown(() => discover(box)).message).toContain('config.toml: not valid TOML')
  })

  it('an invalid matcher regex is a ConfigError naming the file and key', () => {
    const box = sandbox()
    const file = box.json('project/.codex/hooks.json', {
      hooks: hooks({ PreToolUse: [{ matcher: 'Bash(', command: 'x' }] }),
    })
    const error = thrown(() => discover(box))
    expect(error).toBeInstanceOf(ConfigError)
    expect(error.message).toContain(
      `${file}: key "hooks.PreToolUse[0].matcher": "Bash(" is not a valid regular expression`,
    )
  })

  it('reports what it does not run: other handler types, unsupported or unknown events, ignored fields', () => {
    const box = sandbox()
    const file = box.json('home/.claude/settings.json', {
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [
              { type: 'command', command: 'ok', statusMessage: 'Checking' },
              { type: 'http', url: 'http://localhost' },
              { type: 'command', command: 'bg', async: true },
            ],
          },
        ],
        PreCompact: [{ hooks: [{ type: 'command', command: 'x' }] }],
        PreTooluse: [{ hooks: [{ type: 'command', command: 'x' }] }],
      },
    })
    const found = discover(box)
    expect(found.specs.map((spec) => spec.command)).toEqual(['ok'])
    expect(found.notices).toEqual([
      `${file}: hooks.PreToolUse[0].hooks[0].statusMessage: not supported, ignored`,
      `${file}: hooks.PreToolUse[0].hooks[1]: "http" hooks are not run by rudder (only "command")`,
      `${file}: hooks.PreToolUse[0].hooks[2]: async hooks are not run by rudder (remove "async" to run it in line)`,
      `${file}: hooks.PreCompact: rudder does not run PreCompact hooks (see docs/hooks-conformance.md)`,
      expect.stringContaining(
        `${file}: hooks.PreTooluse: unknown event; known events: SessionStart`,
      ),
    ])
  })

  it('disableAllHooks (after precedence) and Codex [features] hooks = false turn hooks off, with a notice', () => {
    const box = sandbox()
    box.json('home/.claude/settings.json', { hooks: hooks({ Stop: [{ command: 'a' }] }) })
    const local = box.json('project/.claude/settings.local.json', { disableAllHooks: true })
    box.json('home/.codex/hooks.json', { hooks: hooks({ Stop: [{ command: 'b' }] }) })
    writeFileSync(join(box.home, '.codex', 'config.toml'), '[features]\nhooks = false\n')
    const found = discover(box)
    expect(found.specs).toEqual([])
    expect(found.notices).toEqual([
      `${local}: "disableAllHooks": true turns off the Claude Code hooks found; none of them run.`,
      `${join(box.home, '.codex', 'config.toml')}: [features] hooks = false turns off the Codex hooks found; none of them run.`,
    ])
  })
})

describe('matchers', () => {
  const where = 'file: key "m"'
  it('Claude Code: exact names and lists, unanchored regexes otherwise, * and "" match all', () => {
    const list = compileMatcher('claude', 'Edit|Write', where)
    expect(['Edit', 'Write', 'NotebookEdit', 'edit'].map(list)).toEqual([true, true, false, false])
    expect(compileMatcher('claude', 'Edit, Write', where)('Write')).toBe(true)
    expect(compileMatcher('claude', 'Edit.*', where)('NotebookEdit')).toBe(true)
    expect(compileMatcher('claude', '^Notebook', where)('NotebookEdit')).toBe(true)
    expect(compileMatcher('claude', 'mcp__memory', where)('mcp__memory__x')).toBe(false)
    for (const all of ['*', '', undefined])
      expect(compileMatcher('claude', all, where)('Bash')).toBe(true)
  })

  it('Codex: every matcher is a regex', () => {
    expect(compileMatcher('codex', 'Edit', where)('NotebookEdit')).toBe(true)
    expect(compileMatcher('codex', '^Bash$', where)('Bash')).toBe(true)
    expect(compileMatcher('codex', '*', where)('anything')).toBe(true)
  })
})

describe('isDirectoryTrusted', () => {
  it('trusts a listed directory (not its subdirectories by a parent), from the user file only', () => {
    const box = sandbox()
    const env = { RUDDER_HOME: join(box.home, '.rudder') }
    box.json('home/.rudder/config.json', {})
    const location = { cwd: box.cwd, env, home: box.home }
    const config = loadConfig(location)
    expect(isDirectoryTrusted(location, box.cwd)).toBe(false)
    writeFileSync(config.userFile, JSON.stringify({ trustedDirectories: [box.cwd] }))
    expect(isDirectoryTrusted(location, box.cwd)).toBe(true)
    // Trust is for the directory itself, not everything under a trusted parent.
    writeFileSync(config.userFile, JSON.stringify({ trustedDirectories: [join(box.cwd, '..')] }))
    expect(isDirectoryTrusted(location, box.cwd)).toBe(false)
    writeFileSync(config.userFile, JSON.stringify({ trustedDirectories: [join(box.cwd, 'sub')] }))
    expect(isDirectoryTrusted(location, box.cwd)).toBe(false)
    // A project cannot trust itself.
    box.json('project/.rudder/config.json', { trustedDirectories: [box.cwd] })
    expect(isDirectoryTrusted(location, box.cwd)).toBe(false)
  })
})
