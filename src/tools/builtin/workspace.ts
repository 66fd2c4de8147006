/**
 * Workspace confinement: every path a built-in tool touches is resolved against the workspace,
 * with `..` and symlinks (even dangling ones) followed, and refused when it lands outside.
 */
import { lstat, readlink, realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path'

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
/** A refusal with a message for the model. */
export type RefusedPath = { readonly ok: false; readonly message: string }

// Linux gives up after 40 links (ELOOP); so do we, instead of looping on a symlink cycle.
const MAX_LINKS = 40

/**
 * Resolves `path` (relative to the workspace, or absolute) to its real location. Never throws
 * for paths that do not exist: a missing tail is kept as written, so `write` can create it.
 * Refuses (as a value) paths outside the workspace and the extra roots unless allowed.
 */
export async function resolveWorkspacePath(
  options: WorkspaceOptions,
  path: string,
): Promise<ResolvedPath | RefusedPath> {
  const workspace = resolve(options.workspace)
  const requested = resolve(workspace, path)
  const real = await realpathLoose(requested, 0)
  if (real === undefined) {
    return {
      ok: false,
      message: `${path}: too many levels of symbolic links (a symlink cycle?); use a path that does not go through it`,
    }
  }
  if (options.allowOutsideWorkspace === true)
    return { ok: true, real, display: displayPath(options, real) }
  const roots = await realRoots(options)
  if (roots.some((root) => isInside(root, real))) {
    return { ok: true, real, display: displayPath(options, real) }
  }
  const how = real === requested ? '' : ` (it resolves to ${real})`
  return {
    ok: false,
    message: `${path} is outside the workspace ${roots[0]}${how}. Only paths inside the workspace are allowed: use a path relative to the workspace, and do not go through symlinks that point outside it.`,
  }
}

/** The real paths of the workspace and extra roots, workspace first. */
export async function realRoots(options: WorkspaceOptions): Promise<string[]> {
  const roots = [options.workspace, ...(options.extraRoots ?? [])]
  return Promise.all(
    roots.map(async (root) => (await realpathLoose(resolve(root), 0)) ?? resolve(root)),
  )
}

/** How to show a real path to the model: relative to the workspace when inside it, else absolute. */
export function displayPath(options: WorkspaceOptions, real: string): string {
  const workspace = resolve(options.workspace)
  const inside = relative(workspace, real)
  if (inside === '') return '.'
  if (!inside.startsWith('..') && !isAbsolute(inside)) return inside
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

/**
 * `realpath` that also works for paths that do not exist yet: it resolves the longest existing
 * prefix and follows dangling symlinks by hand, because a dangling link inside the workspace
 * can still point outside it (and `write` would follow it). `undefined` on a link cycle.
 */
async function realpathLoose(path: string, links: number): Promise<string | undefined> {
  if (links > MAX_LINKS) return undefined
  try {
    return await realpath(path)
  } catch (error) {
    if (!isMissing(error)) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') return undefined
      // EACCES and the like: keep the path as written; the tool's own access reports the error.
      return path
    }
  }
  const parent = dirname(path)
  if (parent === path) return path
  const realParent = await realpathLoose(parent, links)
  if (realParent === undefined) return undefined
  const candidate = resolve(realParent, basename(path))
  const stats = await lstat(candidate).catch(() => undefined)
  if (!stats?.isSymbolicLink()) return candidate
  const target = await readlink(candidate)
  return realpathLoose(resolve(realParent, target), links + 1)
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
