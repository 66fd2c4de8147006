/**
 * `grep`: searches file contents for a regular expression, with ripgrep when it is installed
 * and a JavaScript search otherwise (see `grep-search.ts` for what both skip).
 */
import { stat } from 'node:fs/promises'
import { defineLazyTool } from '../define-tool.js'
import { lazySchema } from '../lazy-zod.js'
import type { Tool } from '../tool.js'
import type { GrepOutcome, GrepQuery } from './grep-search.js'
import {
  type BuiltinResult,
  canceledResult,
  errorResult,
  fileErrorResult,
  textResult,
} from './results.js'
import { truncateLine } from './text-limits.js'
import {
  displayPath,
  placeName,
  realRoots,
  resolveWorkspacePath,
  type WorkspaceOptions,
} from './workspace.js'

export type GrepToolOptions = WorkspaceOptions & {
  /**
   * Which engine: `false` always uses the JavaScript search; a path uses that ripgrep binary;
   * unset uses `rg` from PATH when there is one (looked up once per tool), else JavaScript.
   */
  readonly ripgrep?: false | string
  /** Matches returned when the call gives no `limit`. Default 100. */
  readonly defaultLimit?: number
  /** The most matches a call may ask for. Default 1000. */
  readonly maxLimit?: number
  /** Matching lines are cut to this many characters. Default 300. */
  readonly maxLineChars?: number
  /** The JavaScript search skips larger files. Default 10 MB. */
  readonly maxFileBytes?: number
  /**
   * How long the JavaScript search may spend matching one call's regular expression before it
   * is stopped with an error (a catastrophic pattern would otherwise run for minutes). Default
   * 30 000 ms.
   */
  readonly regexTimeoutMs?: number
}

/**
 * The arguments: the zod schema that validates them (built on first need), and the JSON Schema
 * the model sees written out, so opening a session does no zod work (bench B10,
 * docs/decisions/0142-tool-schemas-written-out.md; test/tools/builtin-schemas.test.ts keeps the
 * two equal). Arguments that schema plainly accepts are taken without zod (decision 0147).
 */
export function grepParameters(defaultLimit: number, maxLimit: number) {
  return {
    parameters: lazySchema((z) =>
      z.object({
        pattern: z
          .string()
          .min(1)
          .describe(
            'Regular expression searched line by line (the common subset of JavaScript and Rust syntax: no lookaround or backreferences).',
          ),
        path: z
          .string()
          .optional()
          .describe('File or directory to search. Default: the workspace.'),
        glob: z
          .string()
          .optional()
          .describe(
            'Only files matching this glob: without "/" it matches file names ("*.ts"), with "/" paths below the searched directory ("src/**/*.ts"); a leading "!" excludes.',
          ),
        ignoreCase: z.boolean().optional().describe('Case-insensitive search. Default false.'),
        literal: z
          .boolean()
          .optional()
          .describe('Treat pattern as plain text, not a regex. Default false.'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(maxLimit)
          .optional()
          .describe(`Most matches to return. Default ${defaultLimit}.`),
      }),
    ),
    jsonSchema: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          minLength: 1,
          description:
            'Regular expression searched line by line (the common subset of JavaScript and Rust syntax: no lookaround or backreferences).',
        },
        path: {
          description: 'File or directory to search. Default: the workspace.',
          type: 'string',
        },
        glob: {
          description:
            'Only files matching this glob: without "/" it matches file names ("*.ts"), with "/" paths below the searched directory ("src/**/*.ts"); a leading "!" excludes.',
          type: 'string',
        },
        ignoreCase: { description: 'Case-insensitive search. Default false.', type: 'boolean' },
        literal: {
          description: 'Treat pattern as plain text, not a regex. Default false.',
          type: 'boolean',
        },
        limit: {
          description: `Most matches to return. Default ${defaultLimit}.`,
          type: 'integer',
          minimum: 1,
          maximum: maxLimit,
        },
      },
      required: ['pattern'],
    },
  }
}

