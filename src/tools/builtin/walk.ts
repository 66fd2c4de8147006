/**
 * Walks a directory tree for `glob` and the JS `grep`: entries in name order, `.git` and
 * `node_modules` skipped, `.gitignore` rules honoured, symlinked directories not followed
 * (no cycles, no escapes). The start itself is never skipped: an explicit path beats ignores.
 */
import type { Dirent } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { type IgnoreFile, isIgnored, readIgnoreFile } from './ignore-rules.js'
import { isInside } from './workspace.js'

/** Directory names skipped wherever they appear below the start of a walk. */
export const ALWAYS_SKIPPED: readonly string[] = ['.git', 'node_modules']

/** One entry found by a walk. */
export type WalkEntry = {
  /** Absolute path. */
  readonly path: string
  /** Path relative to the start of the walk, with `/` separators. */
  readonly relative: string
  readonly kind: 'file' | 'directory' | 'symlink' | 'other'
}

export type WalkOptions = {
  /** Absolute real path of the directory to walk. */
  readonly start: string
  /**
   * Absolute real path whose `.gitignore` files (from it down to `start`) apply too; usually
   * the workspace. Ignored when `start` is not inside it.
   */
  readonly ignoreRoot: string
  readonly signal: AbortSignal
}

/**
 * Yields every entry below `start` (not `start` itself), depth first, names sorted. Unreadable
 * directories are skipped. Stops quietly when the signal is aborted; the caller checks it.
 */
export async function* walk(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const inherited = await ancestorIgnoreFiles(options.ignoreRoot, options.start)
  yield* walkDirectory(options.start, options.start, inherited, options.signal)
}

async function* walkDirectory(
  start: string,
  directory: string,
  ignores: readonly IgnoreFile[],
  signal: AbortSignal,
): AsyncGenerator<WalkEntry> {
  if (signal.aborted) return
  let entries: Dirent[]
  try {
    entries = await readdir(directory, { withFileTypes: true })
  } catch {
    // A directory we may not read is left out, as `find` and ripgrep do.
    return
  }
  const own = await readIgnoreFile(directory)
  const rules = own === undefined ? ignores : [...ignores, own]
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    if (signal.aborted) return
    const path = join(directory, entry.name)
    const isDirectory = entry.isDirectory()
    if (isDirectory && ALWAYS_SKIPPED.includes(entry.name)) continue
    if (isIgnored(rules, path, isDirectory)) continue
    const kind = isDirectory
      ? 'directory'
      : entry.isFile()
        ? 'file'
        : entry.isSymbolicLink()
          ? 'symlink'
          : 'other'
    yield { path, relative: relative(start, path).split(sep).join('/'), kind }
    if (isDirectory) yield* walkDirectory(start, path, rules, signal)
  }
}

/** The `.gitignore` files of the directories from `root` down to the parent of `start`. */
async function ancestorIgnoreFiles(root: string, start: string): Promise<IgnoreFile[]> {
  if (start === root || !isInside(root, start)) return []
  const directories: string[] = []
  for (let directory = dirname(start); isInside(root, directory); directory = dirname(directory)) {
    directories.unshift(directory)
    if (directory === root) break
  }
  const files = await Promise.all(directories.map(readIgnoreFile))
  return files.filter((file): file is IgnoreFile => file !== undefined)
}
