/**
 * Where a tool result too long for the model is saved in full (docs/spec.md §7): a private
 * directory per user, files only the user can read (0600), created without following links,
 * and removed once they are older than a week (docs/decisions/0045). The agent calls this when
 * it truncates a result; tool output can hold secrets, and `/tmp` is shared.
 */
import {
  chmodSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { chmod, lstat, mkdir, open, readdir, unlink } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { dirname, join } from 'node:path'

/** Where spilled output goes when the agent is given no directory: private to this user. */
export function defaultSpillDirectory(): string {
  const owner = process.getuid?.() ?? userInfo().username
  return join(tmpdir(), `rudder-${owner}`, 'tool-output')
}

export type SpillOptions = {
  /** The directory (created 0700 if missing; refused if another user owns it or it is a link). */
  readonly dir: string
  /** A name for the file (a session and call id); anything but `[A-Za-z0-9._-]` becomes `_`. */
  readonly name: string
  readonly text: string
  /** Files in `dir` older than this are removed. Default 7 days. */
  readonly maxAgeMs?: number
  /** The current time (tests pass their own). */
  readonly now?: number
}

const WEEK_MS = 7 * 24 * 60 * 60 * 1000
const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants

/**
 * Saves `text` and returns the file's path, blocking (the agent uses `saveToolOutput`). Throws
 * when the directory is not safe or the file cannot be written; the caller says so in the
 * result instead of a path.
 */
export function saveToolOutputSync(options: SpillOptions): string {
  ensurePrivateDirectory(options.dir)
  removeOldFiles(options.dir, (options.now ?? Date.now()) - (options.maxAgeMs ?? WEEK_MS))
  const base = options.name.replace(/[^\w.-]/g, '_').slice(0, 200)
  for (let attempt = 1; ; attempt++) {
    const path = join(options.dir, attempt === 1 ? `${base}.txt` : `${base}-${attempt}.txt`)
    let fd: number
    try {
      fd = openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 100) continue
      throw error
    }
    try {
      writeSync(fd, options.text)
    } finally {
      closeSync(fd)
    }
    return path
  }
}

/**
 * `saveToolOutputSync` without blocking the event loop: the agent's form, so a large result
 * being saved never holds up other sessions' streams. Same checks, same file, same errors.
 */
export async function saveToolOutput(options: SpillOptions): Promise<string> {
  await ensurePrivateDirectoryAsync(options.dir)
  await removeOldFilesAsync(
    options.dir,
    (options.now ?? Date.now()) - (options.maxAgeMs ?? WEEK_MS),
  )
  const base = options.name.replace(/[^\w.-]/g, '_').slice(0, 200)
  for (let attempt = 1; ; attempt++) {
    const path = join(options.dir, attempt === 1 ? `${base}.txt` : `${base}-${attempt}.txt`)
    let file: Awaited<ReturnType<typeof open>>
    try {
      file = await open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 100) continue
      throw error
    }
    try {
      await file.writeFile(options.text)
    } finally {
      await file.close()
    }
    return path
  }
}

async function ensurePrivateDirectoryAsync(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const uid = process.getuid?.()
  for (const path of [dir, dirname(dir)]) {
    const stats = await lstat(path)
    if (!stats.isDirectory())
      throw new Error(`${path} is not a directory (a symlink?); tool output is not saved there`)
    if (uid !== undefined && stats.uid !== uid && !(path !== dir && stats.uid === 0))
      throw new Error(`${path} belongs to another user; tool output is not saved there`)
  }
  if (((await lstat(dir)).mode & 0o077) !== 0) await chmod(dir, 0o700)
}

async function removeOldFilesAsync(dir: string, cutoff: number): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.txt')) continue
    const path = join(dir, name)
    try {
      const stats = await lstat(path)
      if (stats.isFile() && stats.mtimeMs < cutoff) await unlink(path)
    } catch {
      // Removed by another run meanwhile, or not ours to remove: the next sweep tries again.
    }
  }
}

/**
 * Creates `dir` (and missing parents) 0700, then checks it and its parent: real directories,
 * not symlinks, owned by this user (or root, for a shared parent); `dir` is made 0700.
 */
function ensurePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const uid = process.getuid?.()
  for (const path of [dir, dirname(dir)]) {
    const stats = lstatSync(path)
    if (!stats.isDirectory())
      throw new Error(`${path} is not a directory (a symlink?); tool output is not saved there`)
    if (uid !== undefined && stats.uid !== uid && !(path !== dir && stats.uid === 0))
      throw new Error(`${path} belongs to another user; tool output is not saved there`)
  }
  if ((lstatSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700)
}

/** Removes saved outputs last written before `cutoff` (a crash or a kill leaves them behind). */
function removeOldFiles(dir: string, cutoff: number): void {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.txt')) continue
    const path = join(dir, name)
    try {
      const stats = lstatSync(path)
      if (stats.isFile() && stats.mtimeMs < cutoff) unlinkSync(path)
    } catch {
      // Removed by another run meanwhile, or not ours to remove: the next sweep tries again.
    }
  }
}
