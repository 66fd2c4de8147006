/**
 * Content across the boundary: what an editor sends (ACP content blocks) becomes rudder's
 * user content and contexts, and rudder's content blocks become ACP blocks for updates.
 *
 * A prompt's text, images and resource links are the person's message, verbatim (a link as
 * text naming it). Each embedded resource becomes its own context, framed by this front end
 * and recorded with `source { kind: 'plugin', name: 'acp' }`, so the log tells what the person
 * typed from what the editor attached (docs/spec.md §2: a producer frames its own content).
 */
import type * as acp from '@agentclientprotocol/sdk/unstable'
import { z } from 'zod'
import type { ContentBlock, MessageSource, UserMessageData } from '../../index.js'
import { invalidParams } from './errors.js'

/** The source of every context this front end builds from what an editor attached. */
export const ACP_SOURCE: MessageSource = Object.freeze({ kind: 'plugin', name: 'acp' })

/**
 * The ACP content blocks rudder reads, for the extension methods whose params the SDK does not
 * check (`_session/steering`, `_rudder/inject`). Unknown fields pass; wrong ones are -32602.
 */
export const contentBlockSchema: z.ZodType<acp.ContentBlock> = z.union([
  z.object({ type: z.literal('text'), text: z.string() }).loose(),
  z.object({ type: z.literal('image'), data: z.string(), mimeType: z.string() }).loose(),
  z.object({ type: z.literal('audio'), data: z.string(), mimeType: z.string() }).loose(),
  z
    .object({
      type: z.literal('resource_link'),
      uri: z.string(),
      name: z.string(),
      title: z.string().nullish(),
    })
    .loose(),
  z
    .object({
      type: z.literal('resource'),
      resource: z.union([
        z.object({ uri: z.string(), text: z.string(), mimeType: z.string().nullish() }).loose(),
        z.object({ uri: z.string(), blob: z.string(), mimeType: z.string().nullish() }).loose(),
      ]),
    })
    .loose(),
]) as unknown as z.ZodType<acp.ContentBlock>

/** A prompt as rudder takes it: the person's content, then one context per embedded resource. */
export type ConvertedPrompt = {
  readonly content: ContentBlock[]
  readonly contexts: UserMessageData[]
}

/**
 * Converts a prompt's blocks. Throws -32602 for a block rudder cannot give a model (audio, a
 * binary resource that is not an image), naming the block and what to send instead.
 */
export function convertPrompt(blocks: readonly acp.ContentBlock[]): ConvertedPrompt {
  const content: ContentBlock[] = []
  const contexts: UserMessageData[] = []
  const attached: ContentBlock[] = []
  blocks.forEach((block, index) => {
    const converted = convertBlock(block, index)
    if (converted.kind === 'direct') content.push(converted.block)
    else {
      contexts.push(converted.context)
      attached.push(converted.reference)
    }
  })
  // A prompt of attachments alone still says, in the person's message, what was attached.
  return { content: content.length === 0 ? attached : content, contexts }
}

/**
 * Converts the blocks of a context (`_rudder/inject`): every block goes into the one message
 * in order, an embedded resource as its framed text.
 */
export function convertContext(blocks: readonly acp.ContentBlock[]): ContentBlock[] {
  return blocks.flatMap((block, index) => {
    const converted = convertBlock(block, index)
    return converted.kind === 'direct' ? [converted.block] : [...converted.context.content]
  })
}

type ConvertedBlock =
  | { readonly kind: 'direct'; readonly block: ContentBlock }
  | {
      readonly kind: 'resource'
      readonly context: UserMessageData
      readonly reference: ContentBlock
    }

function convertBlock(block: acp.ContentBlock, index: number): ConvertedBlock {
  const where = `prompt[${index}]`
  switch (block.type) {
    case 'text':
      return { kind: 'direct', block: { type: 'text', text: block.text } }
    case 'image':
      return {
        kind: 'direct',
        block: { type: 'image', mediaType: block.mimeType, data: block.data },
      }
    case 'resource_link':
      return {
        kind: 'direct',
        block: { type: 'text', text: linkText(block.title ?? block.name, block.uri) },
      }
    case 'resource':
      return {
        kind: 'resource',
        context: resourceContext(block.resource, where),
        reference: { type: 'text', text: linkText(nameOf(block.resource.uri), block.resource.uri) },
      }
    case 'audio':
      throw invalidParams(
        `${where} is an audio block; rudder's models take text and images, so send a transcript as a text block instead`,
        { index },
      )
    default:
      throw invalidParams(
        `${where} has an unknown block type ${JSON.stringify((block as { type: unknown }).type)}; rudder takes text, image, resource_link and resource blocks`,
        { index },
      )
  }
}

/** rudder content (a message or a tool result) as ACP blocks. */
export function toAcpBlock(block: ContentBlock): acp.ContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text }
    case 'image':
      return { type: 'image', mimeType: block.mediaType, data: block.data }
  }
}

function linkText(name: string, uri: string): string {
  return `[@${name}](${uri})`
}

function nameOf(uri: string): string {
  const last = uri
    .split(/[\\/]/)
    .filter((part) => part !== '')
    .pop()
  return last ?? uri
}

function resourceContext(resource: acp.EmbeddedResourceResource, where: string): UserMessageData {
  const mimeType = resource.mimeType ?? undefined
  const attributes = `uri="${escapeAttribute(resource.uri)}"${mimeType ? ` mime-type="${escapeAttribute(mimeType)}"` : ''}`
  const meta = { uri: resource.uri, ...(mimeType ? { mimeType } : {}) }
  if ('text' in resource) {
    const body = resource.text.endsWith('\n') ? resource.text : `${resource.text}\n`
    return {
      content: [{ type: 'text', text: `<resource ${attributes}>\n${body}</resource>` }],
      source: ACP_SOURCE,
      meta,
    }
  }
  if (mimeType?.startsWith('image/')) {
    return {
      content: [
        { type: 'text', text: `<resource ${attributes}>` },
        { type: 'image', mediaType: mimeType, data: resource.blob },
        { type: 'text', text: '</resource>' },
      ],
      source: ACP_SOURCE,
      meta,
    }
  }
  throw invalidParams(
    `${where} embeds binary data (${mimeType ?? 'no mime type'}) from ${resource.uri}; rudder's models take text and images, so attach it as a resource_link or as text`,
  )
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}
