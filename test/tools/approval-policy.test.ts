import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/index.js'
import {
  type ApprovalPolicy,
  DEFAULT_APPROVAL_POLICY,
  decide,
  parseApprovalPolicy,
} from '../../src/tools/index.js'
import { commandsToCheck } from '../../src/tools/shell-commands.js'
import { runWithDeadline } from '../support/deadline.js'

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

  it('checks a substitution inside double quotes as a command of its own', () => {
    expect(decide(policy, bash('git commit -m "$(rm -rf ~)"'))).toMatchObject({
      action: 'deny',
      reason: expect.stringContaining('"rm -rf ~" matches the rule "rm -rf *"'),
    })
    expect(decide(policy, bash('git commit -m "$(whoami)"'))).toEqual({
      action: 'ask',
      reason: 'bash: git commit -m "$(whoami)" (no bash rule matches "whoami")',
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

describe('decide: a deny rule cannot be dodged by respelling (issue 9 item 3)', () => {
  const policy: ApprovalPolicy = {
    default: 'ask',
    bash: [
      { pattern: 'rm *', action: 'deny' },
      { pattern: 'git status', action: 'allow' },
      { pattern: 'npm test*', action: 'allow' },
      { pattern: 'echo *', action: 'allow' },
      { pattern: 'ls*', action: 'allow' },
    ],
  }
  it.each([
    '\\rm x',
    "'rm' x",
    '"rm" x',
    "r''m x",
    "$'\\x72m' x",
    '/bin/rm x',
    '/usr/bin/rm -f x',
    'command rm x',
    'builtin rm x',
    'exec rm x',
    'env rm x',
    'env -i FOO=1 rm x',
    '/usr/bin/env -u HOME rm x',
    'nice -n 5 rm x',
    'nohup rm x &',
    'time -p rm x',
    'timeout -s KILL 5 rm x',
    'stdbuf -oL rm x',
    'setsid rm x',
    'sudo -u root rm x',
    'sudo -E HOME=/ rm x',
    'doas rm x',
    'xargs rm < list',
    'find . -name "*.o" -exec rm {} \\;',
    'echo "$(rm x)"',
    'echo "`rm x`"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'echo ${X:-$(rm x)}',
    'diff <(ls) <(rm x)',
    "bash -c 'rm x'",
    "sh -ec 'ls; rm x'",
    'bash -o pipefail -c "echo hi | rm x"',
    "eval 'rm x'",
    "env -S 'rm x'",
    'watch -n 1 rm x',
    'cat <<EOF\n$(rm x)\nEOF',
    'case a in a) rm x;; esac',
    'for f in *; do rm "$f"; done',
    'f() { rm x; }; f',
    '(cd /tmp && rm x)',
    '{ rm x; }',
    'if [[ -f x ]]; then rm x; fi',
    'X=$(rm x) ls',
    'rm\\\n x',
  ])('%s is denied', (line) => {
    expect(decide(policy, bash(line)).action).toBe('deny')
  })

  it('keeps what rules allow allowed, and quoting does not matter', () => {
    expect(decide(policy, bash('git status'))).toEqual({ action: 'run' })
    expect(decide(policy, bash('\'git\' "status"'))).toEqual({ action: 'run' })
    expect(decide(policy, bash('npm test 2>&1 | ls -la'))).toEqual({ action: 'run' })
    expect(decide(policy, bash('echo "rm x"'))).toEqual({ action: 'run' })
    expect(decide(policy, bash("echo 'a; rm -rf /'"))).toEqual({ action: 'run' })
    expect(decide(policy, bash("cat <<'EOF'\n$(rm x)\nEOF")).action).toBe('ask')
  })

  it('an allow rule never vouches for a program computed when the line runs, or a wrapper it did not name', () => {
    expect(decide(policy, bash('$CMD status'))).toMatchObject({ action: 'ask' })
    expect(decide({ bash: [{ pattern: '*', action: 'allow' }] }, bash('$(which rm) x'))).toEqual({
      action: 'ask',
      reason:
        'bash: $(which rm) x ("$(which rm) x" runs a program that is only known when the line runs)',
    })
    expect(decide(policy, bash('e{c,}ho x')).action).toBe('ask')
    // sudo, xargs and find -exec need a rule of their own besides the command they run.
    expect(decide(policy, bash('sudo ls'))).toMatchObject({
      action: 'ask',
      reason: 'bash: sudo ls (no bash rule matches "sudo ls")',
    })
    expect(decide(policy, bash('env ls'))).toEqual({ action: 'run' })
    expect(decide(policy, bash('/opt/evil/git status')).action).toBe('ask')
    expect(decide({ default: 'allow' }, bash('$CMD status'))).toEqual({ action: 'run' })
  })

  it('lets rules see redirections', () => {
    const redirections: ApprovalPolicy = {
      default: 'allow',
      bash: [
        { pattern: '* > .env*', action: 'deny' },
        { pattern: '/2>&1/', action: 'ask' },
      ],
    }
    expect(decide(redirections, bash('echo KEY=1 > .env')).action).toBe('deny')
    expect(decide(redirections, bash("printf x >'.env.local'")).action).toBe('deny')
    expect(decide(redirections, bash('make 2>&1')).action).toBe('ask')
    expect(decide(redirections, bash('echo x > out')).action).toBe('run')
  })
})

describe('commandsToCheck', () => {
  const texts = (line: string) =>
    commandsToCheck(line).commands.map((command) =>
      command.isView ? `view:${command.text}` : command.text,
    )

  it('splits at control operators, removes quoting and keeps redirections', () => {
    expect(texts("a 1 && b  '2;3' | c 2>&1 &> log; d\ne || f & g")).toEqual([
      'a 1',
      'b 2;3',
      'c 2>&1 &> log',
      'd',
      'e',
      'f',
      'g',
    ])
  })

  it('unwraps wrappers, keeping their line and other spellings as views', () => {
    expect(texts('/usr/bin/env FOO=1 nice -n 3 /bin/rm -f x > log')).toEqual([
      'view:/usr/bin/env FOO=1 nice -n 3 /bin/rm -f x > log',
      'view:env FOO=1 nice -n 3 /bin/rm -f x > log',
      'view:nice -n 3 /bin/rm -f x > log',
      '/bin/rm -f x > log',
      'view:rm -f x > log',
    ])
    expect(texts('ls | xargs -0 rm -f')).toEqual(['ls', 'xargs -0 rm -f', 'rm -f', 'view:rm -f …'])
  })

  it('never throws, whatever the line (property, fixed seed)', () => {
    const piece = fc.constantFrom(
      'rm',
      ' ',
      'x',
      "'",
      '"',
      '\\',
      '$',
      '(',
      ')',
      '`',
      '{',
      '}',
      ',',
      ';',
      '&',
      '|',
      '<',
      '>',
      '\n',
      '#',
      '~',
      '*',
      '[[',
      ']]',
      'case',
      'in',
      'esac',
      ';;',
      '<<E',
      'E',
      '$((',
      '))',
      '${',
      "$'",
      '=',
      'bash -c',
      'env -S',
      'eval',
      'xargs',
      'find -exec',
    )
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const checked = commandsToCheck(pieces.join(''))
        expect(Array.isArray(checked.commands)).toBe(true)
      }),
      { seed: 9003, numRuns: 2000 },
    )
  })

  it('reads hostile lines in linear time (in a child process with a deadline)', async () => {
    const run = await runWithDeadline(`
      import { commandsToCheck } from '@src/tools/shell-commands.ts'
      const lines = ['{'.repeat(200000), '~'.repeat(200000), '$a'.repeat(100000),
        '(('.repeat(50000), 'case x in '.repeat(20000), "'".repeat(200001), '"$('.repeat(30000),
        '<<E\\n'.repeat(40000), '\`'.repeat(100001), 'x() '.repeat(50000), 'a{b,c}'.repeat(30000),
        'bash -c '.repeat(20000) + 'rm', 'x;'.repeat(100000)]
      for (const line of lines) commandsToCheck(line)
      console.log('done')
    `)
    expect(run).toMatchObject({ isTimedOut: false, code: 0, stdout: 'done\n' })
  })

  it('stops reading nesting past its depth and says so', () => {
    const deep = `${'$('.repeat(40)}rm x${')'.repeat(40)}`
    expect(commandsToCheck(deep).isTooDeep).toBe(true)
    expect(
      decide({ default: 'deny', bash: [{ pattern: '*', action: 'allow' }] }, bash(deep)),
    ).toMatchObject({
      action: 'ask',
      reason: expect.stringContaining('nests substitutions too deeply'),
    })
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
