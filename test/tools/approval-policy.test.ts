import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/index.js'
import { splitCommand } from '../../src/tools/approval-policy.js'
import {
  type ApprovalPolicy,
  DEFAULT_APPROVAL_POLICY,
  decide,
  parseApprovalPolicy,
} from '../../src/tools/index.js'

const bash = (command: string) => ({ name: 'bash', args: { command } })

describe('decide: tools', () => {
  it('uses the tool entry, then the default, then ask', () => {
    const policy: ApprovalPolicy = { default: 'deny', tools: { read: 'allow', write: 'ask' } }
    expect(decide(policy, { name: 'read', args: {} })).toEqual({ action: 'run' })
    expect(decide(policy, { name: 'write', args: {} })).toEqual({
      action: 'ask',
      reason: 'write needs approval (the approval policy says ask)',
    })
    expect(decide(policy, { name: 'edit', args: {} })).toEqual({
      action: 'deny',
      reason:
        'The approval policy does not allow the edit tool. Do not call it again; if you need it, tell the user why so they can change the policy.',
    })
    expect(decide({}, { name: 'edit', args: {} }).action).toBe('ask')
  })

  it('has a default policy that lets reading run and asks for the rest', () => {
    expect(decide(DEFAULT_APPROVAL_POLICY, { name: 'grep', args: {} })).toEqual({ action: 'run' })
    expect(decide(DEFAULT_APPROVAL_POLICY, bash('ls')).action).toBe('ask')
  })
})

describe('decide: bash rules', () => {
  const policy: ApprovalPolicy = {
    default: 'ask',
    tools: { bash: 'ask' },
    bash: [
      { pattern: 'git push*', action: 'ask' },
      { pattern: 'git *', action: 'allow' },
      { pattern: 'npm test*', action: 'allow' },
      { pattern: 'rm -rf *', action: 'deny' },
    ],
  }

  it('lets the first matching rule decide', () => {
    expect(decide(policy, bash('git status'))).toEqual({ action: 'run' })
    expect(decide(policy, bash('git push origin main'))).toEqual({
      action: 'ask',
      reason: 'bash: git push origin main ("git push origin main" matches the rule "git push*")',
    })
  })

  it('falls back to tools.bash, then default, for an unmatched command', () => {
    expect(decide(policy, bash('make'))).toEqual({
      action: 'ask',
      reason: 'bash: make (no bash rule matches "make")',
    })
    expect(decide({ default: 'allow', bash: [] }, bash('make'))).toEqual({ action: 'run' })
  })

  it('checks every command of a line: the strictest wins', () => {
    const denied = decide(policy, bash('git status && rm -rf /'))
    expect(denied.action).toBe('deny')
    expect(denied).toMatchObject({
      reason: expect.stringContaining('"rm -rf /" matches the rule "rm -rf *"'),
    })
    expect(decide(policy, bash('git status; make')).action).toBe('ask')
    expect(decide(policy, bash('npm test 2>&1 | git diff')).action).toBe('run')
    expect(decide(policy, bash('(git status) || rm -rf x')).action).toBe('deny')
  })

  it('does not split inside quotes, and ignores leading assignments and keywords', () => {
    expect(decide(policy, bash('git commit -m "a; rm -rf /"'))).toEqual({ action: 'run' })
    expect(decide(policy, bash('CI=1 FOO="a b" rm -rf build')).action).toBe('deny')
    expect(decide(policy, bash('if true; then rm -rf build; fi')).action).toBe('deny')
  })

  it('checks the commands inside substitutions and subshells', () => {
    expect(decide(policy, bash('git log $(rm -rf ~)')).action).toBe('deny')
    expect(decide(policy, bash('git log `rm -rf ~`')).action).toBe('deny')
    expect(decide(policy, bash('git log $(whoami)')).action).toBe('ask')
  })

  it('asks for an allowed line with a substitution in double quotes, unless unmatched commands are allowed', () => {
    expect(decide(policy, bash('git commit -m "$(rm -rf ~)"'))).toEqual({
      action: 'ask',
      reason:
        'bash: git commit -m "$(rm -rf ~)" (it contains a command substitution the policy cannot check)',
    })
    expect(decide(policy, bash("git log '$(literal)'"))).toEqual({ action: 'run' })
    expect(decide({ default: 'allow' }, bash('echo "$(date)"'))).toEqual({ action: 'run' })
  })

  it('matches /regex/ patterns against each command', () => {
    const regex: ApprovalPolicy = {
      default: 'allow',
      bash: [{ pattern: '/^(sudo|doas)\\b/', action: 'deny' }],
    }
    expect(decide(regex, bash('sudo apt install x')).action).toBe('deny')
    expect(decide(regex, bash('cd x && doas rm y')).action).toBe('deny')
    expect(decide(regex, bash('sudoku')).action).toBe('run')
  })

  it('applies tool entries to bash calls without a command string', () => {
    expect(decide(policy, { name: 'bash', args: { command: 42 } }).action).toBe('ask')
  })
})

describe('splitCommand', () => {
  it('splits at control operators outside quotes and keeps redirections', () => {
    expect(splitCommand("a 1 && b  '2;3' | c 2>&1 &> log; d\ne || f & g")).toEqual({
      segments: ['a 1', "b '2;3'", 'c 2>&1 &> log', 'd', 'e', 'f', 'g'],
      hasSubstitution: false,
    })
    expect(splitCommand('echo "$(date)"').hasSubstitution).toBe(true)
    expect(splitCommand('diff <(a) <(b)').hasSubstitution).toBe(true)
  })
})

describe('parseApprovalPolicy', () => {
  it('accepts a valid policy', () => {
    const policy = {
      default: 'allow',
      tools: { bash: 'ask' },
      bash: [{ pattern: 'ls*', action: 'allow' }],
    }
    expect(parseApprovalPolicy(policy)).toEqual(policy)
  })

  it('names each wrong field and the expected shape', () => {
    let error: unknown
    try {
      parseApprovalPolicy(
        {
          default: 'maybe',
          tools: { read: 'yes' },
          bash: [{ pattern: '/[/', action: 'deny' }],
          extra: 1,
        },
        'rudder.json',
      )
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toMatch(/^rudder\.json is not valid:\n/)
    expect(message).toContain('  default: ')
    expect(message).toContain('  tools.read: ')
    expect(message).toContain('  bash.0.pattern: invalid regular expression')
    expect(message).toContain('extra')
    expect(message).toContain('Expected { default?: "allow"|"ask"|"deny"')
  })
})
