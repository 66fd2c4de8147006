/**
 * `read`: a text file with line numbers, a line range at a time; images as image blocks;
 * other binary files refused with a message.
 */
import type { FileHandle } from 'node:fs/promises'
import type { z } from 'zod'
import { defineLazyTool } from '../define-tool.js'
import { lazySchema } from '../lazy-zod.js'
import type { Tool } from '../tool.js'
import { imageMediaType, looksBinary, readHeadOf } from './file-kind.js'
import { FILE_PATH_JSON_SCHEMA, filePathParameter } from './file-path-parameter.js'
import {
  type BuiltinResult,
  canceledResult,
  errorResult,
  fileErrorResult,
  textResult,
} from './results.js'
import { openFileSafely } from './safe-file.js'
import { truncateLine } from './text-limits.js'
import { resolveWorkspacePath, type WorkspaceOptions } from './workspace.js'

export type ReadToolOptions = WorkspaceOptions & {
  /** Lines returned when the call gives no `limit`, and the most it may ask for. Default 2000. */
  readonly maxLines?: number
  /** Longer lines are cut with a note. Default 2000. */
  readonly maxLineChars?: number
  /** Total characters of one result; the range stops early with a note. Default 40 000. */
  readonly maxChars?: number
  /** Return PNG, JPEG, GIF and WebP files as image blocks. Default true. */
  readonly images?: boolean
  /** Largest image returned. Default 5 MB (what hosted providers accept). */
  readonly maxImageBytes?: number
}

/**
 * The arguments: the zod schema that validates them (built on first need), and the JSON Schema
 * the model sees written out, so opening a session does no zod work (bench B10,
 * docs/decisions/0142-tool-schemas-written-out.md; test/tools/builtin-schemas.test.ts keeps the
 * two equal). Arguments that schema plainly accepts are taken without zod (decision 0147).
 */
export const readParameters = {
  parameters: lazySchema((z) =>
    z.object({
      path: filePathParameter(z),
      offset: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('First line to read, counting from 1. Default 1.'),
      limit: z.number().int().min(1).optional().describe('How many lines to read.'),
    }),
  ),
  jsonSchema: {
    type: 'object',
    properties: {
      path: FILE_PATH_JSON_SCHEMA,
      offset: {
        description: 'First line to read, counting from 1. Default 1.',
        type: 'integer',
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
      },
      limit: {
        description: 'How many lines to read.',
        type: 'integer',
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
      },
    },
    required: ['path'],
  },
}

/** Creates the `read` tool. Never throws for file problems: they are error results. */
export function readTool(
  options: ReadToolOptions,
): Tool<z.output<ReturnType<typeof readParameters.parameters>>> {
  const maxLines = options.maxLines ?? 2000
  const maxLineChars = options.maxLineChars ?? 2000
  const maxChars = options.maxChars ?? 40_000
  return defineLazyTool({
    name: 'read',
    description: `Read a file. Text comes back with line numbers ("  12\\tcontent"; the number and tab are not part of the file). At most ${maxLines} lines per call: use offset and limit for long files. Images (PNG, JPEG, GIF, WebP) come back as images. Binary files are refused.`,
    ...readParameters,
    async execute(args, context): Promise<BuiltinResult> {
      if (context.signal.aborted) return canceledResult('read')
      const resolved = await resolveWorkspacePath(options, args.path, context.signal)
      if (!resolved.ok)
        return resolved.isCanceled ? canceledResult('read') : errorResult(resolved.message)
      const { real, display } = resolved
      let handle: FileHandle | undefined
      try {
        const opened = await openFileSafely(real, display)
        if (!opened.ok) {
          if (opened.kind === 'directory')
            return errorResult(`${display} is a directory; use ls to list it.`)
          // A FIFO or device would block the read (or never end); only regular files are read.
          if (opened.kind === 'not-a-file')
            return errorResult(
              `${display} is not a regular file (a device, socket or pipe); read only reads files.`,
            )
          return errorResult(opened.message)
        }
        handle = opened.handle
        const size = opened.stats.size
        const head = await readHeadOf(handle)
        const mediaType = imageMediaType(head)
        if (mediaType !== undefined) return readImage(options, display, handle, mediaType, size)
        if (looksBinary(head)) {
          return errorResult(
            `${display} is a binary file (${size} bytes); read only returns text and images. To inspect it, use bash (for example \`file ${display}\` or \`xxd ${display} | head\`).`,
          )
        }
        return await readLines(handle, display, {
          offset: args.offset ?? 1,
          limit: Math.min(args.limit ?? maxLines, maxLines),
          maxLineChars,
          maxChars,
          signal: context.signal,
        })
      } catch (error) {
        if (context.signal.aborted) return canceledResult('read')
        return fileErrorResult(display, error)
      } finally {
        await handle?.close()
      }
    },
  })
}

