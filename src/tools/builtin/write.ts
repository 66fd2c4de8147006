/**
 * `write`: creates or replaces a whole file, creating its parent directories. The new content
 * goes to a temporary file renamed over the name (see `safe-file.ts`).
 */
import type { z } from 'zod'
import { defineLazyTool } from '../define-tool.js'
import { lazySchema } from '../lazy-zod.js'
import { type ProtectedPaths, protectedPaths } from '../protected-paths.js'
import type { Tool } from '../tool.js'
import { FILE_PATH_JSON_SCHEMA, filePathParameter } from './file-path-parameter.js'
import { refuseIndirectProtected } from './protected-guard.js'
import {
  type BuiltinResult,
  canceledResult,
  errorResult,
  fileErrorResult,
  textResult,
} from './results.js'
import { type SafeFileOptions, writeFileAtomically } from './safe-file.js'
import { resolveWorkspacePath, type WorkspaceOptions } from './workspace.js'

export type WriteToolOptions = WorkspaceOptions &
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
export const writeParameters = {
  parameters: lazySchema((z) =>
    z.object({
      path: filePathParameter(z),
      content: z.string().describe('The complete new content of the file.'),
    }),
  ),
  jsonSchema: {
    type: 'object',
    properties: {
      path: FILE_PATH_JSON_SCHEMA,
      content: { type: 'string', description: 'The complete new content of the file.' },
    },
    required: ['path', 'content'],
  },
}

/** Creates the `write` tool. Exclusive: writes do not race other calls of the batch. */
export function writeTool(
  options: WriteToolOptions,
): Tool<z.output<ReturnType<typeof writeParameters.parameters>>> {
  const guard = options.protectedPaths ?? protectedPaths({ workspace: options.workspace })
  return defineLazyTool({
    name: 'write',
    description:
      'Write a whole file (created, or replaced if it exists), creating missing parent directories. To change part of an existing file, prefer edit.',
    ...writeParameters,
    concurrency: 'exclusive',
    async execute(args, context): Promise<BuiltinResult> {
      if (context.signal.aborted) return canceledResult('write')
      const resolved = await resolveWorkspacePath(options, args.path, context.signal)
      if (!resolved.ok)
        return resolved.isCanceled ? canceledResult('write') : errorResult(resolved.message)
      const { real, display } = resolved
      const indirect = refuseIndirectProtected(guard, options.workspace, args.path, real, display)
      if (indirect !== undefined) return errorResult(indirect)
      try {
        const written = await writeFileAtomically(real, display, args.content, {
          signal: context.signal,
          ...(options.allowHardLinks === undefined
            ? {}
            : { allowHardLinks: options.allowHardLinks }),
        })
        if (!written.ok) return errorResult(written.message)
        const bytes = Buffer.byteLength(args.content)
        const verb = written.isCreated ? 'Created' : 'Overwrote'
        return textResult(`${verb} ${display} (${bytes} bytes).`, {
          path: display,
          isCreated: written.isCreated,
          bytes,
        })
      } catch (error) {
        if (context.signal.aborted) return canceledResult('write')
        return fileErrorResult(display, error)
      }
    },
  })
}
