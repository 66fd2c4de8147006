/**
 * From a parsed command line to the commands the approval policy judges (docs/decisions/0042).
 * A command run through a wrapper is judged as itself: `command rm`, `env X=1 rm`, `nice -n 5
 * rm`, `timeout 5 rm`, `sudo rm`, `xargs rm`, `find … -exec rm {} ;`, `bash -c 'rm …'`,
 * `eval 'rm …'` all yield `rm …`. Spellings that may or may not be the same program
 * (`/bin/rm` for `rm`, the wrapper line itself) are kept as views, which deny and ask rules
 * see but which never make a command allowed.
 */
import { basename } from 'node:path'
import { parseCommandLine, type Redirection, type SimpleCommand, type Word } from './shell-parse.js'

/** One command to judge. */
export type CheckedCommand = {
  /** Words and redirections, quoting removed, separated by single spaces. */
  readonly text: string
  /** Only deny and ask rules count for a view; it never falls back to the default action. */
  readonly isView: boolean
  /** The program is computed when the line runs (`$CMD x`, `$(which rm) x`, `r{m,}`). */
  readonly isOpaque: boolean
  readonly words: readonly Word[]
  readonly redirections: readonly Redirection[]
}

/** Every command a line runs, nested and unwrapped, and whether some nesting was too deep to read. */
export type CommandsToCheck = {
  readonly commands: readonly CheckedCommand[]
  readonly isTooDeep: boolean
}

const MAX_UNWRAP = 8

/** The commands of `line` for the policy, in the order they were found. */
export function commandsToCheck(line: string): CommandsToCheck {
  const out: CheckedCommand[] = []
  const flags = { isTooDeep: false }
  expandLine(line, 0, out, flags, false)
  return { commands: out, isTooDeep: flags.isTooDeep }
}

/** How a command is shown: words, then redirections (`2>&1`, `> out`). */
export function renderCommand(
  words: readonly Word[],
  redirections: readonly Redirection[] = [],
): string {
  const parts = words.map((word) => word.text)
  for (const { operator, target } of redirections)
    parts.push(operator.endsWith('&') ? `${operator}${target.text}` : `${operator} ${target.text}`)
  return parts.join(' ').replace(/\s+/g, ' ').trim()
}

function expandLine(
  line: string,
  depth: number,
  out: CheckedCommand[],
  flags: { isTooDeep: boolean },
  isView: boolean,
) {
  const parsed = parseCommandLine(line)
  if (parsed.isTooDeep) flags.isTooDeep = true
  for (const command of parsed.commands) expand(command, depth, out, flags, isView)
}

function expand(
  command: Pick<SimpleCommand, 'words' | 'redirections'>,
  depth: number,
  out: CheckedCommand[],
  flags: { isTooDeep: boolean },
  isView: boolean,
): void {
  const { words, redirections } = command
  const add = (commandWords: readonly Word[], asView: boolean) =>
    out.push({
      text: renderCommand(commandWords, redirections),
      isView: asView,
      isOpaque: commandWords[0] !== undefined && isComputed(commandWords[0]),
      words: commandWords,
      redirections,
    })
  const first = words[0]
  const isKnown = first !== undefined && !isComputed(first)
  let unwrapped: Unwrapped = isKnown ? unwrap(words) : { kind: 'plain' }
  if (unwrapped.kind !== 'plain' && depth >= MAX_UNWRAP) {
    flags.isTooDeep = true
    unwrapped = { kind: 'plain' }
  }
  // A wrapper is judged by what it runs; its own line stays a view, unless it guards (sudo,
  // xargs, find -exec), when it needs a rule of its own as well.
  const isWrapperLine =
    unwrapped.kind === 'script' || (unwrapped.kind === 'wrapper' && !unwrapped.isGuard)
  add(words, isView || isWrapperLine)
  if (isKnown && first.text.includes('/') && basename(first.text) !== '')
    add([{ ...first, text: basename(first.text) }, ...words.slice(1)], true)
  switch (unwrapped.kind) {
    case 'plain':
      return
    case 'wrapper':
      for (const inner of unwrapped.inner) {
        expand({ words: inner, redirections }, depth + 1, out, flags, isView)
        if (unwrapped.takesMoreArguments) add([...inner, literal('…')], true)
      }
      return
    case 'script':
      if (unwrapped.script.isDynamic) {
        out.push({
          text: unwrapped.script.text,
          isView,
          isOpaque: true,
          words: [unwrapped.script],
          redirections: [],
        })
      }
      expandLine(unwrapped.script.text, depth + 1, out, flags, isView)
      return
  }
}

