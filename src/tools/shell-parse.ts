/**
 * Reads a bash command line into the simple commands it runs, for the approval policy and the
 * protected-path check (docs/decisions/0042). Not an interpreter: it finds every command that
 * would run, wherever it is written (after `;`, `&&`, `|`, in `( … )` and `{ … }`, inside
 * `$( … )`, backticks and `<( … )` even within double quotes, in `${ … }`, in arithmetic, in
 * unquoted here-documents), removes quoting from words (`'rm'`, `"rm"`, `\rm`, `$'\x72m'` all
 * read `rm`), keeps redirections, and marks what only the running shell can know (expansions,
 * globs). Linear in the length of the line.
 */
import { blankWord, dynamicWord, matchAt, type Word, WordReader } from './shell-words.js'

export type { Word } from './shell-words.js'

/** A redirection: `operator` as written with its file descriptor (`>`, `2>`, `>>`, `<<<`, `2>&`), and its target. */
export type Redirection = { readonly operator: string; readonly target: Word }

/** A command and its arguments, the assignments before it, and its redirections. */
export type SimpleCommand = {
  readonly words: readonly Word[]
  readonly assignments: readonly Word[]
  readonly redirections: readonly Redirection[]
}

/** Every simple command of a line, nested ones included, in the order they were read. */
export type ParsedLine = {
  readonly commands: readonly SimpleCommand[]
  /** Nesting went deeper than the parser follows; what is inside was not read. */
  readonly isTooDeep: boolean
}

/** How deep substitutions may nest before the parser stops reading into them. */
const MAX_DEPTH = 32

const RESERVED = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  '!',
  '{',
  '}',
  'coproc',
])

/** Parses a command line; never throws (unbalanced quotes run to the end of the line). */
export function parseCommandLine(source: string): ParsedLine {
  const state: ParseState = { commands: [], isTooDeep: false }
  new Parser(source, state, 0).parseList(undefined)
  return { commands: state.commands, isTooDeep: state.isTooDeep }
}

type ParseState = { commands: SimpleCommand[]; isTooDeep: boolean }

class CommandBuilder {
  readonly words: Word[] = []
  readonly assignments: Word[] = []
  readonly redirections: Redirection[] = []
  /** Words that are not a command: a `for`/`select`/`case` header, `[[ … ]]`, a function name. */
  isHeader = false

  get isEmpty(): boolean {
    return (
      this.words.length === 0 && this.assignments.length === 0 && this.redirections.length === 0
    )
  }
}

class Parser extends WordReader {
  private pendingHeredocs: { delimiter: string; isQuoted: boolean; stripTabs: boolean }[] = []

  constructor(
    source: string,
    private readonly state: ParseState,
    private depth: number,
  ) {
    super(source)
  }

  protected readCommandSubstitution(): void {
    this.nested(() => this.parseList(')'))
  }

  protected readCommandText(text: string): void {
    this.nested(() => new Parser(text, this.state, this.depth + 1).parseList(undefined))
  }

