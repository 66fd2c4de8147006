/**
 * A small glob matcher (Node 20 has no `fs.glob`): `*`, `?`, `**` as a whole path segment,
 * `[...]` classes (`[!...]` negated), `{a,b}` alternatives and `\` escapes. Paths use `/`.
 * `*` also matches names starting with a dot: hidden files are not special here.
 */
import { compilePathGlob, type GlobMatcher } from '../glob-match.js'

export type { GlobMatcher } from '../glob-match.js'

const SPECIAL = /[*?[{\\]/

/**
 * Compiles a glob over `/`-separated relative paths into a matcher that runs in linear time
 * (see `src/tools/glob-match.ts`). A `**` segment matches any number of directories (including
 * none); a trailing one matches everything below.
 */
export function compileGlob(
  pattern: string,
  options: { readonly ignoreCase?: boolean } = {},
): GlobMatcher {
  return compilePathGlob(pattern, options)
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