function isComputed(word: Word): boolean {
  return word.isDynamic || word.isPattern
}

function literal(text: string): Word {
  return {
    text,
    isDynamic: false,
    isPattern: false,
    hasTilde: false,
    isQuoted: false,
    plainPrefix: text.length,
  }
}

type Unwrapped =
  | { readonly kind: 'plain' }
  /** Runs `inner` (each a command): `isGuard` wrappers are judged themselves too. */
  | {
      readonly kind: 'wrapper'
      readonly inner: readonly (readonly Word[])[]
      readonly isGuard: boolean
      /** The inner command gets more arguments when it runs (xargs). */
      readonly takesMoreArguments: boolean
    }
  /** Runs a command line given as a string (`bash -c`, `eval`, `watch`). */
  | { readonly kind: 'script'; readonly script: Word }

type OptionSpec = {
  /** Short options that take a value (`u` for `-u root`). */
  readonly short?: string
  /** Long options that take a value (`user` for `--user root`; `--user=root` always works). */
  readonly long?: readonly string[]
}

/** The index of the first word after `start` that is not an option (or its value). */
function skipOptions(words: readonly Word[], start: number, spec: OptionSpec): number {
  let index = start
  while (index < words.length) {
    const text = words[index]!.text
    if (text === '--') return index + 1
    if (text.startsWith('--')) {
      const name = text.slice(2).split('=', 1)[0]!
      index += !text.includes('=') && spec.long?.includes(name) ? 2 : 1
      continue
    }
    if (!text.startsWith('-') || text === '-') return index
    if (/^-\d+$/.test(text)) {
      index++
      continue
    }
    // A cluster (`-lc`, `-n10`): a letter that takes a value takes the rest, or the next word.
    const letters = text.slice(1)
    const valued = [...letters].findIndex((letter) => spec.short?.includes(letter))
    index += valued === letters.length - 1 ? 2 : 1
  }
  return index
}

/** Skips `NAME=value` words (env, sudo). */
function skipAssignments(words: readonly Word[], start: number): number {
  let index = start
  while (index < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index]!.text)) index++
  return index
}

function shortFlags(words: readonly Word[], end: number): string {
  return words
    .slice(1, end)
    .filter((word) => /^-[^-]/.test(word.text))
    .map((word) => word.text.slice(1))
    .join('')
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'busybox-sh'])

function wrapper(inner: readonly Word[], isGuard = false, takesMoreArguments = false): Unwrapped {
  return inner.length === 0
    ? { kind: 'plain' }
    : { kind: 'wrapper', inner: [inner], isGuard, takesMoreArguments }
}

