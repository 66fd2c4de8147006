/**
 * Files that configure rudder and the tools around it: a change to one can grant the model
 * permissions on the next run (rudder's config), run code later (git hooks, Claude Code and
 * Codex hooks, MCP servers), or both. Writes to them always ask, whatever the policy
 * (docs/spec.md §9.5, docs/decisions/0043). This module says which paths those are and
 * which of a call's targets hit one; the approval layer and the tools act on it.
 */
import { realpathSync } from 'node:fs'
import { basename, dirname, resolve, sep } from 'node:path'
import { compilePathGlob } from './glob-match.js'
import { commandsToCheck } from './shell-commands.js'
import type { Word } from './shell-parse.js'

/** Where to look: the workspace, and the user's home and rudder directory when known. */
export type ProtectedPathsOptions = {
  readonly workspace: string
  readonly home?: string
  /** rudder's user directory (`$RUDDER_HOME`, else `~/.rudder`). */
  readonly rudderHome?: string
}

/** A protected file a call would touch: as the call named it, and what it is. */
export type ProtectedTarget = { readonly path: string; readonly what: string }

/**
 * `tree`: the path and everything below it; `exact`: the path only; `names`: files in the
 * directory whose name matches the glob (`settings*.json`), with typical names for matching
 * against a shell glob.
 */
type Entry =
  | { readonly kind: 'tree' | 'exact'; readonly path: string; readonly what: string }
  | {
      readonly kind: 'names'
      readonly directory: string
      readonly glob: string
      readonly typical: readonly string[]
      readonly what: string
    }

/** The protected places, resolved once. */
export type ProtectedPaths = {
  /** What an absolute path is when it is protected (or below a protected tree); else undefined. */
  match(path: string): ProtectedTarget | undefined
  /** The same for an absolute shell glob that could expand to a protected path. */
  matchGlob(pattern: string): ProtectedTarget | undefined
  /**
   * The protected files a tool call would change, as the call named them: the `path` of
   * `write` and `edit`; for `bash`, every word or redirection naming one, and `git config`
   * changes. Lexical: the tools refuse the ways around it (a symlink to a protected file).
   */
  targetsOf(call: { readonly name: string; readonly args: unknown }): ProtectedTarget[]
}

const CLAUDE_SETTINGS = {
  glob: 'settings*.json',
  typical: ['settings.json', 'settings.local.json'],
}

/** Builds the protected places of a workspace (lexical and real path) and, if given, a home. */
export function protectedPaths(options: ProtectedPathsOptions): ProtectedPaths {
  const entries: Entry[] = []
  for (const root of roots(options.workspace)) {
    entries.push(
      { kind: 'tree', path: resolve(root, '.rudder'), what: "rudder's project configuration" },
      { kind: 'exact', path: resolve(root, '.git'), what: 'the git repository' },
      { kind: 'tree', path: resolve(root, '.git', 'hooks'), what: 'git hooks' },
      { kind: 'exact', path: resolve(root, '.git', 'config'), what: "git's configuration" },
      { kind: 'exact', path: resolve(root, '.claude'), what: "Claude Code's project settings" },
      {
        kind: 'names',
        directory: resolve(root, '.claude'),
        ...CLAUDE_SETTINGS,
        what: "Claude Code's settings (hooks)",
      },
      { kind: 'exact', path: resolve(root, '.mcp.json'), what: 'MCP server configuration' },
      { kind: 'tree', path: resolve(root, '.codex'), what: "Codex's configuration and hooks" },
    )
  }
  if (options.rudderHome !== undefined)
    for (const root of roots(options.rudderHome))
      entries.push({ kind: 'tree', path: root, what: "rudder's user configuration" })
  if (options.home !== undefined) {
    for (const home of roots(options.home)) {
      entries.push(
        { kind: 'tree', path: resolve(home, '.rudder'), what: "rudder's user configuration" },
        { kind: 'exact', path: resolve(home, '.claude'), what: "Claude Code's user settings" },
        {
          kind: 'names',
          directory: resolve(home, '.claude'),
          ...CLAUDE_SETTINGS,
          what: "Claude Code's user settings (hooks)",
        },
        {
          kind: 'exact',
          path: resolve(home, '.claude.json'),
          what: "Claude Code's user configuration",
        },
        {
          kind: 'tree',
          path: resolve(home, '.codex'),
          what: "Codex's user configuration and hooks",
        },
        { kind: 'exact', path: resolve(home, '.gitconfig'), what: "git's user configuration" },
        {
          kind: 'exact',
          path: resolve(home, '.config', 'git', 'config'),
          what: "git's user configuration",
        },
      )
    }
  }
  const paths: ProtectedPaths = {
    targetsOf: (call) => targetsOf(call, paths, options),
    match(path) {
      const entry = entries.find((each) => entryHolds(each, path))
      return entry === undefined ? undefined : { path, what: entry.what }
    },
    matchGlob(pattern) {
      const segments = splitPath(pattern)
      const entry = entries.find((each) => globReaches(segments, each))
      return entry === undefined ? undefined : { path: pattern, what: entry.what }
    },
  }
  return paths
}

function targetsOf(
  call: { readonly name: string; readonly args: unknown },
  paths: ProtectedPaths,
  options: ProtectedPathsOptions,
): ProtectedTarget[] {
  const args = (typeof call.args === 'object' && call.args !== null ? call.args : {}) as Record<
    string,
    unknown
  >
  if ((call.name === 'write' || call.name === 'edit') && typeof args.path === 'string') {
    const hit = paths.match(resolve(options.workspace, args.path))
    return hit === undefined ? [] : [{ path: args.path, what: hit.what }]
  }
  if (call.name === 'bash' && typeof args.command === 'string')
    return bashTargets(args.command, paths, options)
  return []
}

