/**
 * The built-in coding tools (docs/spec.md §7) and `builtinTools`, which makes all seven at once.
 */
import type { ProtectedPaths } from '../protected-paths.js'
import type { Tool } from '../tool.js'
import { type BashToolOptions, bashTool } from './bash.js'
import { editTool } from './edit.js'
import { type GlobToolOptions, globTool } from './glob.js'
import { type GrepToolOptions, grepTool } from './grep.js'
import { type LsToolOptions, lsTool } from './ls.js'
import { type ReadToolOptions, readTool } from './read.js'
import type { WorkspaceOptions } from './workspace.js'
import { writeTool } from './write.js'

export { type BashToolOptions, bashTool } from './bash.js'
export { type EditToolOptions, editTool } from './edit.js'
export { type GlobToolOptions, globTool } from './glob.js'
export { type GrepToolOptions, grepTool } from './grep.js'
export { type LsToolOptions, lsTool } from './ls.js'
export { type ReadToolOptions, readTool } from './read.js'
export type { WorkspaceOptions } from './workspace.js'
export { type WriteToolOptions, writeTool } from './write.js'

/** Options of `builtinTools`: the shared workspace settings plus per-tool ones. */
export type BuiltinToolsOptions = WorkspaceOptions & {
  /** `write` and `edit` replace files that have more than one hard link. Default false. */
  readonly allowHardLinks?: boolean
  /** Configuration files `write` and `edit` only change when named directly (default: the workspace's). */
  readonly protectedPaths?: ProtectedPaths
  readonly read?: Omit<ReadToolOptions, keyof WorkspaceOptions>
  readonly bash?: Omit<BashToolOptions, 'workspace'>
  readonly grep?: Omit<GrepToolOptions, keyof WorkspaceOptions>
  readonly glob?: Omit<GlobToolOptions, keyof WorkspaceOptions>
  readonly ls?: Omit<LsToolOptions, keyof WorkspaceOptions>
}

/**
 * The seven built-in tools, `read`, `write`, `edit`, `bash`, `grep`, `glob`, `ls`, in that
 * order, all confined to the same workspace (except `bash`, which runs in it).
 */
export function builtinTools(options: BuiltinToolsOptions): Tool[] {
  const { read, bash, grep, glob, ls, allowHardLinks, protectedPaths, ...workspace } = options
  const writing = {
    ...workspace,
    ...(allowHardLinks === undefined ? {} : { allowHardLinks }),
    ...(protectedPaths === undefined ? {} : { protectedPaths }),
  }
  return [
    readTool({ ...read, ...workspace }),
    writeTool(writing),
    editTool(writing),
    bashTool({ ...bash, workspace: workspace.workspace }),
    grepTool({ ...grep, ...workspace }),
    globTool({ ...glob, ...workspace }),
    lsTool({ ...ls, ...workspace }),
  ]
}
