/**
 * The HTTP API's request bodies and query parameters, checked with zod at the boundary
 * (docs/web-api.md). Errors name the field and what was expected.
 */
import { z } from 'zod'
import {
  type ContentBlock,
  type JsonValue,
  jsonValueSchema,
  type MessageSource,
  type UserMessageData,
} from '../../index.js'

const contentBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }).strict(),
  z
    .object({
      type: z.literal('image'),
      mediaType: z.string().regex(/^image\/[a-z0-9.+-]+$/, 'expected an image media type'),
      data: z.string().min(1),
    })
    .strict(),
])

/** A message: `text`, or `content` blocks, not both. */
const messageFields = {
  text: z.string().min(1, 'the text is empty').optional(),
  content: z.array(contentBlock).min(1, 'content needs at least one block').optional(),
  meta: jsonValueSchema.optional(),
}

function oneOfTextOrContent(value: { text?: string | undefined; content?: unknown }): boolean {
  return (value.text === undefined) !== (value.content === undefined)
}
const ONE_OF = { message: 'give either "text" or "content" (not both)' }

export const messageBody = z.object(messageFields).strict().refine(oneOfTextOrContent, ONE_OF)

export const injectBody = z
  .object({
    ...messageFields,
    source: z
      .object({ kind: z.string().min(1) })
      .catchall(jsonValueSchema)
      .refine((source) => source.kind !== 'user', {
        message:
          'an injected context needs a producer that is not a person, e.g. {"kind":"plugin","name":"ci"}; use /send or /steer for a person’s message',
      }),
  })
  .strict()
  .refine(oneOfTextOrContent, ONE_OF)

export const createBody = z
  .object({ title: z.string().max(200).optional(), cwd: z.string().min(1).optional() })
  .strict()
export const forkBody = z.object({ atSeq: z.number().int().min(0).optional() }).strict()
export const cancelBody = z.object({ keepQueue: z.boolean().optional() }).strict()
export const compactBody = z.object({ instructions: z.string().optional() }).strict()
export const continueBody = z.object({}).strict()
export const approvalBody = z
  .object({
    answer: z.enum(['allow', 'deny']),
    always: z.boolean().optional(),
    reason: z.string().max(2000).optional(),
  })
  .strict()
export const approvalModeBody = z.object({ mode: z.enum(['ask', 'auto-edit', 'yolo']) }).strict()

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().optional(),
  cwd: z.string().optional(),
})
export const searchQuery = z.object({
  q: z.string().min(1, 'say what to search for with ?q='),
  limit: z.coerce.number().int().min(1).max(200).optional(),
})

/** The `UserMessageData` a message body asks for. */
export function toUserMessage(
  body: {
    readonly text?: string | undefined
    readonly content?: readonly ContentBlock[] | undefined
    readonly meta?: JsonValue | undefined
  },
  source: MessageSource = { kind: 'user' },
): UserMessageData {
  const content: ContentBlock[] =
    body.text === undefined ? [...(body.content ?? [])] : [{ type: 'text', text: body.text }]
  return { content, source, ...(body.meta === undefined ? {} : { meta: body.meta }) }
}

/** The first problem of a failed parse, as `where: what`. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'the request is invalid'
  const where = issue.path.length === 0 ? 'the body' : issue.path.map(String).join('.')
  return `${where}: ${issue.message}`
}
