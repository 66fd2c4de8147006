/**
 * Workspace confinement: every path a built-in tool touches is resolved against the workspace,
 * with `..` and symlinks (even dangling ones) followed, and refused when it lands outside.
 * Resolution is iterative, bounded by the OS limits on path length, and honours the call's
 * abort signal (docs/decisions/0030).
 */
import { lstat, readlink, realpath } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'

/** Where the built-in tools may read and write. Shared by every built-in tool factory. */
export type WorkspaceOptions = {
  /** The directory relative paths are resolved against; the root of confinement. */
  readonly workspace: string
  /** Let the tools touch any path. Default false. */
  readonly allowOutsideWorkspace?: boolean
  /** More directories the tools may touch besides the workspace (resolved like the workspace). */
  readonly extraRoots?: readonly string[]
}

/** A path the tools may use: `real` is what to operate on, `display` what to show the model. */
export type ResolvedPath = { readonly ok: true; readonly real: string; readonly display: string }
/** A refusal with a message for the model; `isCanceled` when the signal stopped resolution. */
export type RefusedPath = {
  readonly ok: false
  readonly message: string
  readonly isCanceled?: boolean
}

// Linux gives up after 40 links (ELOOP); so do we, instead of looping on a symlink cycle.
const MAX_LINKS = 40
/** Linux's PATH_MAX (bytes, with the terminating NUL the kernel counts) and NAME_MAX. */
export const MAX_PATH_BYTES = 4096
export const MAX_NAME_BYTES = 255

/**
 * Resolves `path` (relative to the workspace, or absolute) to its real location. Never throws
 * for paths that do not exist: a missing tail is kept as written, so `write` can create it.
 * Refuses (as a value) paths outside the workspace and the extra roots unless allowed, paths
 * longer than the OS allows, `~` paths (a shell's, not a file system's), and link cycles.
 */
export async function resolveWorkspacePath(
  options: WorkspaceOptions,
  path: string,
  signal?: AbortSignal,
): Promise<ResolvedPath | RefusedPath> {
  const tilde = refuseTilde(path)
  if (tilde !== undefined) return tilde
  const workspace = resolve(options.workspace)
  const requested = resolve(workspace, path)
  const tooLong = refuseTooLong(path, requested)
  if (tooLong !== undefined) return tooLong
  const real = await resolveReal(requested, signal)
  if (real === 'canceled')
    return { ok: false, message: `${path}: canceled while resolving`, isCanceled: true }
  if (real === 'loop') {
    return {
      ok: false,
      message: `${path}: too many levels of symbolic links (a symlink cycle?); use a path that does not go through it`,
    }
  }
  const roots = await realRoots(options, signal)
  const root = roots[0]!
  if (options.allowOutsideWorkspace === true || roots.some((each) => isInside(each, real)))
    return { ok: true, real, display: displayPath(root, real) }
  const how = real === requested ? '' : ` (it resolves to ${real})`
  return {
    ok: false,
    message: `${path} is outside the workspace ${root}${how}. Only paths inside the workspace are allowed: use a path relative to the workspace, and do not go through symlinks that point outside it.`,
  }
}

/** The real paths of the workspace and extra roots, workspace first. */
export async function realRoots(
  options: WorkspaceOptions,
  signal?: AbortSignal,
): Promise<string[]> {
  const roots = [options.workspace, ...(options.extraRoots ?? [])]
  return Promise.all(
    roots.map(async (root) => {
      const real = await resolveReal(resolve(root), signal)
      return real === 'loop' || real === 'canceled' ? resolve(root) : real
    }),
  )
}

/**
 * How to show a real path to the model: relative to the workspace's real path when inside it
 * (so a workspace reached through a symlink, like macOS's /tmp, still shows short paths),
 * else absolute.
 */
export function displayPath(realWorkspace: string, real: string): string {
  const inside = relative(realWorkspace, real)
  if (inside === '') return '.'
  if (!inside.startsWith(`..${sep}`) && inside !== '..' && !isAbsolute(inside))
    return inside.split(sep).join('/')
  return real
}

