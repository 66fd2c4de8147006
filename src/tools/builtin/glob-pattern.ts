/**
 * A small glob matcher (Node 20 has no `fs.glob`): `*`, `?`, `**` as a whole path segment,
 * `[...]` classes (`[!...]` negated), `{a,b}` alternatives and `\` escapes. Paths use `/`.
 * `*` also matches names starting with a dot: hidden files are not special here.
 */

const SPECIAL = /[*?[{\\]/

/**
 * Compiles a glob to an anchored RegExp over `/`-separated relative paths. A `**` segment
 * matches any number of directories (including none); a trailing one matches everything below.
 */
export function compileGlob(pattern: string, options: { ignoreCase?: boolean } = {}): RegExp {
  let source = ''
  let braceDepth = 0
  let index = 0
  while (index < pattern.length) {
    const char = pattern[index]!
    if (char === '*') {
      const isDouble = pattern[index + 1] === '*'
      const startsSegment = index === 0 || pattern[index - 1] === '/'
      const after = index + (isDouble ? 2 : 1)
      const endsSegment = after === pattern.length || pattern[after] === '/'
      if (isDouble && startsSegment && endsSegment) {
        if (after === pattern.length) {
          source += '.*'
          index = after
        } else {
          source += '(?:[^/]*/)*'
          index = after + 1
        }
        continue
      }
      source += '[^/]*'
      index = after
      continue
    }
    if (char === '?') source += '[^/]'
    else if (char === '[') {
      const end = pattern.indexOf(']', index + 2)
      if (end === -1) source += '\\['
      else {
        let body = pattern.slice(index + 1, end)
        const isNegated = body.startsWith('!') || body.startsWith('^')
        if (isNegated) body = body.slice(1)
        source += `[${isNegated ? '^/' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`
        index = end + 1
        continue
      }
    } else if (char === '{') {
      braceDepth++
      source += '(?:'
    } else if (char === '}' && braceDepth > 0) {
      braceDepth--
      source += ')'
    } else if (char === ',' && braceDepth > 0) source += '|'
    else if (char === '\\' && index + 1 < pattern.length) {
      index++
      source += escapeRegExp(pattern[index]!)
    } else source += escapeRegExp(char)
    index++
  }
  // An unclosed brace is taken literally rather than rejected: models write `{` in file names.
  if (braceDepth > 0) return new RegExp(`^${escapeRegExp(pattern)}$`, options.ignoreCase ? 'i' : '')
  return new RegExp(`^${source}$`, options.ignoreCase ? 'i' : '')
}

/** The leading segments of a glob that hold no special characters (where a walk can start). */
export function staticPrefix(pattern: string): string {
  const segments = pattern.split('/')
  const fixed: string[] = []
  // The last segment names the files themselves, so it never counts as a directory prefix.
  for (const segment of segments.slice(0, -1)) {
    if (SPECIAL.test(segment) || segment === '') break
    fixed.push(segment)
  }
  return fixed.join('/')
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
