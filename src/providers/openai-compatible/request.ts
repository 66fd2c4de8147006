/**
 * A `ModelRequest` as a Chat Completions request body. Verbatim: message content is copied,
 * never framed; consecutive user messages stay separate messages, in order.
 */
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionContentPart,
  ChatCompletionContentPartImage,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import {
  type AssistantBlock,
  assertNever,
  type ContentBlock,
  type ImageBlock,
  type JsonValue,
} from '../../core/index.js'
import type { ModelRequest } from '../provider.js'
import { splitParams } from '../request-params.js'

/** How this adapter writes what not every OpenAI-compatible server reads the same way. */
export type ChatDialect = {
  /** The body field that carries `params.maxTokens`. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens'
  /** Whether thinking goes back to the server as `reasoning_content` on assistant messages. */
  readonly sendReasoning: boolean
}

// Body fields the adapter owns: a request parameter of the same name is not passed through.
const RESERVED = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'max_tokens',
  'max_completion_tokens',
])

/** The streaming Chat Completions body for `request`. */
export function toChatRequest(
  request: ModelRequest,
  dialect: ChatDialect,
): ChatCompletionCreateParamsStreaming {
  const params = splitParams(request.params, RESERVED)
  const body = {
    ...params.passThrough,
    model: request.model,
    messages: toChatMessages(request, dialect),
    stream: true,
    // Without this the stream carries no token counts (a final chunk with empty `choices`).
    stream_options: { include_usage: true },
    ...(request.tools.length === 0 ? {} : { tools: request.tools.map(toChatTool) }),
    ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
    ...(params.topP === undefined ? {} : { top_p: params.topP }),
    ...(params.maxTokens === undefined ? {} : { [dialect.maxTokensField]: params.maxTokens }),
  }
  // Pass-through parameters are provider extensions the SDK's type does not list.
  return body as unknown as ChatCompletionCreateParamsStreaming
}

function toChatTool(tool: ModelRequest['tools'][number]): ChatCompletionTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as Record<string, unknown>,
    },
  }
}

/** The messages of the body: the system prompt, then the transcript in order. */
export function toChatMessages(
  request: ModelRequest,
  dialect: ChatDialect,
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = []
  if (request.system !== '') out.push({ role: 'system', content: request.system })
  // Tool messages carry only text. Images from a run of tool results follow the run as one user
  // message of images (no text added), since nothing may stand between tool messages.
  let toolImages: ChatCompletionContentPartImage[] = []
  const flushToolImages = () => {
    if (toolImages.length > 0) out.push({ role: 'user', content: toolImages })
    toolImages = []
  }
  for (const message of request.messages) {
    if (message.role !== 'tool') flushToolImages()
    switch (message.role) {
      case 'user':
        out.push({ role: 'user', content: toUserContent(message.content) })
        break
      case 'assistant':
        out.push(toAssistantMessage(message.content, dialect))
        break
      case 'tool':
        out.push({ role: 'tool', tool_call_id: message.callId, content: joinText(message.content) })
        for (const block of message.content)
          if (block.type === 'image') toolImages.push(toImagePart(block))
        break
      default:
        assertNever(message, 'message role')
    }
  }
  flushToolImages()
  return out
}

/**
 * Text-only content goes as one string: several servers (DeepSeek among them) reject the array
 * form. The text blocks are joined with nothing between them, so nothing is added.
 */
function toUserContent(content: readonly ContentBlock[]): string | ChatCompletionContentPart[] {
  if (content.every((block) => block.type === 'text')) return joinText(content)
  return content.map((block) =>
    block.type === 'text' ? { type: 'text', text: block.text } : toImagePart(block),
  )
}

function toImagePart(block: ImageBlock): ChatCompletionContentPartImage {
  return { type: 'image_url', image_url: { url: `data:${block.mediaType};base64,${block.data}` } }
}

function toAssistantMessage(
  content: readonly AssistantBlock[],
  dialect: ChatDialect,
): ChatCompletionAssistantMessageParam {
  const text: string[] = []
  const thinking: string[] = []
  const toolCalls: ChatCompletionMessageToolCall[] = []
  for (const block of content) {
    switch (block.type) {
      case 'text':
        text.push(block.text)
        break
      case 'thinking':
        thinking.push(block.text)
        break
      case 'tool-call':
        toolCalls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: argumentsText(block.args) },
        })
        break
      default:
        assertNever(block, 'assistant block')
    }
  }
  const reasoning = thinking.join('')
  return {
    role: 'assistant',
    // Servers require content unless there are tool calls; an empty string says "no text".
    content: text.length > 0 ? text.join('') : toolCalls.length > 0 ? null : '',
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    ...(dialect.sendReasoning && reasoning !== '' ? { reasoning_content: reasoning } : {}),
  }
}

/** Arguments the model sent that were not JSON are kept as a string and go back as written. */
function argumentsText(args: JsonValue): string {
  return typeof args === 'string' ? args : JSON.stringify(args)
}

function joinText(content: readonly ContentBlock[]): string {
  let text = ''
  for (const block of content) if (block.type === 'text') text += block.text
  return text
}