/** A display path as a place in a sentence: the workspace root reads "the workspace". */
export function placeName(display: string): string {
  return display === '.' ? 'the workspace' : display
}

/** Whether `path` is `root` or below it. Both must be absolute and normalized. */
export function isInside(root: string, path: string): boolean {
  if (path === root) return true
  const prefix = root.endsWith(sep) ? root : root + sep
  return path.startsWith(prefix)
}

/** `~` means the home directory to a shell only; to the tools it would be a directory named `~`. */
function refuseTilde(path: string): RefusedPath | undefined {
  if (path !== '~' && !/^~[^/]*\//.test(path)) return undefined
  return {
    ok: false,
    message: `${path}: the tools do not expand "~" (only a shell does), so this would name a directory called "~" inside the workspace, not the home directory. Give an absolute path instead (paths outside the workspace are refused unless configured), or write ./${path} if you really mean a directory named "~".`,
  }
}

function refuseTooLong(path: string, requested: string): RefusedPath | undefined {
  const bytes = Buffer.byteLength(requested)
  const shown = path.length > 80 ? `${path.slice(0, 60)}…` : path
  if (bytes >= MAX_PATH_BYTES) {
    return {
      ok: false,
      message: `${shown}: the path is ${bytes} bytes long, over the limit of ${MAX_PATH_BYTES - 1} bytes for a file path. Use a shorter path.`,
    }
  }
  const longest = requested
    .split(sep)
    .reduce((most, name) => Math.max(most, Buffer.byteLength(name)), 0)
  if (longest > MAX_NAME_BYTES) {
    return {
      ok: false,
      message: `${shown}: a file or directory name in the path is ${longest} bytes long, over the limit of ${MAX_NAME_BYTES} bytes for one name. Use shorter names.`,
    }
  }
  return undefined
}

/**
 * `realpath` that also works for paths that do not exist yet: it walks the path one component
 * at a time, following symlinks by hand (dangling ones too, since `write` would follow them and
 * a dangling link can point outside), and keeps a missing tail as written. Linear in the
 * number of components; checks `signal` at each one.
 */
async function resolveReal(
  absolute: string,
  signal: AbortSignal | undefined,
): Promise<string | 'loop' | 'canceled'> {
  if (signal?.aborted) return 'canceled'
  try {
    return await realpath(absolute)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') return 'loop'
    // EACCES and the like: keep the path as written; the tool's own access reports the error.
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return absolute
  }
  // A stack of the components still to resolve, the next one last.
  const pending = absolute
    .split(sep)
    .filter((name) => name !== '')
    .reverse()
  let current: string = sep
  let links = 0
  let isMissing = false
  while (pending.length > 0) {
    if (signal?.aborted) return 'canceled'
    const name = pending.pop()!
    if (name === '.') continue
    if (name === '..') {
      // Only a link's target can bring `..` here (resolve() removed the others); what follows
      // it may exist again, so it is looked at again.
      current = resolve(current, '..')
      isMissing = false
      continue
    }
    const candidate = join(current, name)
    if (isMissing) {
      current = candidate
      continue
    }
    const stats = await lstat(candidate).catch(() => undefined)
    if (stats === undefined) {
      // Missing (or unreadable): this and everything after it are kept as written.
      isMissing = true
      current = candidate
      continue
    }
    if (!stats.isSymbolicLink()) {
      current = candidate
      continue
    }
    if (++links > MAX_LINKS) return 'loop'
    const target = await readlink(candidate).catch(() => undefined)
    if (target === undefined) {
      // It stopped being a link since lstat (replaced or removed): look at it again.
      pending.push(name)
      continue
    }
    if (isAbsolute(target)) current = sep
    const parts = target.split(sep).filter((part) => part !== '')
    for (let index = parts.length - 1; index >= 0; index--) pending.push(parts[index]!)
  }
  return current
}
