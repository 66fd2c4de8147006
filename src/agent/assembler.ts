/**
 * Assembles one streamed model response into assistant content: consecutive deltas of one
 * kind form a block, a thinking signature closes its block, tool calls arrive whole.
 */
import type { AssistantBlock, StopReason, Usage } from '../core/index.js'
import type { StreamPart } from '../providers/provider.js'

type Builder =
  | { kind: 'text'; pieces: string[] }
  | { kind: 'thinking'; pieces: string[]; signature?: string }
  | { kind: 'tool-call'; block: AssistantBlock }

/** A delta as reported live: which block it extends. */
export type AssembledDelta = {
  readonly block: number
  readonly kind: 'text' | 'thinking'
  readonly text: string
}

/** The usage of a response that reported none (shared: usage is replaced, never changed). */
const NO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 })

export class ResponseAssembler {
  // Room for two blocks made up front: an array grown by push starts at 16 slots, and most
  // responses have one or two blocks (bench B5+). `size` counts the blocks in it.
  private readonly builders: Builder[] = new Array(2)
  private size = 0
  /** How many tool calls the response made so far. */
  private calls = 0
  usage: Usage = NO_USAGE
  stopReason: StopReason | undefined

  /**
   * Takes a delta, tool call or usage part; returns the delta to report live, if any and if
   * `isHeard` (nobody listening: no delta object is made).
   */
  add(
    part: Exclude<StreamPart, { type: 'end' } | { type: 'error' }>,
    isHeard = true,
  ): AssembledDelta | undefined {
    switch (part.type) {
      case 'text-delta':
        return this.appendText('text', part.text, isHeard)
      case 'thinking-delta': {
        const delta = this.appendText('thinking', part.text, isHeard)
        if (part.signature !== undefined) {
          const last = this.last()
          if (last?.kind === 'thinking') last.signature = part.signature
        }
        return delta
      }
      case 'tool-call': {
        // Ids must be unique within a message for results to pair; providers rarely repeat one.
        let id = part.id === '' ? `call_${this.size + 1}` : part.id
        while (this.hasCall(id)) id = `${id}_${this.calls + 1}`
        this.calls++
        this.builders[this.size++] = {
          kind: 'tool-call',
          block: { type: 'tool-call', id, name: part.name, args: part.args },
        }
        return undefined
      }
      case 'usage':
        this.usage = part.usage
        return undefined
    }
  }

  /** Whether a tool call with this id was taken (a response makes a few: no set per response). */
  private hasCall(id: string): boolean {
    if (this.calls === 0) return false
    for (let index = 0; index < this.size; index++) {
      const builder = this.builders[index] as Builder
      if (
        builder.kind === 'tool-call' &&
        builder.block.type === 'tool-call' &&
        builder.block.id === id
      )
        return true
    }
    return false
  }

  private last(): Builder | undefined {
    return this.size === 0 ? undefined : this.builders[this.size - 1]
  }

  private appendText(
    kind: 'text' | 'thinking',
    text: string,
    isHeard: boolean,
  ): AssembledDelta | undefined {
    const last = this.last()
    // A signed thinking block is complete: the next thinking delta starts a new block.
    const extends_ =
      last?.kind === kind && !(last.kind === 'thinking' && last.signature !== undefined)
    if (!extends_)
      this.builders[this.size++] = kind === 'text' ? { kind, pieces: [] } : { kind, pieces: [] }
    const builder = this.last() as { pieces: string[] }
    if (text !== '') builder.pieces.push(text)
    return text === '' || !isHeard ? undefined : { block: this.size - 1, kind, text }
  }

  /** The full content, in stream order. */
  content(): AssistantBlock[] {
    // Sized once (an array grown by push starts at 16 slots): trimmed below if a block is empty.
    const blocks: AssistantBlock[] = new Array(this.size)
    let count = 0
    for (let index = 0; index < this.size; index++) {
      const builder = this.builders[index] as Builder
      switch (builder.kind) {
        case 'text': {
          const text = builder.pieces.join('')
          if (text !== '') blocks[count++] = { type: 'text', text }
          break
        }
        case 'thinking': {
          const text = builder.pieces.join('')
          if (text !== '' || builder.signature !== undefined) {
            blocks[count++] =
              builder.signature === undefined
                ? { type: 'thinking', text }
                : { type: 'thinking', text, signature: builder.signature }
          }
          break
        }
        case 'tool-call':
          blocks[count++] = builder.block
          break
      }
    }
    blocks.length = count
    return blocks
  }

  /** What is kept of a response cut short: its text blocks only (no unsigned thinking, no calls). */
  partialContent(): AssistantBlock[] {
    return this.content().filter((block) => block.type === 'text')
  }
}
