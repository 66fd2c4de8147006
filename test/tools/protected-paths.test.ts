/**
 * Issue 9 item 2: which calls would change rudder's, git's or an agent's own configuration.
 * Such calls always ask (decide), whatever the policy; the tools refuse indirect routes.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { decide, editTool, protectedPaths, writeTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

const workspace = '/w/project'
const options = { workspace, home: '/home/me', rudderHome: '/home/me/.rudder' }
const paths = protectedPaths(options)
const targets = (name: string, args: unknown) =>
  paths.targetsOf({ name, args }).map((target) => target.path)

describe('protected paths', () => {
  it.each([
    '.rudder/config.json',
    './.rudder/new.json',
    'src/../.rudder/config.json',
    '/w/project/.rudder/config.json',
    '.RUDDER/Config.json',
    '.git/hooks/pre-commit',
    '.git/config',
    '.claude/settings.json',
    '.claude/settings.local.json',
    '.mcp.json',
    '.codex/hooks.json',
    '/home/me/.rudder/config.json',
    '/home/me/.claude/settings.json',
    '/home/me/.gitconfig',
  ])('write %s is protected', (path) => {
    expect(targets('write', { path, content: '' })).toEqual([path])
  })

  it.each([
    'src/a.ts',
    '.gitignore',
    '.github/workflows/ci.yml',
    '.claude/agents/x.md',
    '.git/HEAD',
  ])('write %s is not', (path) => {
    expect(targets('write', { path, content: '' })).toEqual([])
  })

  it('bash: words and redirections naming one, ~ and $HOME expanded, globs that could reach one', () => {
    const bash = (command: string) => targets('bash', { command })
    expect(bash('echo {} > .rudder/config.json')).toEqual(['.rudder/config.json'])
    expect(bash('cp evil .git/hooks/')).toEqual(['.git/hooks/'])
    expect(bash('sed -i s/a/b/ ~/.claude/settings.json')).toEqual(['~/.claude/settings.json'])
    expect(bash('echo x >> "$HOME/.gitconfig"')).toEqual(['$HOME/.gitconfig'])
    expect(bash('tee $RUDDER_HOME/config.json < x')).toEqual(['$RUDDER_HOME/config.json'])
    expect(bash('cd .rudder && echo > config.json')).toEqual(['.rudder'])
    expect(bash('cat x > .r*/config.json')).toEqual(['.r*/config.json'])
    expect(bash('cp x .git/hook?/pre-push')).toEqual(['.git/hook?/pre-push'])
    expect(bash('mv x .claude/*.json')).toEqual(['.claude/*.json'])
    expect(bash('git --output=.mcp.json diff')).toEqual(['--output=.mcp.json'])
    expect(bash('echo "$(cat a > .codex/config.toml)"')).toEqual(['.codex/config.toml'])
    expect(bash("bash -c 'echo > .git/config'")).toEqual(['.git/config'])
  })

  it('bash: what is not protected, or cannot be known before the line runs', () => {
    const bash = (command: string) => targets('bash', { command })
    expect(bash('ls *; cat *.md; rm -rf build')).toEqual([])
    expect(bash('git add . && git commit -m "edit .rudder notes"')).toEqual([])
    expect(bash('echo x > $FILE')).toEqual([])
    expect(bash('git config --get user.name; git config user.email')).toEqual([])
  })

  it('bash: git config that changes a setting', () => {
    const bash = (command: string) => targets('bash', { command })
    expect(bash('git config core.hooksPath /tmp/x')).toEqual(['git config'])
    expect(bash('git -C sub config --global --add alias.x "!sh"')).toEqual(['git config'])
    expect(bash('git config unset user.name')).toEqual(['git config'])
    expect(bash('git config --list')).toEqual([])
  })

  it('decide: a protected change asks whatever the policy, but a deny stays a deny', () => {
    const allowAll = { default: 'allow' as const }
    expect(
      decide(
        allowAll,
        { name: 'write', args: { path: '.mcp.json', content: '' } },
        { protectedPaths: paths },
      ),
    ).toEqual({
      action: 'ask',
      reason:
        "write would change .mcp.json (MCP server configuration); changes to these always need a person's approval, whatever the approval policy or --yes says",
      protectedTargets: [{ path: '.mcp.json', what: 'MCP server configuration' }],
    })
    expect(decide(allowAll, { name: 'write', args: { path: '.mcp.json', content: '' } })).toEqual({
      action: 'run',
    })
    expect(
      decide(
        { tools: { write: 'deny' } },
        { name: 'write', args: { path: '.mcp.json' } },
        { protectedPaths: paths },
      ).action,
    ).toBe('deny')
  })
})

describe('write and edit refuse to reach a protected file under another name', () => {
  it('through a symlink, while the file itself is written when named (after approval)', async () => {
    const root = await tempDir()
    await mkdir(join(root, '.rudder'))
    await writeFile(join(root, '.rudder', 'config.json'), '{"model":"a/b"}\n')
    await symlink(join(root, '.rudder'), join(root, 'settings'))
    await symlink(join(root, '.rudder', 'config.json'), join(root, 'cfg.json'))
    const write = await runTool(writeTool({ workspace: root }), {
      path: 'settings/config.json',
      content: '{}',
    })
    expect(write).toMatchObject({
      isError: true,
      text: "settings/config.json leads to .rudder/config.json (rudder's project configuration) through a symbolic link, so it was not changed. Changes to that file always need the user's approval: name .rudder/config.json itself, and the user will be asked.",
    })
    const edit = await runTool(editTool({ workspace: root }), {
      path: 'cfg.json',
      oldText: 'a/b',
      newText: 'c/d',
    })
    expect(edit.isError).toBe(true)
    expect(await readFile(join(root, '.rudder', 'config.json'), 'utf8')).toBe('{"model":"a/b"}\n')
    const direct = await runTool(writeTool({ workspace: root }), {
      path: '.rudder/config.json',
      content: '{}',
    })
    expect(direct.isError).toBe(false)
  })
})