/** Creates the `grep` tool. The result's `meta.engine` says which engine ran. */
export function grepTool(options: GrepToolOptions): Tool<{
  pattern: string
  path?: string | undefined
  glob?: string | undefined
  ignoreCase?: boolean | undefined
  literal?: boolean | undefined
  limit?: number | undefined
}> {
  const defaultLimit = options.defaultLimit ?? 100
  const maxLimit = Math.max(options.maxLimit ?? 1000, defaultLimit)
  const maxLineChars = options.maxLineChars ?? 300
  let ripgrep: Promise<string | undefined> | undefined
  const findRipgrep = () => {
    if (options.ripgrep === false) return Promise.resolve(undefined)
    if (options.ripgrep !== undefined) return Promise.resolve(options.ripgrep)
    ripgrep ??= import('./grep-search.js').then((search) => search.findOnPath('rg'))
    return ripgrep
  }
  return defineLazyTool({
    name: 'grep',
    description:
      'Search file contents for a regular expression. Returns "path:line:text" for each matching line, in path order. Skips .git, node_modules, files listed in .gitignore and binary files.',
    ...grepParameters(defaultLimit, maxLimit),
    async execute(args, context): Promise<BuiltinResult> {
      if (context.signal.aborted) return canceledResult('grep')
      // Loaded with the first call, so a session that searches nothing does not load the search
      // engines (bench B10).
      const { comparePaths, searchWithJavaScript, searchWithRipgrep } = await import(
        './grep-search.js'
      )
      const resolved = await resolveWorkspacePath(options, args.path ?? '.', context.signal)
      if (!resolved.ok)
        return resolved.isCanceled ? canceledResult('grep') : errorResult(resolved.message)
      const { real, display } = resolved
      let isDirectory: boolean
      try {
        const stats = await stat(real)
        if (!stats.isDirectory() && !stats.isFile())
          return errorResult(`${display} is not a regular file or directory; grep searches files.`)
        isDirectory = stats.isDirectory()
      } catch (error) {
        return fileErrorResult(display, error)
      }
      const [workspaceRoot] = await realRoots(options, context.signal)
      const limit = args.limit ?? defaultLimit
      const query: GrepQuery = {
        pattern: args.pattern,
        target: real,
        isDirectory,
        glob: args.glob,
        ignoreCase: args.ignoreCase === true,
        literal: args.literal === true,
        limit,
        ignoreRoot: workspaceRoot!,
        maxFileBytes: options.maxFileBytes ?? 10 * 1024 * 1024,
        timeoutMs: options.regexTimeoutMs ?? 30_000,
        signal: context.signal,
      }
      const binary = await findRipgrep()
      const engine = binary === undefined ? 'javascript' : 'ripgrep'
      const outcome: GrepOutcome =
        binary === undefined
          ? await searchWithJavaScript(query)
          : await searchWithRipgrep(binary, query)
      if (context.signal.aborted) return canceledResult('grep')
      if (!outcome.ok) {
        const advice = outcome.isTooSlow
          ? 'Simplify the pattern (no nested repetition), narrow the search with path or glob, or set literal to true to search for plain text.'
          : 'Fix the pattern (escape special characters such as ( [ { . * + ? with a backslash) or set literal to true to search for plain text.'
        return errorResult(`${outcome.message}\n${advice}`, { engine })
      }
      const matches = outcome.matches
        .map((match) => ({ ...match, path: displayPath(workspaceRoot!, match.path) }))
        .sort((a, b) => comparePaths(a.path, b.path) || a.line - b.line)
      const meta = { engine, matches: matches.length, isTruncated: outcome.isTruncated }
      if (matches.length === 0)
        return textResult(`No matches for ${args.pattern} in ${placeName(display)}.`, meta)
      const lines = matches.map(
        (match) => `${match.path}:${match.line}:${truncateLine(match.text, maxLineChars)}`,
      )
      if (outcome.isTruncated) {
        lines.push(
          `\n[Showing the first ${limit} matches; there are more. Narrow the search with a more specific pattern, a path or a glob${limit < maxLimit ? `, or raise limit (at most ${maxLimit})` : ''}.]`,
        )
      }
      return textResult(lines.join('\n'), meta)
    },
  })
}
