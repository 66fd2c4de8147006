/**
 * A `ModelRequest` as an Anthropic Messages request body. The API wants alternating roles, so
 * consecutive user-role messages (prompts, contexts, tool results) become one user message with
 * their blocks in order and nothing added between them. Prompt caching marks the system prompt
 * and the last message, which every later request of the session repeats unchanged.
 */
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages'
import {
  type AssistantBlock,
  assertNever,
  type ContentBlock,
  type ImageBlock,
  type JsonValue,
  type Message,
} from '../../core/index.js'
import type { ModelRequest } from '../provider.js'
import { splitParams } from '../request-params.js'

/**
 * Prefix of a thinking block's signature that holds a `redacted_thinking` block's data. Redacted
 * thinking has no text, only opaque data that must go back unchanged; rudder keeps it as a
 * thinking block with empty text and this signature.
 */
export const REDACTED_THINKING_PREFIX = 'redacted_thinking:'

// Body fields the adapter owns: a request parameter of the same name is not passed through.
const RESERVED = new Set(['model', 'messages', 'system', 'stream', 'tools', 'max_tokens'])

const EPHEMERAL = { type: 'ephemeral' } as const

/** The streaming Messages body for `request`; `defaultMaxTokens` when params name none. */
export function toMessagesRequest(
  request: ModelRequest,
  defaultMaxTokens: number,
): MessageCreateParamsStreaming {
  const params = splitParams(request.params, RESERVED)
  const tools = request.tools.map(toTool)
  const system: TextBlockParam[] =
    request.system === '' ? [] : [{ type: 'text', text: request.system, cache_control: EPHEMERAL }]
  // Tools come before the system prompt in the cached prefix; with no system prompt the
  // breakpoint goes on the last tool instead.
  const lastTool = tools.at(-1)
  if (system.length === 0 && lastTool)
    tools[tools.length - 1] = { ...lastTool, cache_control: EPHEMERAL }
  const body = {
    ...params.passThrough,
    model: request.model,
    max_tokens: params.maxTokens ?? defaultMaxTokens,
    messages: markLastMessageForCaching(toAnthropicMessages(request.messages)),
    stream: true,
    ...(system.length === 0 ? {} : { system }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
    ...(params.topP === undefined ? {} : { top_p: params.topP }),
  }
  // Pass-through parameters (`thinking`, `top_k`, …) are checked by the API, not by this type.
  return body as MessageCreateParamsStreaming
}

function toTool(tool: ModelRequest['tools'][number]): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters as unknown as Tool.InputSchema,
  }
}

/** The transcript as alternating messages (see the module comment). */
export function toAnthropicMessages(messages: readonly Message[]): MessageParam[] {
  const out: MessageParam[] = []
  const appendUser = (blocks: ContentBlockParam[]) => {
    // The API rejects empty content; a message of empty texts adds nothing.
    if (blocks.length === 0) return
    const last = out.at(-1)
    if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(...blocks)
    else out.push({ role: 'user', content: blocks })
  }
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        appendUser(message.content.flatMap(toUserBlocks))
        break
      case 'tool':
        appendUser([toToolResult(message)])
        break
      case 'assistant': {
        const content = message.content.flatMap(toAssistantBlocks)
        // Only unsigned thinking (which the API cannot take back) leaves nothing to send.
        if (content.length > 0) out.push({ role: 'assistant', content })
        break
      }
      default:
        assertNever(message, 'message role')
    }
  }
  return out
}

/** The API rejects empty text blocks; an empty text adds nothing, so it is left out. */
function toUserBlocks(block: ContentBlock): (TextBlockParam | ImageBlockParam)[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text }]
    case 'image':
      return [toImage(block)]
    default:
      return assertNever(block, 'content block')
  }
}

function toImage(block: ImageBlock): ImageBlockParam {
  return {
    type: 'image',
    source: {
      type: 'base64',
      // The API checks the media type; rudder does not narrow what callers may send.
      media_type: block.mediaType as 'image/png',
      data: block.data,
    },
  }
}

function toToolResult(message: Extract<Message, { role: 'tool' }>): ToolResultBlockParam {
  const content = message.content.flatMap(toUserBlocks)
  return {
    type: 'tool_result',
    tool_use_id: message.callId,
    ...(content.length === 0 ? {} : { content }),
    ...(message.isError ? { is_error: true } : {}),
  }
}

/**
 * Thinking goes back with its signature, unchanged; thinking without one (cut off by a cancel,
 * or written by another provider) cannot be verified by the API and is not sent.
 */
function toAssistantBlocks(block: AssistantBlock): ContentBlockParam[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text }]
    case 'thinking':
      if (block.signature === undefined || block.signature === '') return []
      if (block.signature.startsWith(REDACTED_THINKING_PREFIX))
        return [
          {
            type: 'redacted_thinking',
            data: block.signature.slice(REDACTED_THINKING_PREFIX.length),
          },
        ]
      return [{ type: 'thinking', thinking: block.text, signature: block.signature }]
    case 'tool-call':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: toolInput(block.args) }]
    default:
      return assertNever(block, 'assistant block')
  }
}

/**
 * `input` must be an object. Arguments that are not (text another provider's model wrote that
 * was not JSON) go as `{}`; their tool result already told the model what was wrong.
 */
function toolInput(args: JsonValue): Record<string, unknown> {
  return typeof args === 'object' && args !== null && !Array.isArray(args) ? { ...args } : {}
}

/**
 * Puts a cache breakpoint on the last block of the last message that can carry one (thinking
 * blocks cannot). The log is append-only, so this whole prefix is the start of the next request
 * too: the next request reads it from the cache and writes only what was added.
 */
function markLastMessageForCaching(messages: MessageParam[]): MessageParam[] {
  const last = messages.at(-1)
  if (!last || !Array.isArray(last.content)) return messages
  for (let index = last.content.length - 1; index >= 0; index--) {
    const block = last.content[index]!
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue
    last.content[index] = { ...block, cache_control: EPHEMERAL } as ContentBlockParam
    break
  }
  return messages
}
