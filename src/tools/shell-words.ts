/**
 * Reading one shell word: quotes removed (`'rm'`, `"rm"`, `\\rm` and `$'\\x72m'` all read
 * `rm`), expansions marked as computed and kept as written, substitutions handed to the parser
 * (docs/decisions/0042). Part of `shell-parse.ts`, split out for size.
 */

/** One word of a command, quoting removed. */
export type Word = {
  /** The word as the command sees it when nothing in it is computed; expansions kept as written (`$HOME`, `$(date)`). */
  readonly text: string
  /** Part of it is computed when the line runs: a parameter, command or arithmetic expansion. */
  readonly isDynamic: boolean
  /** Unquoted glob (`*`, `?`, `[`) or brace characters: the shell may turn it into other words. */
  readonly isPattern: boolean
  /** It starts with an unquoted `~` that the shell expands to a home directory. */
  readonly hasTilde: boolean
  /** Some of it was quoted or escaped (so it is never a reserved word). */
  readonly isQuoted: boolean
  /** How many characters of `text` came before any quoting (`FOO="a b"` has 4: `FOO=`). */
  readonly plainPrefix: number
}

/** A word being read. */
export type MutableWord = {
  text: string
  isDynamic: boolean
  isPattern: boolean
  hasTilde: boolean
  isQuoted: boolean
  plainPrefix: number
}

/** Reads words; the parser says what a command substitution inside one means. */
export abstract class WordReader {
  index = 0

  constructor(protected readonly source: string) {}

  /** At `index` just after `$(`: reads the commands up to the matching `)`, consuming it. */
  protected abstract readCommandSubstitution(): void
  /** The text of a backtick substitution, unescaped: a command line of its own. */
  protected abstract readCommandText(text: string): void

  /** Reads one word at `index`, up to unquoted whitespace or an operator character. */
  readWord(): Word {
    const word: MutableWord = {
      text: '',
      isDynamic: false,
      isPattern: false,
      hasTilde: false,
      isQuoted: false,
      plainPrefix: Number.POSITIVE_INFINITY,
    }
    const source = this.source
    const start = this.index
    if (source[this.index] === '~') {
      const rest = matchAt(/~[A-Za-z0-9._-]*/y, source, this.index) ?? '~'
      const after = source[this.index + rest.length]
      if (after === undefined || after === '/' || /[\s;&|()<>]/.test(after)) word.hasTilde = true
    }
    while (this.index < source.length) {
      const char = source[this.index]!
      if (/[\s;&|()<>]/.test(char)) break
      if (char === "'") {
        markQuoted(word)
        const end = source.indexOf("'", this.index + 1)
        const stop = end === -1 ? source.length : end
        word.text += source.slice(this.index + 1, stop)
        this.index = stop + 1
        continue
      }
      if (char === '"') {
        markQuoted(word)
        this.index++
        this.readDoubleQuoted(word, true)
        continue
      }
      if (char === '\\') {
        markQuoted(word)
        const escaped = source[this.index + 1]
        if (escaped !== undefined && escaped !== '\n') word.text += escaped
        this.index += 2
        continue
      }
      if (char === '$') {
        this.readDollar(word)
        continue
      }
      if (char === '`') {
        this.readBacktick(word)
        continue
      }
      if (char === '*' || char === '?' || char === '[') word.isPattern = true
      // Brace expansion (`{a,b}`, `{1..3}`); looked for within a bounded stretch only.
      if (char === '{' && matchAt(/\{[^\s{}]{0,256}(,|\.\.)[^\s{}]{0,256}\}/y, source, this.index))
        word.isPattern = true
      word.text += char
      this.index++
    }
    if (this.index === start) this.index++ // never loop on an unexpected character
    return word
  }

  /** Inside `"…"` (or a here-document body when `closes` is false): `$`, backticks, `\` escapes. */
  readDoubleQuoted(word: MutableWord, closes: boolean): void {
    const source = this.source
    while (this.index < source.length) {
      const char = source[this.index]!
      if (closes && char === '"') {
        this.index++
        return
      }
      if (char === '\\') {
        const escaped = source[this.index + 1]
        if (escaped === '\n') this.index += 2
        else if (escaped !== undefined && '$`"\\'.includes(escaped)) {
          word.text += escaped
          this.index += 2
        } else {
          word.text += char
          this.index++
        }
        continue
      }
      if (char === '$') {
        this.readDollar(word, true)
        continue
      }
      if (char === '`') {
        this.readBacktick(word)
        continue
      }
      word.text += char
      this.index++
    }
  }