/**
 * Every word and redirection target of every command the line runs that names a protected
 * path (`~` and `$HOME` expanded; a glob counts when it could match one), and `git config`
 * commands that change a setting. Naming counts, not only writing: `cp x .git/hooks/` and
 * `sed -i … .rudder/config.json` write without a redirection.
 */
function bashTargets(
  command: string,
  paths: ProtectedPaths,
  options: ProtectedPathsOptions,
): ProtectedTarget[] {
  const found = new Map<string, ProtectedTarget>()
  for (const checked of commandsToCheck(command).commands) {
    const words = [...checked.words, ...checked.redirections.map((each) => each.target)]
    for (const word of words) {
      for (const candidate of candidatesOf(word, options)) {
        const hit = candidate.isPattern
          ? paths.matchGlob(candidate.path)
          : paths.match(candidate.path)
        if (hit !== undefined) found.set(word.text, { path: word.text, what: hit.what })
      }
    }
    if (!checked.isView && isGitConfigWrite(checked.words))
      found.set('git config', { path: 'git config', what: "git's configuration" })
  }
  return [...found.values()]
}

type Candidate = { path: string; isPattern: boolean }

/** The absolute paths a word may name: itself, and the value of `--option=value`. */
function candidatesOf(word: Word, options: ProtectedPathsOptions): Candidate[] {
  const texts = [word.text]
  const equals = word.text.indexOf('=')
  if (equals > 0) texts.push(word.text.slice(equals + 1))
  const out: Candidate[] = []
  for (let text of texts) {
    if (options.home !== undefined) {
      if (word.hasTilde && (text === '~' || text.startsWith('~/')))
        text = options.home + text.slice(1)
      text = text.replace(/^\$(HOME\b|\{HOME\})/, options.home)
    }
    if (options.rudderHome !== undefined)
      text = text.replace(/^\$(RUDDER_HOME\b|\{RUDDER_HOME\})/, options.rudderHome)
    // What is still computed at run time cannot be known; the rest is a path or a pattern.
    if (text === '' || text.includes('$') || text.includes('`')) continue
    out.push({ path: resolve(options.workspace, text), isPattern: word.isPattern })
  }
  return out
}

function entryHolds(entry: Entry, path: string): boolean {
  const subject = path.toLowerCase()
  switch (entry.kind) {
    case 'tree': {
      const base = entry.path.toLowerCase()
      return subject === base || subject.startsWith(base.endsWith(sep) ? base : base + sep)
    }
    case 'exact':
      return subject === entry.path.toLowerCase()
    case 'names':
      return (
        dirname(subject) === entry.directory.toLowerCase() &&
        compilePathGlob(entry.glob, { ignoreCase: true }).test(basename(path))
      )
  }
}

function splitPath(path: string): string[] {
  return path.split(sep).filter((segment) => segment !== '')
}

/** Whether a shell glob could expand to the entry's path (or, for a tree, below it). */
function globReaches(pattern: readonly string[], entry: Entry): boolean {
  const base = splitPath(entry.kind === 'names' ? entry.directory : entry.path)
  for (let index = 0; index < base.length; index++) {
    const segment = pattern[index]
    if (segment === undefined) return false
    if (segment === '**') return true
    if (!segmentCouldMatch(segment, base[index]!)) return false
  }
  switch (entry.kind) {
    case 'tree':
      return true
    case 'exact':
      return pattern.length === base.length
    case 'names': {
      const last = pattern[base.length]
      return (
        pattern.length === base.length + 1 &&
        last !== undefined &&
        entry.typical.some((name) => segmentCouldMatch(last, name))
      )
    }
  }
}

function segmentCouldMatch(segment: string, name: string): boolean {
  // Like bash without dotglob: a leading dot must be written.
  if (name.startsWith('.') && !segment.startsWith('.')) return false
  return compilePathGlob(segment, { ignoreCase: true }).test(name)
}

/** `git config` that sets, unsets or edits something (reading a value is fine). */
function isGitConfigWrite(words: readonly Word[]): boolean {
  if (words[0]?.text !== 'git') return false
  let index = 1
  // git's own options before the subcommand: `-C dir`, `-c key=value`, `--git-dir=…`.
  while (index < words.length && words[index]!.text.startsWith('-'))
    index += /^-[Cc]$|^--(git-dir|work-tree|namespace)$/.test(words[index]!.text) ? 2 : 1
  if (words[index]?.text !== 'config') return false
  const rest = words.slice(index + 1).map((word) => word.text)
  const [first] = rest
  if (first === 'get' || first === 'list') return false
  if (first === 'set' || first === 'unset' || first === 'edit' || first?.endsWith('-section'))
    return true
  if (
    rest.some((text) =>
      /^--(add|unset|unset-all|replace-all|rename-section|remove-section|edit)$|^-e$/.test(text),
    )
  )
    return true
  if (rest.some((text) => /^--(get|get-all|get-regexp|get-urlmatch|list)$|^-l$/.test(text)))
    return false
  const valued = /^(-f|--file|--blob|--type|--default|--comment)$/
  let operands = 0
  for (let at = 0; at < rest.length; at++) {
    if (valued.test(rest[at]!)) at++
    else if (!rest[at]!.startsWith('-')) operands++
  }
  return operands >= 2
}

/** The path as given and, when it differs, its real path (a workspace reached through a link). */
function roots(path: string): string[] {
  const lexical = resolve(path)
  try {
    const real = realpathSync(lexical)
    return real === lexical ? [lexical] : [lexical, real]
  } catch {
    // Not there (yet): only the lexical path can be protected.
    return [lexical]
  }
}
