/**
 * `edit`: replaces an exact piece of text in a file. Refuses, with advice, text that is not
 * there or is there more than once; the result's `meta.diff` is a unified diff of the change.
 */
import type { z } from 'zod'
import { type JsonValue, messageOf } from '../../core/index.js'
import { defineLazyTool } from '../define-tool.js'
import { lazySchema } from '../lazy-zod.js'
import { type ProtectedPaths, protectedPaths } from '../protected-paths.js'
import type { Tool } from '../tool.js'
import { cappedDiff } from './diff.js'
import { looksBinary, SNIFF_BYTES } from './file-kind.js'
import { FILE_PATH_JSON_SCHEMA, filePathParameter } from './file-path-parameter.js'
import { refuseIndirectProtected } from './protected-guard.js'
import {
  type BuiltinResult,
  canceledResult,
  errorResult,
  fileErrorResult,
  textResult,
} from './results.js'
import {
  readFileSafely,
  refuseHardLinks,
  type SafeFileOptions,
  writeFileAtomically,
} from './safe-file.js'
import { resolveWorkspacePath, type WorkspaceOptions } from './workspace.js'

export type EditToolOptions = WorkspaceOptions &
  SafeFileOptions & {
    /**
     * rudder's, git's and agents' configuration files. The approval layer asks before a call
     * names one; this tool refuses to reach one under another name. Default: those of the
     * workspace.
     */
    readonly protectedPaths?: ProtectedPaths
  }

/**
 * The arguments: the zod schema that validates them (built on first need), and the JSON Schema
 * the model sees written out, so opening a session does no zod work (bench B10,
 * docs/decisions/0142-tool-schemas-written-out.md; test/tools/builtin-schemas.test.ts keeps the
 * two equal). Arguments that schema plainly accepts are taken without zod (decision 0147).
 */
export const editParameters = {
  parameters: lazySchema((z) =>
    z.object({
      path: filePathParameter(z),
      oldText: z
        .string()
        .describe(
          'Text to replace, exactly as in the file (whitespace and line breaks included, no line numbers).',
        ),
      newText: z.string().describe('The replacement text.'),
      replaceAll: z
        .boolean()
        .optional()
        .describe('Replace every occurrence instead of requiring exactly one. Default false.'),
    }),
  ),
  jsonSchema: {
    type: 'object',
    properties: {
      path: FILE_PATH_JSON_SCHEMA,
      oldText: {
        type: 'string',
        description:
          'Text to replace, exactly as in the file (whitespace and line breaks included, no line numbers).',
      },
      newText: { type: 'string', description: 'The replacement text.' },
      replaceAll: {
        description: 'Replace every occurrence instead of requiring exactly one. Default false.',
        type: 'boolean',
      },
    },
    required: ['path', 'oldText', 'newText'],
  },
}

/** Creates the `edit` tool. Exclusive: two edits of one file in a batch must not interleave. */
export function editTool(
  options: EditToolOptions,
): Tool<z.output<ReturnType<typeof editParameters.parameters>>> {
  const guard = options.protectedPaths ?? protectedPaths({ workspace: options.workspace })
  return defineLazyTool({
    name: 'edit',
    description:
      'Replace exact text in an existing file. oldText must match the file exactly (copy it from read output without the line numbers) and occur exactly once, unless replaceAll is true. Include a few surrounding lines to make it unique.',
    ...editParameters,
    concurrency: 'exclusive',
    async execute(args, context): Promise<BuiltinResult> {
      if (context.signal.aborted) return canceledResult('edit')
      const resolved = await resolveWorkspacePath(options, args.path, context.signal)
      if (!resolved.ok)
        return resolved.isCanceled ? canceledResult('edit') : errorResult(resolved.message)
      const { real, display } = resolved
      const indirect = refuseIndirectProtected(guard, options.workspace, args.path, real, display)
      if (indirect !== undefined) return errorResult(indirect)
      if (args.oldText === '') {
        return errorResult(
          'oldText is empty. To create or replace a whole file use write; to insert text, put an existing neighbouring line in oldText and repeat it in newText next to the new text.',
        )
      }
      if (args.oldText === args.newText) {
        return errorResult('oldText and newText are the same, so nothing would change.')
      }
      try {
        const read = await readFileSafely(real, display, context.signal)
        if (!read.ok) {
          if (read.kind === 'directory')
            return errorResult(`${display} is a directory; edit changes files.`)
          if (read.kind === 'not-a-file')
            return errorResult(`${display} is not a regular file; edit changes files.`)
          return errorResult(read.message)
        }
        const refusal = refuseHardLinks(read.stats, display, options)
        if (refusal !== undefined) return errorResult(refusal.message)
        if (looksBinary(read.bytes.subarray(0, SNIFF_BYTES)))
          return errorResult(`${display} is a binary file; edit only changes text files.`)
        const before = read.bytes.toString('utf8')
        const { oldText, newText } = matchLineEndings(before, args.oldText, args.newText)
        const positions = occurrences(before, oldText)
        if (positions.length === 0) return notFound(display, before, oldText)
        if (positions.length > 1 && args.replaceAll !== true) {
          return errorResult(
            `oldText occurs ${positions.length} times in ${display} (at lines ${lineList(before, positions)}). Add surrounding lines to oldText so that it matches exactly one place, or set replaceAll to true to replace every occurrence.`,
          )
        }
        const after = replaceAt(before, positions, oldText, newText)
        const written = await writeFileAtomically(real, display, after, {
          signal: context.signal,
          expected: read.stats,
          ...(options.allowHardLinks === undefined
            ? {}
            : { allowHardLinks: options.allowHardLinks }),
        })
        if (!written.ok) return errorResult(written.message)
        return editedResult(display, before, after, positions)
      } catch (error) {
        if (context.signal.aborted) return canceledResult('edit')
        return fileErrorResult(display, error)
      }
    },
  })
}