  protected readDollar(word: MutableWord, isInDoubleQuotes = false): void {
    const source = this.source
    const start = this.index
    const next = source[this.index + 1]
    if (next === '(' && source[this.index + 2] === '(') {
      this.index += 3
      this.scanArithmetic()
    } else if (next === '(') {
      this.index += 2
      this.readCommandSubstitution()
    } else if (next === '{') {
      this.index += 2
      this.scanBraces()
    } else if (next === '[') {
      // `$[ … ]`, the old arithmetic syntax.
      this.index += 2
      while (this.index < source.length && source[this.index] !== ']') this.index++
      this.index++
    } else if (next === "'" && !isInDoubleQuotes) {
      markQuoted(word)
      this.index += 2
      const decoded = decodeAnsiC(source, this.index)
      word.text += decoded.text
      this.index = decoded.end
      return
    } else if (next === '"' && !isInDoubleQuotes) {
      markQuoted(word)
      this.index += 2
      this.readDoubleQuoted(word, true)
      return
    } else if (next !== undefined && /[A-Za-z_]/.test(next)) {
      this.index += 1 + (matchAt(/[A-Za-z0-9_]*/y, source, this.index + 1) ?? '').length
    } else if (next !== undefined && /[0-9@*#?$!-]/.test(next)) {
      this.index += 2
    } else {
      word.text += '$'
      this.index++
      return
    }
    word.isDynamic = true
    word.text += source.slice(start, Math.min(this.index, source.length))
  }

  /** After `$((` or `((`: up to the matching `))`, reading substitutions inside. */
  protected scanArithmetic(): void {
    let depth = 2
    const scratch = blankWord()
    while (this.index < this.source.length && depth > 0) {
      const char = this.source[this.index]!
      if (char === '(') depth++
      else if (char === ')') depth--
      if (char === '$' || char === '`' || char === '"' || char === "'") {
        if (char === '$') this.readDollar(scratch)
        else if (char === '`') this.readBacktick(scratch)
        else this.readWord()
        continue
      }
      this.index++
    }
  }

  /** After `${`: up to the matching `}`, reading substitutions and quotes inside. */
  private scanBraces(): void {
    let depth = 1
    const scratch = blankWord()
    while (this.index < this.source.length && depth > 0) {
      const char = this.source[this.index]!
      if (char === '$' || char === '`') {
        if (char === '$' && this.source[this.index + 1] === '{') depth++
        if (char === '$') this.readDollar(scratch, true)
        else this.readBacktick(scratch)
        if (depth > 1 && this.source[this.index - 1] === '}') depth--
        continue
      }
      if (char === "'") {
        const end = this.source.indexOf("'", this.index + 1)
        this.index = end === -1 ? this.source.length : end + 1
        continue
      }
      if (char === '"') {
        this.index++
        this.readDoubleQuoted(scratch, true)
        continue
      }
      if (char === '\\') {
        this.index += 2
        continue
      }
      if (char === '}') depth--
      this.index++
    }
  }

  /** A backtick substitution: its text, unescaped, is a command line of its own. */
  protected readBacktick(word: MutableWord): void {
    const source = this.source
    const start = this.index
    this.index++
    let inner = ''
    while (this.index < source.length && source[this.index] !== '`') {
      const char = source[this.index]!
      const escaped = source[this.index + 1]
      if (char === '\\' && escaped !== undefined && '\\`$'.includes(escaped)) {
        inner += escaped
        this.index += 2
        continue
      }
      inner += char
      this.index++
    }
    this.index++
    this.readCommandText(inner)
    word.isDynamic = true
    word.text += source.slice(start, Math.min(this.index, source.length))
  }
}

/** The text `sticky` (a regex with the `y` flag) matches at `index`, without copying the rest. */
export function matchAt(sticky: RegExp, source: string, index: number): string | undefined {
  sticky.lastIndex = index
  return sticky.exec(source)?.[0]
}

function markQuoted(word: MutableWord): void {
  if (!word.isQuoted) word.plainPrefix = word.text.length
  word.isQuoted = true
}

export function blankWord(): MutableWord {
  return {
    text: '',
    isDynamic: false,
    isPattern: false,
    hasTilde: false,
    isQuoted: false,
    plainPrefix: 0,
  }
}

export function dynamicWord(text: string): Word {
  return {
    text,
    isDynamic: true,
    isPattern: false,
    hasTilde: false,
    isQuoted: false,
    plainPrefix: 0,
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
}

const ANSI_ESCAPE =
  /\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c(.)|(.))/y

/**
 * `$'…'` from `start` (after the opening quote) to its closing quote: the escapes bash decodes
 * (`\\x72` is `r`), so they cannot hide a command name. Returns the text and the index after
 * the closing quote.
 */
export function decodeAnsiC(source: string, start: number): { text: string; end: number } {
  let text = ''
  let index = start
  while (index < source.length && source[index] !== "'") {
    if (source[index] !== '\\') {
      text += source[index]
      index++
      continue
    }
    ANSI_ESCAPE.lastIndex = index
    const match = ANSI_ESCAPE.exec(source)
    if (match === null) {
      text += '\\'
      index++
      continue
    }
    index += match[0].length
    const [, octal, hex, short, long, control, other] = match
    if (octal !== undefined) text += String.fromCharCode(Number.parseInt(octal, 8))
    else if (hex !== undefined) text += String.fromCharCode(Number.parseInt(hex, 16))
    else if (short !== undefined || long !== undefined) {
      const point = Number.parseInt((short ?? long)!, 16)
      text += point <= 0x10ffff ? String.fromCodePoint(point) : ''
    } else if (control !== undefined) text += String.fromCharCode(control.charCodeAt(0) & 0x1f)
    else if (other !== undefined) text += SIMPLE_ESCAPES[other] ?? `\\${other}`
  }
  return { text, end: index + 1 }
}
