/**
 * Glob matching in time linear in the subject: patterns become a small nondeterministic
 * automaton (Thompson's construction) that is run over the subject with a set of live states,
 * so no pattern can make matching backtrack. A regular expression built from a glob (what this
 * replaced) takes minutes on `**` repeated or many `*` against a long path, and the patterns
 * come from the model and from a repository's `.gitignore` (docs/decisions/0040).
 *
 * Two dialects share the automaton:
 * - **path globs** (`compilePathGlob`): `*` and `?` stop at `/`, a whole `**` segment spans
 *   directories, `[...]` classes (`[!...]` negated, never matching `/`), `{a,b}` alternatives,
 *   `\` escapes. Used by `glob`, `grep`'s file filter, `.gitignore` rules, protected paths.
 * - **wildcards** (`compileWildcard`): `*` any text, `?` any one character, nothing else
 *   special. Used by the approval policy's bash patterns.
 */

/** A compiled pattern: `test` runs in O(subject length × pattern size), never worse. */
export type GlobMatcher = { test(subject: string): boolean }

type ClassItem = readonly [from: string, to: string]

type State =
  | { kind: 'char'; char: string; next: number }
  | { kind: 'any'; slash: boolean; next: number }
  | { kind: 'class'; items: readonly ClassItem[]; negated: boolean; next: number }
  | { kind: 'split'; out: number[] }
  | { kind: 'match' }

/** Builds states from the end of a pattern towards its start, so each piece knows its next. */
class Automaton {
  readonly states: State[] = [{ kind: 'match' }]
  add(state: State): number {
    this.states.push(state)
    return this.states.length - 1
  }
  /** `piece*`: a loop through `piece` and out to `next`. */
  loop(piece: (back: number) => number, next: number): number {
    const split = this.add({ kind: 'split', out: [] })
    const body = piece(split)
    ;(this.states[split] as { out: number[] }).out.push(next, body)
    return split
  }
}

const MATCH = 0

/** Runs the automaton over `subject`; `fold` lowercases both sides for case-insensitive use. */
function run(states: readonly State[], start: number, subject: string, fold: boolean): boolean {
  const text = fold ? subject.toLowerCase() : subject
  const seen = new Int32Array(states.length).fill(-1)
  let current: number[] = []
  const stack: number[] = []
  const addClosure = (into: number[], from: number, generation: number) => {
    stack.push(from)
    while (stack.length > 0) {
      const index = stack.pop()!
      if (seen[index] === generation) continue
      seen[index] = generation
      const state = states[index]!
      if (state.kind === 'split') for (const out of state.out) stack.push(out)
      else into.push(index)
    }
  }
  addClosure(current, start, 0)
  for (let position = 0; position < text.length; position++) {
    if (current.length === 0) return false
    const char = text[position]!
    const next: number[] = []
    for (const index of current) {
      const state = states[index]!
      if (state.kind !== 'split' && state.kind !== 'match' && accepts(state, char, fold))
        addClosure(next, state.next, position + 1)
    }
    current = next
  }
  return current.includes(MATCH)
}

function accepts(state: Exclude<State, { kind: 'split' | 'match' }>, char: string, fold: boolean) {
  switch (state.kind) {
    case 'char':
      return state.char === char
    case 'any':
      return state.slash || char !== '/'
    case 'class': {
      if (state.negated && char === '/') return false
      const upper = fold ? char.toUpperCase() : char
      const inClass = state.items.some(
        ([from, to]) => (char >= from && char <= to) || (upper >= from && upper <= to),
      )
      return inClass !== state.negated
    }
  }
}

function matcher(automaton: Automaton, start: number, fold: boolean): GlobMatcher {
  const states = automaton.states
  return { test: (subject) => run(states, start, subject, fold) }
}

/**
 * Compiles a path glob (see the module comment). A `**` segment matches any number of
 * directories, none included; a trailing one matches everything below. An unclosed `{` is
 * taken literally (models write `{` in file names).
 */
export function compilePathGlob(
  pattern: string,
  options: { readonly ignoreCase?: boolean } = {},
): GlobMatcher {
  const fold = options.ignoreCase === true
  const source = fold ? pattern.toLowerCase() : pattern
  const automaton = new Automaton()
  const parsed = parseSequence(source, 0, 0)
  if (parsed === undefined || parsed.end !== source.length) {
    // Unbalanced braces: the whole pattern is literal text.
    let next = MATCH
    for (let index = source.length - 1; index >= 0; index--)
      next = automaton.add({ kind: 'char', char: source[index]!, next })
    return matcher(automaton, next, fold)
  }
  return matcher(automaton, build(automaton, parsed.items, MATCH), fold)
}

/**
 * Compiles a wildcard pattern: `*` is any text (spaces and `/` included), `?` any one
 * character, everything else itself; the whole subject must match.
 */
