/**
 * The values of the session log (docs/spec.md §2): content blocks, message sources and the data
 * callers hand to `send`, `steer` and `inject`. Everything here is plain JSON.
 */

/** A plain JSON value: what the log can hold. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject
/** A plain JSON object. */
export type JsonObject = { readonly [key: string]: JsonValue }

export type TextBlock = { readonly type: 'text'; readonly text: string }
/** An image as base64 `data` with its media type (`image/png`, …). */
export type ImageBlock = {
  readonly type: 'image'
  readonly mediaType: string
  readonly data: string
}
/** User-side content: what prompts, contexts and tool results carry. */
export type ContentBlock = TextBlock | ImageBlock

export type ThinkingBlock = {
  readonly type: 'thinking'
  readonly text: string
  /** Opaque provider signature, sent back unchanged on later requests. */
  readonly signature?: string
}
export type ToolCallBlock = {
  readonly type: 'tool-call'
  readonly id: string
  readonly name: string
  readonly args: JsonValue
}
/** Assistant-side content. */
export type AssistantBlock = TextBlock | ThinkingBlock | ToolCallBlock

/** The names of the extension points (docs/spec.md §6). */
export type HookName =
  | 'prompt-submit'
  | 'step'
  | 'tool-pre'
  | 'tool-post'
  | 'turn-stopping'
  | 'session-start'

/**
 * Who produced a user-role message. An open union: consumers switch on `kind` and treat an
 * unknown kind as "not a person".
 */
export type MessageSource =
  | { readonly kind: 'user' }
  | { readonly kind: 'hook'; readonly hook: HookName; readonly name: string }
  | { readonly kind: 'plugin'; readonly name: string }
  | { readonly kind: 'reference'; readonly sessionId: string; readonly throughSeq: number }
  | { readonly kind: string; readonly [field: string]: JsonValue }

/** What callers hand to send / steer / inject, and what hooks return as additional contexts. */
export type UserMessageData = {
  readonly content: readonly ContentBlock[]
  readonly source: MessageSource
  readonly meta?: JsonValue
}

/** Opaque session id. */
export type SessionId = string

/** Token counts reported by a provider for one request. */
export type Usage = {
  readonly inputTokens: number
  readonly outputTokens: number
  /** Prompt tokens served from the provider's cache. */
  readonly cacheReadTokens?: number
  /** Prompt tokens written to the provider's cache. */
  readonly cacheWriteTokens?: number
  readonly reasoningTokens?: number
}

/** A tool as the model sees it: name, description and a JSON Schema for its arguments. */
export type ToolSpec = {
  readonly name: string
  readonly description: string
  readonly parameters: JsonObject
}

/** Whether a message source is a person typing through a front end. */
export function isPersonSource(source: MessageSource): boolean {
  return source.kind === 'user'
}

/** Concatenates the text blocks of some content, in order. */
export function textOf(content: readonly (ContentBlock | AssistantBlock)[]): string {
  const parts: string[] = []
  for (const block of content) if (block.type === 'text') parts.push(block.text)
  return parts.join('')
}
