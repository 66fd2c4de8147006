/**
 * zod schemas for what a store reads back: the header, the stored envelope and the data of
 * each core event type (docs/spec.md §3). They are the readable reference: the store's paths
 * check with `stored-shapes.ts`, which mirrors them without loading zod, and a property test
 * holds the two to the same verdicts and messages (decision 0143). Change both together.
 *
 * Data objects are loose (unknown keys are kept) because `append` accepts any plain JSON and a
 * store must give back exactly what was appended. Header and envelope are strict: rudder alone
 * writes them, so an unknown key there means another writer or damage.
 */
import { z } from 'zod'
import type { EventType } from '../core/index.js'

const finite = z.number()
const integer = z.number().int()
const json = z.unknown()

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() })
const imageBlock = z.looseObject({
  type: z.literal('image'),
  mediaType: z.string(),
  data: z.string(),
})
const contentBlock = z.discriminatedUnion('type', [textBlock, imageBlock])
const content = z.array(contentBlock)
const assistantBlock = z.discriminatedUnion('type', [
  textBlock,
  z.looseObject({
    type: z.literal('thinking'),
    text: z.string(),
    signature: z.string().optional(),
  }),
  z.looseObject({ type: z.literal('tool-call'), id: z.string(), name: z.string(), args: json }),
])
const source = z.looseObject({ kind: z.string() })
const turnEndReason = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('completed') }),
  z.looseObject({ kind: z.literal('max-tokens') }),
  z.looseObject({ kind: z.literal('step-limit') }),
  z.looseObject({ kind: z.literal('canceled'), cause: z.string() }),
  z.looseObject({ kind: z.literal('error'), code: z.string(), message: z.string() }),
  z.looseObject({ kind: z.literal('interrupted') }),
  z.looseObject({ kind: z.literal('stop-limit') }),
])
const usage = z.looseObject({
  inputTokens: finite,
  outputTokens: finite,
  cacheReadTokens: finite.optional(),
  cacheWriteTokens: finite.optional(),
  reasoningTokens: finite.optional(),
})
const toolSpec = z.looseObject({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), json),
})

/** The schema of `data` for each core event type. */
export const EVENT_DATA: { readonly [K in EventType]: z.ZodType } = {
  'user/message': z.looseObject({ id: z.string(), content, source, meta: json.optional() }),
  'steering/message': z.looseObject({
    id: z.string(),
    content,
    source,
    meta: json.optional(),
    turn: integer,
  }),
  'turn/start': z.looseObject({ turn: integer, trigger: z.enum(['prompt', 'continue']) }),
  'turn/end': z.looseObject({ turn: integer, reason: turnEndReason }),
  'step/start': z.looseObject({ turn: integer, step: integer }),
  'request/header': z.looseObject({
    provider: z.string(),
    model: z.string(),
    system: z.string(),
    tools: z.array(toolSpec),
    params: z.record(z.string(), json),
  }),
  'assistant/message': z.looseObject({
    id: z.string(),
    content: z.array(assistantBlock),
    provider: z.string(),
    model: z.string(),
    stopReason: z.enum(['stop', 'tool-calls', 'max-tokens', 'canceled', 'error']),
    usage,
    interrupted: z.literal(true).optional(),
  }),
  'tool/call': z.looseObject({ callId: z.string(), name: z.string(), args: json }),
  'tool/result': z.looseObject({
    callId: z.string(),
    name: z.string(),
    content,
    isError: z.boolean(),
    error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
    meta: json.optional(),
  }),
  'step/end': z.looseObject({ turn: integer, step: integer }),
  compaction: z.looseObject({
    id: z.string(),
    summary: content,
    firstKeptSeq: integer,
    reason: z.enum(['manual', 'auto', 'overflow']),
    tokensBefore: finite,
    tokensAfter: finite.optional(),
    request: z
      .looseObject({ model: z.string(), system: z.string(), messageCount: finite })
      .optional(),
  }),
}

/** A reference from a stored event to a content-addressed blob (see blob-store.ts). */
export const blobReference = z.strictObject({
  /** Where in `data` the value goes: keys and array indexes. Empty means the whole `data`. */
  path: z.array(z.union([z.string(), integer.nonnegative()])),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: integer.nonnegative(),
  /** The blob holds JSON text to parse (a whole `data`), not a string value. */
  json: z.literal(true).optional(),
})
export type BlobReference = z.infer<typeof blobReference>

/** One stored event: the envelope of docs/spec.md §3.1 plus references to externalized payloads. */
export const storedEnvelope = z.strictObject({
  seq: integer.nonnegative(),
  time: finite,
  type: z.string().min(1),
  data: json,
  ignorable: z.literal(true).optional(),
  blobs: z.array(blobReference).min(1).optional(),
})

/** The session header (docs/spec.md §3.1), checked after `formatVersion` (see `readHeader`). */
export const headerSchema = z.strictObject({
  id: z.string().min(1),
  formatVersion: integer.positive(),
  createdAt: finite,
  cwd: z.string().optional(),
  parent: z.strictObject({ sessionId: z.string().min(1), seq: integer.min(-1) }).optional(),
  title: z.string().optional(),
})

/** The first problem zod found, as `path: message`. */
export function describeIssue(error: z.ZodError, root: string): string {
  const issue = error.issues[0]
  if (!issue) return `${root} is invalid`
  const path = issue.path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
  return `${root}${path}: ${issue.message}`
}