export function compileWildcard(pattern: string): GlobMatcher {
  const automaton = new Automaton()
  let next = MATCH
  for (let index = pattern.length - 1; index >= 0; index--) {
    const char = pattern[index]!
    if (char === '*') {
      const after = next
      next = automaton.loop(
        (back) => automaton.add({ kind: 'any', slash: true, next: back }),
        after,
      )
    } else if (char === '?') next = automaton.add({ kind: 'any', slash: true, next })
    else next = automaton.add({ kind: 'char', char, next })
  }
  return matcher(automaton, next, false)
}

type Item =
  | { kind: 'char'; char: string }
  | { kind: 'one' }
  | { kind: 'star' }
  | { kind: 'globstar' }
  | { kind: 'globstar-end' }
  | { kind: 'class'; items: ClassItem[]; negated: boolean }
  | { kind: 'alternatives'; options: Item[][] }

/**
 * Parses from `index` until the end, or (inside braces, `depth > 0`) until an unnested `,` or
 * `}`. Undefined when a brace is left open.
 */
function parseSequence(
  pattern: string,
  index: number,
  depth: number,
): { items: Item[]; end: number } | undefined {
  const items: Item[] = []
  while (index < pattern.length) {
    const char = pattern[index]!
    if (depth > 0 && (char === ',' || char === '}')) return { items, end: index }
    if (char === '*') {
      const isDouble = pattern[index + 1] === '*'
      const startsSegment = index === 0 || pattern[index - 1] === '/'
      const after = index + (isDouble ? 2 : 1)
      const endsSegment = after === pattern.length || pattern[after] === '/'
      if (isDouble && startsSegment && endsSegment) {
        if (after === pattern.length) {
          items.push({ kind: 'globstar-end' })
          index = after
        } else {
          items.push({ kind: 'globstar' })
          index = after + 1
        }
      } else {
        items.push({ kind: 'star' })
        index = after
      }
      continue
    }
    if (char === '?') {
      items.push({ kind: 'one' })
      index++
      continue
    }
    if (char === '[') {
      const end = pattern.indexOf(']', index + 2)
      if (end !== -1) {
        items.push(parseClass(pattern.slice(index + 1, end)))
        index = end + 1
        continue
      }
    }
    if (char === '{') {
      const options: Item[][] = []
      let cursor = index + 1
      for (;;) {
        const option = parseSequence(pattern, cursor, depth + 1)
        if (option === undefined || option.end >= pattern.length) return undefined
        options.push(option.items)
        cursor = option.end + 1
        if (pattern[option.end] === '}') break
      }
      items.push({ kind: 'alternatives', options })
      index = cursor
      continue
    }
    if (char === '\\' && index + 1 < pattern.length) {
      items.push({ kind: 'char', char: pattern[index + 1]! })
      index += 2
      continue
    }
    items.push({ kind: 'char', char })
    index++
  }
  return { items, end: index }
}

function parseClass(body: string): Item {
  const negated = body.startsWith('!') || body.startsWith('^')
  const chars = negated ? body.slice(1) : body
  const items: ClassItem[] = []
  for (let index = 0; index < chars.length; index++) {
    const from = chars[index]!
    if (chars[index + 1] === '-' && index + 2 < chars.length) {
      items.push([from, chars[index + 2]!])
      index += 2
    } else items.push([from, from])
  }
  return { kind: 'class', items, negated }
}

function build(automaton: Automaton, items: readonly Item[], next: number): number {
  let at = next
  for (let index = items.length - 1; index >= 0; index--) {
    at = buildItem(automaton, items[index]!, at)
  }
  return at
}

function buildItem(automaton: Automaton, item: Item, next: number): number {
  switch (item.kind) {
    case 'char':
      return automaton.add({ kind: 'char', char: item.char, next })
    case 'one':
      return automaton.add({ kind: 'any', slash: false, next })
    case 'star':
      return automaton.loop(
        (back) => automaton.add({ kind: 'any', slash: false, next: back }),
        next,
      )
    case 'globstar-end':
      return automaton.loop((back) => automaton.add({ kind: 'any', slash: true, next: back }), next)
    case 'globstar':
      // (?:[^/]*/)* : whole directory names, each ending in "/".
      return automaton.loop((back) => {
        const slash = automaton.add({ kind: 'char', char: '/', next: back })
        return automaton.loop(
          (inner) => automaton.add({ kind: 'any', slash: false, next: inner }),
          slash,
        )
      }, next)
    case 'class':
      return automaton.add({ kind: 'class', items: item.items, negated: item.negated, next })
    case 'alternatives':
      return automaton.add({
        kind: 'split',
        out: item.options.map((option) => build(automaton, option, next)),
      })
  }
}
