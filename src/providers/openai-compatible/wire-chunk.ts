/**
 * The shape of a Chat Completions stream chunk as servers really send it: OpenAI's fields plus
 * what DeepSeek, vLLM, OpenRouter and Mistral add. Every field is optional and read defensively:
 * the chunk is parsed JSON from a server rudder does not control.
 */

/** Usage as OpenAI sends it, plus DeepSeek's cache-hit count. */
export type ChunkUsage = {
  readonly prompt_tokens?: unknown
  readonly completion_tokens?: unknown
  readonly prompt_tokens_details?: { readonly cached_tokens?: unknown } | null
  readonly completion_tokens_details?: { readonly reasoning_tokens?: unknown } | null
  /** DeepSeek reports cache hits outside `prompt_tokens_details`. */
  readonly prompt_cache_hit_tokens?: unknown
}

export type ToolCallFragment = {
  readonly index?: unknown
  readonly id?: unknown
  readonly function?: { readonly name?: unknown; readonly arguments?: unknown } | null
}

export type ChunkDelta = {
  /** A string; or, from Mistral's reasoning models, an array of typed parts. */
  readonly content?: unknown
  /** DeepSeek and older vLLM. */
  readonly reasoning_content?: unknown
  /** vLLM, OpenRouter, Ollama. */
  readonly reasoning?: unknown
  readonly tool_calls?: readonly ToolCallFragment[] | null
}

export type WireChunk = {
  readonly choices?: readonly {
    readonly index?: unknown
    readonly delta?: ChunkDelta | null
    readonly finish_reason?: string | null
  }[]
  readonly usage?: ChunkUsage | null
  /** An error sent inside a 200 stream (OpenAI, OpenRouter), possibly beside usage. */
  readonly error?: {
    readonly code?: unknown
    readonly type?: unknown
    readonly message?: unknown
  } | null
}

/** Text or thinking in a delta, in the order it arrived. */
export type ContentPart = { readonly kind: 'text-delta' | 'thinking-delta'; readonly text: string }

/**
 * The text and thinking a delta carries: reasoning fields first (they precede the answer),
 * then `content`, a string or an array of typed parts. Mistral's reasoning models send
 * `{"type":"thinking","thinking":[{"type":"text","text":"…"}]}` parts before
 * `{"type":"text","text":"…"}`; thinking given as a plain string is accepted too. Other part
 * types (references, say) carry no text the model wrote. Empty texts are left out.
 */
export function contentPartsOf(delta: ChunkDelta): ContentPart[] {
  const parts: ContentPart[] = []
  const add = (kind: ContentPart['kind'], text: unknown) => {
    if (typeof text === 'string' && text !== '') parts.push({ kind, text })
  }
  // Some servers send both fields, one of them empty; never both with text.
  const hasReasoningContent =
    typeof delta.reasoning_content === 'string' && delta.reasoning_content !== ''
  add('thinking-delta', hasReasoningContent ? delta.reasoning_content : delta.reasoning)
  if (!Array.isArray(delta.content)) {
    add('text-delta', delta.content)
    return parts
  }
  for (const part of delta.content as unknown[]) {
    if (typeof part !== 'object' || part === null) continue
    const { type, text, thinking } = part as { type?: unknown; text?: unknown; thinking?: unknown }
    if (type === 'text') add('text-delta', text)
    else if (type === 'thinking') {
      if (!Array.isArray(thinking)) add('thinking-delta', thinking)
      else
        for (const inner of thinking as unknown[])
          if (typeof inner === 'object' && inner !== null)
            add('thinking-delta', (inner as { text?: unknown }).text)
    }
  }
  return parts
}