/** The most diff kept in `meta` (it is logged with the result). */
const MAX_DIFF_CHARS = 50_000

/**
 * The result of an edit that was written. Nothing here may throw: a failure after the write
 * would tell the model the edit failed, and it might apply it twice. The diff is capped
 * (`meta.isDiffTruncated`), and a diff that cannot be built is left out (`meta.diffError`).
 */
function editedResult(
  display: string,
  before: string,
  after: string,
  positions: readonly number[],
): BuiltinResult {
  const count = positions.length
  let where = ''
  let diff: Record<string, JsonValue>
  try {
    where = ` (line${count === 1 ? '' : 's'} ${lineList(before, positions)})`
    const capped = cappedDiff(display, before, after, { maxChars: MAX_DIFF_CHARS })
    diff = capped.isTruncated ? { diff: capped.diff, isDiffTruncated: true } : { diff: capped.diff }
  } catch (error) {
    diff = { diffError: messageOf(error) }
  }
  return textResult(
    `Edited ${display}: replaced ${count === 1 ? '1 occurrence' : `${count} occurrences`}${where}.`,
    { path: display, replacements: count, ...diff },
  )
}

/**
 * Models write `\n`; a file with CRLF line endings keeps them, so the text is matched and
 * written in the file's own convention.
 */
function matchLineEndings(
  content: string,
  oldText: string,
  newText: string,
): { oldText: string; newText: string } {
  if (!content.includes('\r\n') || oldText.includes('\r')) return { oldText, newText }
  const toCrlf = (text: string) => text.replace(/\r?\n/g, '\r\n')
  return { oldText: toCrlf(oldText), newText: toCrlf(newText) }
}

/** Start indices of the non-overlapping occurrences of `text`. */
function occurrences(content: string, text: string): number[] {
  const found: number[] = []
  for (
    let index = content.indexOf(text);
    index !== -1;
    index = content.indexOf(text, index + text.length)
  )
    found.push(index)
  return found
}

// Slicing instead of String.replace: a replacement string there treats `$&` and `$1` specially.
function replaceAt(
  content: string,
  positions: readonly number[],
  oldText: string,
  newText: string,
): string {
  const parts: string[] = []
  let cursor = 0
  for (const position of positions) {
    parts.push(content.slice(cursor, position), newText)
    cursor = position + oldText.length
  }
  parts.push(content.slice(cursor))
  return parts.join('')
}

function lineOf(content: string, index: number): number {
  let line = 1
  for (let at = content.indexOf('\n'); at !== -1 && at < index; at = content.indexOf('\n', at + 1))
    line++
  return line
}

function lineList(content: string, positions: readonly number[]): string {
  const shown = positions.slice(0, 10).map((position) => lineOf(content, position))
  return shown.join(', ') + (positions.length > 10 ? ', …' : '')
}

/** Points the model at lines that match when indentation is ignored, the usual near miss. */
function notFound(display: string, content: string, oldText: string): BuiltinResult {
  const advice = `oldText was not found in ${display}. It must match the file exactly, including whitespace, indentation and line breaks, without line numbers. Read the file again and copy the text exactly.`
  const firstLine = oldText
    .split(/\r?\n/)
    .find((line) => line.trim() !== '')
    ?.trim()
  if (firstLine === undefined) return errorResult(advice)
  const near: number[] = []
  content.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === firstLine && near.length < 5) near.push(index + 1)
  })
  if (near.length === 0) return errorResult(advice)
  return errorResult(
    `${advice} The first line of oldText appears, with different indentation or surroundings, at line${near.length === 1 ? '' : 's'} ${near.join(', ')}.`,
  )
}
