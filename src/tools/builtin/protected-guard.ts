/**
 * The tools' half of protecting configuration files (docs/decisions/0043): the approval layer
 * asks before a call that names a protected file, so a tool refuses to reach one by any other
 * name (a symlink, or a path that only resolves to it at run time).
 */
import { resolve } from 'node:path'
import type { ProtectedPaths } from '../protected-paths.js'

/**
 * A refusal message when `real` (where the call would write) is protected but the path the
 * call named is not; undefined when the write may go ahead.
 */
export function refuseIndirectProtected(
  guard: ProtectedPaths,
  workspace: string,
  named: string,
  real: string,
  display: string,
): string | undefined {
  const reached = guard.match(real)
  if (reached === undefined || guard.match(resolve(workspace, named)) !== undefined)
    return undefined
  return `${named} leads to ${display} (${reached.what}) through a symbolic link, so it was not changed. Changes to that file always need the user's approval: name ${display} itself, and the user will be asked.`
}