  /** Parses commands until `end` closes them (consumed) or the line ends. */
  parseList(end: ')' | undefined): void {
    const source = this.source
    let command = new CommandBuilder()
    let caseDepth = 0
    let isCasePatternNext = false
    let isDoubleBracket = false
    let isCaseHeader = false
    let isFunctionName = false
    const finish = () => {
      isCaseHeader = false
      isFunctionName = false
      if (!command.isHeader && !command.isEmpty) {
        this.state.commands.push({
          words: command.words,
          assignments: command.assignments,
          redirections: command.redirections,
        })
      }
      command = new CommandBuilder()
    }
    while (this.index < source.length) {
      const char = source[this.index]!
      const next = source[this.index + 1]
      if (char === ' ' || char === '\t' || char === '\r') {
        this.index++
        continue
      }
      if (char === '\\' && next === '\n') {
        this.index += 2
        continue
      }
      if (char === '#') {
        while (this.index < source.length && source[this.index] !== '\n') this.index++
        continue
      }
      if (char === '\n') {
        this.index++
        if (!isDoubleBracket) finish()
        this.readHeredocBodies()
        continue
      }
      if (isCasePatternNext && command.isEmpty) {
        isCasePatternNext = false
        if (this.peekWord() === 'esac') {
          this.index += 4
          caseDepth--
        } else this.skipCasePattern()
        continue
      }
      if (isDoubleBracket && '&|<>()'.includes(char)) {
        this.index++
        continue
      }
      if (char === ')') {
        this.index++
        finish()
        if (end === ')') return
        continue
      }
      if (char === '(') {
        if (next === '(') {
          // `(( … ))` arithmetic: nothing runs but the substitutions inside it.
          this.index += 2
          this.scanArithmetic()
          continue
        }
        this.index++
        if (
          command.words.length === 1 &&
          matchAt(/[ \t]*\)/y, this.source, this.index) !== undefined
        ) {
          // `name() { … }` defines a function: the name runs nothing; the body is read next.
          this.index = this.source.indexOf(')', this.index) + 1
          command.isHeader = true
          finish()
          continue
        }
        finish()
        this.nested(() => this.parseList(')'))
        continue
      }
      if (char === ';' || char === '&' || char === '|') {
        if (char === '&' && next === '>') {
          this.readRedirection(command, '')
          continue
        }
        const operator = /^(;;&|;;|;&|&&|\|\||\|&|[;&|])/.exec(
          source.slice(this.index, this.index + 3),
        )![0]
        this.index += operator.length
        if (caseDepth > 0 && (operator === ';;' || operator === ';&' || operator === ';;&'))
          isCasePatternNext = true
        finish()
        continue
      }
      if (char === '<' || char === '>') {
        this.readRedirection(command, '')
        continue
      }
      const word = this.readWord()
      const after = source[this.index]
      if (/^\d+$/.test(word.text) && !word.isQuoted && (after === '<' || after === '>')) {
        this.readRedirection(command, word.text)
        continue
      }
      if (isDoubleBracket) {
        if (word.text === ']]' && !word.isQuoted) isDoubleBracket = false
        continue
      }
      if (isFunctionName) {
        // `function name { … }`: the name runs nothing; the body's commands follow.
        isFunctionName = false
        continue
      }
      if (command.isHeader) {
        if (isCaseHeader && word.text === 'in' && !word.isQuoted) {
          finish()
          isCasePatternNext = true
        }
        continue
      }
      const assignment = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.exec(word.text)
      if (
        command.words.length === 0 &&
        assignment !== null &&
        assignment[0].length <= word.plainPrefix
      ) {
        command.assignments.push(word)
        continue
      }
      if (command.words.length === 0 && !word.isQuoted) {
        if (word.text === 'esac') {
          caseDepth = Math.max(0, caseDepth - 1)
          continue
        }
        if (RESERVED.has(word.text)) continue
        if (word.text === 'case') {
          caseDepth++
          command.isHeader = true
          isCaseHeader = true
          continue
        }
        if (word.text === 'function') {
          isFunctionName = true
          continue
        }
        if (word.text === 'for' || word.text === 'select') {
          command.isHeader = true
          continue
        }
        if (word.text === '[[') {
          isDoubleBracket = true
          continue
        }
      }
      command.words.push(word)
    }
    finish()
  }

  /** Runs `read` one level deeper, unless that is too deep (then the rest is skipped). */
  private nested(read: () => void): void {
    if (this.depth >= MAX_DEPTH) {
      this.state.isTooDeep = true
      this.index = this.source.length
      return
    }
    this.depth++
    try {
      read()
    } finally {
      this.depth--
    }
  }

  private peekWord(): string {
    return matchAt(/[^\s;&|()<>]*/y, this.source, this.index) ?? ''
  }

  /** A `case` pattern up to its `)`, quotes respected; the commands after it are read normally. */
  private skipCasePattern(): void {
    while (this.index < this.source.length) {
      const char = this.source[this.index]!
      if (char === ')') {
        this.index++
        return
      }
      if (char === "'" || char === '"' || char === '\\' || char === '$' || char === '`') {
        this.readWord()
        continue
      }
      this.index++
    }
  }

  private readRedirection(command: CommandBuilder, fd: string): void {
    const source = this.source
    const operator = /^(&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)/.exec(
      source.slice(this.index, this.index + 3),
    )![0]
    this.index += operator.length
    if ((operator === '<' || operator === '>') && source[this.index] === '(' && fd === '') {
      // `<( … )` / `>( … )`: process substitution, a word whose command runs.
      const start = this.index - 1
      this.index++
      this.nested(() => this.parseList(')'))
      command.words.push(dynamicWord(source.slice(start, this.index)))
      return
    }
    while (source[this.index] === ' ' || source[this.index] === '\t') this.index++
    const target = this.readWord()
    if (operator === '<<' || operator === '<<-') {
      this.pendingHeredocs.push({
        delimiter: target.text,
        isQuoted: target.isQuoted,
        stripTabs: operator === '<<-',
      })
    }
    command.redirections.push({ operator: fd + operator, target })
  }

  /** After a newline: the bodies of pending here-documents; unquoted ones expand `$( … )`. */
  private readHeredocBodies(): void {
    const bodies = this.pendingHeredocs
    this.pendingHeredocs = []
    for (const heredoc of bodies) {
      const lines: string[] = []
      while (this.index < this.source.length) {
        let end = this.source.indexOf('\n', this.index)
        if (end === -1) end = this.source.length
        const line = this.source.slice(this.index, end)
        this.index = Math.min(end + 1, this.source.length)
        if ((heredoc.stripTabs ? line.replace(/^\t+/, '') : line) === heredoc.delimiter) break
        lines.push(line)
      }
      if (!heredoc.isQuoted)
        this.nested(() => scanExpansions(lines.join('\n'), this.state, this.depth + 1))
    }
  }
}

/** The substitutions in text that is expanded like a double-quoted string (a here-document). */
function scanExpansions(text: string, state: ParseState, depth: number): void {
  new Parser(text, state, depth).readDoubleQuoted(blankWord(), false)
}
