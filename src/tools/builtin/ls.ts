/**
 * `ls`: the entries of one directory, sorted by name, directories marked with a trailing `/`.
 */
import type { Dirent } from 'node:fs'
import { readdir, readlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { z } from 'zod'
import { defineLazyTool } from '../define-tool.js'
import { lazySchema } from '../lazy-zod.js'
import type { Tool } from '../tool.js'
import {
  type BuiltinResult,
  canceledResult,
  errorResult,
  fileErrorResult,
  textResult,
} from './results.js'
import { resolveWorkspacePath, type WorkspaceOptions } from './workspace.js'

export type LsToolOptions = WorkspaceOptions & {
  /** Entries returned when the call gives no `limit`. Default 500. */
  readonly defaultLimit?: number
}

/**
 * The arguments: the zod schema that validates them (built on first need), and the JSON Schema
 * the model sees written out, so opening a session does no zod work (bench B10,
 * docs/decisions/0142-tool-schemas-written-out.md; test/tools/builtin-schemas.test.ts keeps the
 * two equal). Arguments that schema plainly accepts are taken without zod (decision 0147).
 */
export const lsParameters = {
  parameters: lazySchema((z) =>
    z.object({
      path: z.string().optional().describe('Directory to list. Default: the workspace.'),
      limit: z.number().int().min(1).optional().describe('Most entries to return.'),
    }),
  ),
  jsonSchema: {
    type: 'object',
    properties: {
      path: { description: 'Directory to list. Default: the workspace.', type: 'string' },
      limit: {
        description: 'Most entries to return.',
        type: 'integer',
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
      },
    },
  },
}

/**
 * Creates the `ls` tool. Lists everything, hidden and ignored entries included: it shows one
 * directory as it is (glob and grep are the ones that skip ignored files).
 */
export function lsTool(
  options: LsToolOptions,
): Tool<z.output<ReturnType<typeof lsParameters.parameters>>> {
  const defaultLimit = options.defaultLimit ?? 500
  return defineLazyTool({
    name: 'ls',
    description:
      'List a directory: one entry per line, sorted by name; directories end with "/", symlinks show "-> target". Includes hidden files.',
    ...lsParameters,
    async execute(args, context): Promise<BuiltinResult> {
      if (context.signal.aborted) return canceledResult('ls')
      const resolved = await resolveWorkspacePath(options, args.path ?? '.', context.signal)
      if (!resolved.ok)
        return resolved.isCanceled ? canceledResult('ls') : errorResult(resolved.message)
      const { real, display } = resolved
      let entries: Dirent[]
      try {
        entries = await readdir(real, { withFileTypes: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOTDIR')
          return errorResult(`${display} is a file, not a directory; use read to see its content.`)
        return fileErrorResult(display, error)
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      const limit = args.limit ?? defaultLimit
      const lines = await Promise.all(entries.slice(0, limit).map((entry) => describe(real, entry)))
      const meta = { path: display, total: entries.length, isTruncated: entries.length > limit }
      if (entries.length === 0)
        return textResult(`${display === '.' ? 'The workspace' : display} is empty.`, meta)
      if (entries.length > limit)
        lines.push(
          `\n[Showing ${limit} of ${entries.length} entries; use glob to find specific files.]`,
        )
      return textResult(lines.join('\n'), meta)
    },
  })
}

async function describe(directory: string, entry: Dirent): Promise<string> {
  if (entry.isDirectory()) return `${entry.name}/`
  if (entry.isSymbolicLink()) {
    const target = await readlink(join(directory, entry.name)).catch(() => '?')
    return `${entry.name} -> ${target}`
  }
  return entry.name
}
