/**
 * The zod schema of plain JSON, for trust boundaries that accept arbitrary JSON inside a
 * checked shape (script files, HTTP bodies). It lives beside the providers, not in core,
 * because core imports no package.
 */
import { z } from 'zod'
import type { JsonValue } from '../core/values.js'

export const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.null(),
    z.boolean(),
    z.number(),
    z.string(),
    z.array(jsonValueSchema),
    z.record(z.string(), jsonValueSchema),
  ]),
)
