/**
 * The part of `.gitignore` the walking tools honour: blank and `#` lines, `!` negation,
 * a trailing `/` for directories only, patterns with a `/` anchored to their file's directory
 * and patterns without one matching a name at any depth. The last matching rule wins, and
 * rules of deeper files come later. Not read: `.git/info/exclude`, the global excludes file.
 */
import { readFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { compileGlob, type GlobMatcher } from './glob-pattern.js'

type IgnoreRule = {
  readonly matcher: GlobMatcher
  readonly isNegated: boolean
  readonly isDirOnly: boolean
}

/** The rules of one `.gitignore`, relative to the directory that holds it. */
export type IgnoreFile = { readonly base: string; readonly rules: readonly IgnoreRule[] }

/** Parses the text of a `.gitignore` found in directory `base` (absolute). */
export function parseIgnoreFile(base: string, text: string): IgnoreFile {
  const rules: IgnoreRule[] = []
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.replace(/\s+$/, '')
    if (line === '' || line.startsWith('#')) continue
    const isNegated = line.startsWith('!')
    if (isNegated) line = line.slice(1)
    else if (line.startsWith('\\!') || line.startsWith('\\#')) line = line.slice(1)
    const isDirOnly = line.endsWith('/')
    if (isDirOnly) line = line.slice(0, -1)
    if (line === '') continue
    const isAnchored = line.includes('/')
    if (line.startsWith('/')) line = line.slice(1)
    const pattern = isAnchored ? line : `**/${line}`
    rules.push({ matcher: compileGlob(pattern), isNegated, isDirOnly })
  }
  return { base, rules }
}

/** Reads `<directory>/.gitignore`; no file (or an unreadable one) means no rules. */
export async function readIgnoreFile(directory: string): Promise<IgnoreFile | undefined> {
  try {
    return parseIgnoreFile(directory, await readFile(join(directory, '.gitignore'), 'utf8'))
  } catch {
    // Most directories have no .gitignore; an unreadable one cannot be honoured either way.
    return undefined
  }
}

/** Whether `path` (absolute) is ignored by `files` (outermost first). */
export function isIgnored(
  files: readonly IgnoreFile[],
  path: string,
  isDirectory: boolean,
): boolean {
  let ignored = false
  for (const file of files) {
    const inside = relative(file.base, path).split(sep).join('/')
    if (inside === '' || inside.startsWith('..')) continue
    for (const rule of file.rules) {
      if (rule.isDirOnly && !isDirectory) continue
      if (rule.matcher.test(inside)) ignored = !rule.isNegated
    }
  }
  return ignored
}
