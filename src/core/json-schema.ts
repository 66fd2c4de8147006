/**
 * The zod schema of plain JSON, for trust boundaries that accept arbitrary JSON inside a
 * checked shape (script files, HTTP bodies). Kept out of core's index so that loading core
 * does not load zod.
 */
import { z } from 'zod'
import type { JsonValue } from './values.js'

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