async function readImage(
  options: ReadToolOptions,
  display: string,
  handle: FileHandle,
  mediaType: string,
  size: number,
): Promise<BuiltinResult> {
  if (options.images === false) {
    return errorResult(
      `${display} is an image (${mediaType}); images are turned off for this agent, so read cannot show it.`,
    )
  }
  const maxBytes = options.maxImageBytes ?? 5 * 1024 * 1024
  if (size > maxBytes) {
    return errorResult(
      `${display} is an image of ${size} bytes, over the ${maxBytes}-byte limit; make a smaller copy (for example with bash) and read that.`,
    )
  }
  const data = (await handle.readFile()).toString('base64')
  return {
    content: [
      { type: 'text', text: `${display} (${mediaType}, ${size} bytes):` },
      { type: 'image', mediaType, data },
    ],
    isError: false,
    meta: { path: display, mediaType, bytes: size },
  }
}

type LineRange = {
  readonly offset: number
  readonly limit: number
  readonly maxLineChars: number
  readonly maxChars: number
  readonly signal: AbortSignal
}

/** Streams the file so that a range near the start of a huge file costs little. */
async function readLines(
  handle: FileHandle,
  display: string,
  range: LineRange,
): Promise<BuiltinResult> {
  // Loaded with the first read, so a session that reads no file does not load it (bench B10).
  const { createInterface } = await import('node:readline')
  // The caller closes the handle; the stream only reads from it.
  const stream = handle.createReadStream({
    encoding: 'utf8',
    signal: range.signal,
    start: 0,
    autoClose: false,
  })
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })
  const out: string[] = []
  let chars = 0
  let lineNumber = 0
  let stop: 'limit' | 'chars' | undefined
  try {
    for await (let line of lines) {
      lineNumber++
      if (lineNumber < range.offset) continue
      if (out.length === range.limit) {
        stop = 'limit'
        break
      }
      if (lineNumber === 1) line = line.replace(/^\uFEFF/, '')
      const numbered = `${String(lineNumber).padStart(6)}\t${truncateLine(line, range.maxLineChars)}`
      if (chars + numbered.length > range.maxChars && out.length > 0) {
        stop = 'chars'
        break
      }
      out.push(numbered)
      chars += numbered.length + 1
    }
  } finally {
    lines.close()
    stream.destroy()
  }
  if (range.signal.aborted) return canceledResult('read')
  if (lineNumber === 0) return textResult(`${display} is empty.`, { path: display, lines: 0 })
  if (out.length === 0) {
    return errorResult(
      `${display} has ${lineNumber} lines; offset ${range.offset} is past the end. Use an offset from 1 to ${lineNumber}.`,
    )
  }
  const last = range.offset + out.length - 1
  let text = out.join('\n')
  if (stop !== undefined) {
    const why =
      stop === 'chars' ? 'the output reached its size limit' : 'the line limit was reached'
    text += `\n\n[${display} continues after line ${last} (${why}); call read with offset ${last + 1} to read more.]`
  }
  return textResult(text, {
    path: display,
    firstLine: range.offset,
    lastLine: last,
    isComplete: stop === undefined,
  })
}
