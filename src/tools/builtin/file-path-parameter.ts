/**
 * The `path` parameter read, write and edit share, as zod (what checks the model's arguments)
 * and as the JSON Schema written out for the request (docs/decisions/0142).
 */
import type { z } from 'zod'

const DESCRIPTION = 'File path, relative to the workspace or absolute.'

export function filePathParameter(zod: typeof z): z.ZodString {
  return zod.string().min(1).describe(DESCRIPTION)
}

export const FILE_PATH_JSON_SCHEMA = {
  type: 'string',
  minLength: 1,
  description: DESCRIPTION,
} as const
