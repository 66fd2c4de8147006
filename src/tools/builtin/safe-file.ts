/**
 * Reading and writing a file the workspace check approved, without a window in which a swapped
 * symlink or a hard link sends the bytes elsewhere (docs/decisions/0041):
 *
 * 1. The parent directory is opened (`O_DIRECTORY | O_NOFOLLOW`) and verified: on Linux the
 *    kernel says where the open descriptor really is (`/proc/self/fd/N`), and it must be the
 *    directory that was checked. Every later step goes through that descriptor
 *    (`/proc/self/fd/N/<name>`), so swapping a directory on the path afterwards changes nothing.
 *    Elsewhere the descriptor's device and inode are compared with the path's (best effort).
 * 2. Reads open the file `O_NOFOLLOW | O_NONBLOCK` and check the opened file: a regular file.
 * 3. Writes go to a new temporary file in the same directory (`O_EXCL | O_NOFOLLOW`), which is
 *    synced and renamed over the name: a rename replaces the directory entry, it never writes
 *    through a symlink or into another name of a hard-linked file. A target with more than one
 *    link is refused unless allowed, since replacing it silently unlinks it from its other names.
 */
import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readlink,
  rename,
  stat,
  unlink,
} from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** What the caller may relax. */
export type SafeFileOptions = {
  /** Write files that have more than one hard link (replacing them). Default false. */
  readonly allowHardLinks?: boolean
}

/**
 * A refusal for the model (fs errors other than these are thrown). `kind` lets a tool phrase
 * what to do instead; `message` is a complete sentence on its own.
 */
export type FileRefusal = {
  readonly ok: false
  readonly kind: 'changed' | 'directory' | 'not-a-file' | 'hard-links'
  readonly message: string
}

/** The config key that allows writing hard-linked files, named in the refusal. */
export const HARD_LINKS_SETTING = '"tools": { "allowHardLinks": true }'

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants

/** A directory held open; `path(name)` reaches an entry through the descriptor. */
type PinnedDirectory = {
  path(name: string): string
  close(): Promise<void>
}

function changed(display: string): FileRefusal {
  return {
    ok: false,
    kind: 'changed',
    message: `${display}: the path changed while it was being used (a directory or file on it was replaced, perhaps by a symlink); nothing was written. Check it with ls and try again.`,
  }
}

/**
 * Opens `real` (an absolute, already resolved directory) and verifies that the descriptor is
 * that directory. Undefined when it is not (it was swapped since it was resolved).
 */
async function pinDirectory(real: string): Promise<PinnedDirectory | undefined> {
  const handle = await open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
  const close = () => handle.close()
  try {
    const viaProc = `/proc/self/fd/${handle.fd}`
    const opened = await readlink(viaProc).catch(() => undefined)
    if (opened !== undefined) {
      if (opened !== real) {
        await close()
        return undefined
      }
      return { path: (name) => `${viaProc}/${name}`, close }
    }
    // No /proc (macOS): compare the descriptor with what the path names now. A swap after this
    // check is not caught; the rename in writes still never follows a link at the last step.
    const [held, named] = await Promise.all([handle.stat(), stat(real)])
    if (held.dev !== named.dev || held.ino !== named.ino) {
      await close()
      return undefined
    }
    return { path: (name) => join(real, name), close }
  } catch (error) {
    await close()
    throw error
  }
}

/** Pins `real`, creating it and its missing parents one level at a time through pinned parents. */
async function pinCreating(real: string): Promise<PinnedDirectory | undefined> {
  try {
    return await pinDirectory(real)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(real) === real) throw error
  }
  const parent = await pinCreating(dirname(real))
  if (parent === undefined) return undefined
  try {
    await mkdir(parent.path(basename(real))).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
  } finally {
    await parent.close()
  }
  return pinDirectory(real)
}

/** An open regular file and its stats; the caller closes `handle`. */
export type OpenedFile = { readonly ok: true; readonly handle: FileHandle; readonly stats: Stats }

/**
 * Opens `real` for reading without following a symlink at any step, and checks that it is a
 * regular file (a FIFO would block a read, a device never end). Refusals are values.
 */