function unwrap(words: readonly Word[]): Unwrapped {
  const name = basename(words[0]!.text)
  const rest = (spec: OptionSpec = {}) => words.slice(skipOptions(words, 1, spec))
  switch (name) {
    case 'builtin':
    case 'nohup':
    case 'busybox':
    case 'toybox':
      return wrapper(rest())
    case 'command': {
      const end = skipOptions(words, 1, {})
      return /[vV]/.test(shortFlags(words, end)) ? { kind: 'plain' } : wrapper(words.slice(end))
    }
    case 'exec':
      return wrapper(rest({ short: 'a' }))
    case 'nice':
      return wrapper(rest({ short: 'n', long: ['adjustment'] }))
    case 'time':
      return wrapper(rest({ short: 'fo', long: ['format', 'output'] }))
    case 'timeout': {
      const index = skipOptions(words, 1, { short: 'sk', long: ['signal', 'kill-after'] })
      return wrapper(words.slice(index + 1))
    }
    case 'stdbuf':
      return wrapper(rest({ short: 'ioe', long: ['input', 'output', 'error'] }))
    case 'setsid':
      return wrapper(rest())
    case 'ionice': {
      const end = skipOptions(words, 1, { short: 'cn', long: ['class', 'classdata'] })
      return shortFlags(words, end).includes('p') ? { kind: 'plain' } : wrapper(words.slice(end))
    }
    case 'env': {
      const end = skipOptions(words, 1, { short: 'uCS', long: ['unset', 'chdir', 'split-string'] })
      // `env -S 'rm -rf x'` splits its argument into a command line.
      const at = words.findIndex(
        (word, index) => index < end && /^(-S|--split-string)/.test(word.text),
      )
      if (at !== -1) {
        const attached = words[at]!.text.replace(/^(-S|--split-string=?)/, '')
        const value = attached === '' ? words[at + 1] : { ...words[at]!, text: attached }
        return scriptOf([...(value === undefined ? [] : [value]), ...words.slice(end)])
      }
      return wrapper(words.slice(skipAssignments(words, end)))
    }
    case 'sudo':
    case 'doas': {
      const end = skipOptions(words, 1, {
        short: name === 'sudo' ? 'ughpCDrtUT' : 'uC',
        long: [
          'user',
          'group',
          'host',
          'prompt',
          'close-from',
          'chdir',
          'role',
          'type',
          'other-user',
          'command-timeout',
        ],
      })
      if (name === 'sudo' && /[eKklvV]/.test(shortFlags(words, end))) return { kind: 'plain' }
      return wrapper(words.slice(skipAssignments(words, end)), true)
    }
    case 'xargs': {
      const inner = rest({
        short: 'adEILnPs',
        long: [
          'arg-file',
          'delimiter',
          'eof',
          'replace',
          'max-lines',
          'max-args',
          'max-procs',
          'max-chars',
          'process-slot-var',
        ],
      })
      return wrapper(inner.length === 0 ? [literal('echo')] : inner, true, true)
    }
    case 'find': {
      const inner: Word[][] = []
      for (let index = 1; index < words.length; index++) {
        if (!/^-(exec|execdir|ok|okdir)$/.test(words[index]!.text)) continue
        const end = words.findIndex(
          (word, at) => at > index && (word.text === ';' || word.text === '+'),
        )
        inner.push(words.slice(index + 1, end === -1 ? words.length : end))
        index = end === -1 ? words.length : end
      }
      return inner.length === 0
        ? { kind: 'plain' }
        : { kind: 'wrapper', inner, isGuard: true, takesMoreArguments: false }
    }
    case 'watch': {
      const end = skipOptions(words, 1, { short: 'nq', long: ['interval', 'equexit'] })
      if (shortFlags(words, end).includes('x')) return wrapper(words.slice(end), true)
      return scriptOf(words.slice(end))
    }
    case 'eval':
      return scriptOf(words.slice(1))
    default:
      return SHELLS.has(name) ? unwrapShell(words) : { kind: 'plain' }
  }
}

/** `bash -c '<line>'` (also `-lc`, `-ec`, `-o pipefail -c`): the line is the first operand. */
function unwrapShell(words: readonly Word[]): Unwrapped {
  let hasCommandOption = false
  let index = 1
  while (index < words.length) {
    const text = words[index]!.text
    if (text === '--') {
      index++
      break
    }
    if (/^[-+]o$/.test(text) || text === '--rcfile' || text === '--init-file') {
      index += 2
      continue
    }
    if (!/^[-+]/.test(text)) break
    if (/^-[A-Za-z]*c/.test(text)) hasCommandOption = true
    index++
  }
  const script = words[index]
  if (!hasCommandOption || script === undefined) return { kind: 'plain' }
  return { kind: 'script', script }
}

function scriptOf(words: readonly Word[]): Unwrapped {
  if (words.length === 0) return { kind: 'plain' }
  return {
    kind: 'script',
    script: {
      text: words.map((word) => word.text).join(' '),
      isDynamic: words.some((word) => word.isDynamic),
      isPattern: false,
      hasTilde: false,
      isQuoted: false,
      plainPrefix: 0,
    },
  }
}
