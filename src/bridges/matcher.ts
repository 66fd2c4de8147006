/**
 * Matchers as each dialect documents them. Claude Code: `*`, `""` or none match everything; a
 * value of only letters, digits, `_`, `-`, spaces, `,` and `|` is a list of exact names; anything
 * else is an unanchored JavaScript regular expression. Codex: `*`, `""` or none match everything;
 * anything else is a regular expression. Both compare case-sensitively.
 */
import { ConfigError, messageOf } from '../core/index.js'
import type { Dialect } from './hook-config.js'

const EXACT_LIST = /^[A-Za-z0-9_\- ,|]+$/

/** Compiles a matcher; `where` names the file and key for the `ConfigError` of an invalid regex. */
export function compileMatcher(
  dialect: Dialect,
  matcher: string | undefined,
  where: string,
): (value: string) => boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return () => true
  if (dialect === 'claude' && EXACT_LIST.test(matcher)) {
    const names = new Set(
      matcher
        .split(/[|,]/)
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    )
    return (value) => names.has(value)
  }
  let regex: RegExp
  try {
    regex = new RegExp(matcher)
  } catch (error) {
    throw new ConfigError(
      `${where}: ${JSON.stringify(matcher)} is not a valid regular expression (${messageOf(error)}). Fix the pattern, or use a tool name such as "Bash" or a list such as "Edit|Write".`,
    )
  }
  return (value) => regex.test(value)
}
