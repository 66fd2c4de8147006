/**
 * `glob`: the files whose path matches a glob pattern, sorted by path, limited.
 */
import { stat } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
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
import {
  displayPath,
  placeName,
  realRoots,
  resolveWorkspacePath,
  type WorkspaceOptions,
} from './workspace.js'

export type GlobToolOptions = WorkspaceOptions & {
  /** Paths returned when the call gives no `limit`. Default 500. */
  readonly defaultLimit?: number
  /** The most paths a call may ask for. Default 5000. */
  readonly maxLimit?: number
}

/**
 * The arguments: the zod schema that validates them (built on first need), and the JSON Schema
 * the model sees written out, so opening a session does no zod work (bench B10,
 * docs/decisions/0142-tool-schemas-written-out.md; test/tools/builtin-schemas.test.ts keeps the
 * two equal). Arguments that schema plainly accepts are taken without zod (decision 0147).
 */
export function globParameters(defaultLimit: number, maxLimit: number) {
  return {
    parameters: lazySchema((z) =>
      z.object({
        pattern: z
          .string()
          .min(1)
          .describe(
            'Glob relative to path: "*" and "?" within a name, "**" for any number of directories, {a,b} alternatives, [abc] classes. Example: "src/**/*.ts".',
          ),
        path: z.string().optional().describe('Directory to search from. Default: the workspace.'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(maxLimit)
          .optional()
          .describe(`Most paths to return. Default ${defaultLimit}.`),
      }),
    ),
    jsonSchema: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          minLength: 1,
          description:
            'Glob relative to path: "*" and "?" within a name, "**" for any number of directories, {a,b} alternatives, [abc] classes. Example: "src/**/*.ts".',
        },
        path: { description: 'Directory to search from. Default: the workspace.', type: 'string' },
        limit: {
          description: `Most paths to return. Default ${defaultLimit}.`,
          type: 'integer',
          minimum: 1,
          maximum: maxLimit,
        },
      },
      required: ['pattern'],
    },
  }
}

/** Creates the `glob` tool. Lists files (and symlinks), never directories. */
export function globTool(options: GlobToolOptions): Tool<{
  pattern: string
  path?: string | undefined
  limit?: number | undefined
}> {
  const defaultLimit = options.defaultLimit ?? 500
  const maxLimit = Math.max(options.maxLimit ?? 5000, defaultLimit)
  return defineLazyTool({
    name: 'glob',
    description:
      'Find files by path pattern, e.g. "**/*.test.ts". Returns matching file paths (relative to the workspace), sorted. Skips .git, node_modules and files listed in .gitignore.',
    ...globParameters(defaultLimit, maxLimit),
    async execute(args, context): Promise<BuiltinResult> {
      if (context.signal.aborted) return canceledResult('glob')
      // Loaded with the first call, so a session that globs nothing does not load them (bench B10).
      const [{ compileGlob, staticPrefix }, { comparePaths }, { walk }] = await Promise.all([
        import('./glob-pattern.js'),
        import('./grep-search.js'),
        import('./walk.js'),
      ])
      const pattern = args.pattern.replace(/^\.\//, '')
      if (isAbsolute(pattern) || pattern.split('/').includes('..')) {
        return errorResult(
          `pattern ${args.pattern} must be relative and must not contain "..": pass the directory to search as path, and a pattern relative to it.`,
        )
      }
      const base = await resolveWorkspacePath(options, args.path ?? '.', context.signal)
      if (!base.ok) return base.isCanceled ? canceledResult('glob') : errorResult(base.message)
      try {
        if (!(await stat(base.real)).isDirectory())
          return errorResult(`${base.display} is not a directory; give a directory as path.`)
      } catch (error) {
        return fileErrorResult(base.display, error)
      }
      const prefix = staticPrefix(pattern)
      // Walk from the fixed leading directories of the pattern, confined like any other path.
      const start = await resolveWorkspacePath(options, join(base.real, prefix), context.signal)
      if (!start.ok) return start.isCanceled ? canceledResult('glob') : errorResult(start.message)
      const isStartDirectory = await stat(start.real).then(
        (stats) => stats.isDirectory(),
        () => false,
      )
      const matcher = compileGlob(pattern)
      const [workspaceRoot] = await realRoots(options, context.signal)
      const found: string[] = []
      if (isStartDirectory) {
        for await (const entry of walk({
          start: start.real,
          ignoreRoot: workspaceRoot!,
          signal: context.signal,
        })) {
          if (entry.kind === 'directory') continue
          const relative = prefix === '' ? entry.relative : `${prefix}/${entry.relative}`
          if (matcher.test(relative)) found.push(displayPath(workspaceRoot!, entry.path))
        }
      }
      if (context.signal.aborted) return canceledResult('glob')
      found.sort(comparePaths)
      const limit = args.limit ?? defaultLimit
      const meta = { total: found.length, isTruncated: found.length > limit }
      if (found.length === 0)
        return textResult(`No files match ${args.pattern} in ${placeName(base.display)}.`, meta)
      const shown = found.slice(0, limit)
      if (found.length > limit) {
        shown.push(
          `\n[Showing ${limit} of ${found.length} paths. Use a more specific pattern or path${limit < maxLimit ? `, or raise limit (at most ${maxLimit})` : ''}.]`,
        )
      }
      return textResult(shown.join('\n'), meta)
    },
  })
}