export async function openFileSafely(
  real: string,
  display: string,
): Promise<OpenedFile | FileRefusal> {
  const directory = await pinDirectory(dirname(real))
  if (directory === undefined) return changed(display)
  let handle: FileHandle
  try {
    // Devices are not opened at all: opening one can have effects of its own.
    const named = await lstat(directory.path(basename(real)))
    if (!named.isFile() && !named.isDirectory() && !named.isSymbolicLink()) return notAFile(display)
    handle = await open(directory.path(basename(real)), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return changed(display)
    throw error
  } finally {
    await directory.close()
  }
  const stats = await handle.stat()
  if (stats.isFile()) return { ok: true, handle, stats }
  await handle.close()
  return stats.isDirectory()
    ? { ok: false, kind: 'directory', message: `${display} is a directory, not a file.` }
    : notAFile(display)
}

function notAFile(display: string): FileRefusal {
  return {
    ok: false,
    kind: 'not-a-file',
    message: `${display} is not a regular file (a device, socket or pipe).`,
  }
}

/** The whole content of a file opened as `openFileSafely` does. */
export async function readFileSafely(
  real: string,
  display: string,
  signal: AbortSignal,
): Promise<{ readonly ok: true; readonly bytes: Buffer; readonly stats: Stats } | FileRefusal> {
  const opened = await openFileSafely(real, display)
  if (!opened.ok) return opened
  try {
    const bytes = await opened.handle.readFile({ signal })
    return { ok: true, bytes, stats: opened.stats }
  } finally {
    await opened.handle.close()
  }
}

export type WriteOptions = SafeFileOptions & {
  readonly signal: AbortSignal
  /** The file must still be this one (device and inode), e.g. the one an edit read. */
  readonly expected?: Pick<Stats, 'dev' | 'ino'>
}

/** Refuses a target with other names, unless allowed. */
export function refuseHardLinks(
  stats: Pick<Stats, 'nlink'>,
  display: string,
  options: SafeFileOptions,
): FileRefusal | undefined {
  if (stats.nlink <= 1 || options.allowHardLinks === true) return undefined
  return {
    ok: false,
    kind: 'hard-links',
    message: `${display} has ${stats.nlink} hard links (other names for the same file, possibly outside the workspace), so it was not written. If the user wants such files written (they are replaced, so the other names keep the old content), they can set ${HARD_LINKS_SETTING} in rudder's config.`,
  }
}

/**
 * Replaces (or creates) `real` with `content` atomically: a temporary file in the same
 * directory, synced, then renamed over the name. Parent directories are created. Keeps the
 * mode (and, where permitted, the owner) of a file it replaces. Refusals are values; fs errors
 * throw. An abort before the rename leaves the file untouched.
 */
export async function writeFileAtomically(
  real: string,
  display: string,
  content: string,
  options: WriteOptions,
): Promise<{ readonly ok: true; readonly isCreated: boolean } | FileRefusal> {
  const name = basename(real)
  const directory = await pinCreating(dirname(real))
  if (directory === undefined) return changed(display)
  const temporary = `.rudder-${randomBytes(6).toString('hex')}.tmp`
  let isTemporaryLeft = false
  try {
    const existing = await lstat(directory.path(name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    if (existing?.isDirectory())
      return {
        ok: false,
        kind: 'directory',
        message: `${display} is a directory; give a file path inside it.`,
      }
    if (existing !== undefined && !existing.isFile() && !existing.isSymbolicLink())
      return {
        ok: false,
        kind: 'not-a-file',
        message: `${display} is not a regular file; only files are written.`,
      }
    if (existing?.isFile()) {
      const refusal = refuseHardLinks(existing, display, options)
      if (refusal !== undefined) return refusal
    }
    if (
      options.expected !== undefined &&
      (existing === undefined ||
        existing.dev !== options.expected.dev ||
        existing.ino !== options.expected.ino)
    )
      return changed(display)
    const handle = await open(
      directory.path(temporary),
      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
      existing?.isFile() ? 0o600 : 0o666,
    )
    isTemporaryLeft = true
    try {
      await handle.writeFile(content, { encoding: 'utf8', signal: options.signal })
      if (existing?.isFile()) await keepOwnership(handle, existing)
      await handle.datasync()
    } finally {
      await handle.close()
    }
    if (options.signal.aborted) throw options.signal.reason
    await rename(directory.path(temporary), directory.path(name))
    isTemporaryLeft = false
    return { ok: true, isCreated: existing === undefined }
  } finally {
    if (isTemporaryLeft) {
      await unlink(directory.path(temporary)).catch(() => {
        // Best effort: the write already failed, and that failure is the one to report.
      })
    }
    await directory.close()
  }
}

async function keepOwnership(handle: FileHandle, previous: Stats): Promise<void> {
  await handle.chmod(previous.mode & 0o7777)
  const mine = await handle.stat()
  if (mine.uid === previous.uid && mine.gid === previous.gid) return
  await handle.chown(previous.uid, previous.gid).catch(() => {
    // Only root (or a member of the group) may give a file away; otherwise it becomes ours,
    // as with any editor that writes a new file and renames it.
  })
}
