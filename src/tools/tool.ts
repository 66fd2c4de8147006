/**
 * The tool interface (docs/spec.md §7). A tool validates the model's arguments itself, so the agent
 * can log an error result that tells the model what to fix.
 */
import type {
  ContentBlock,
  Delivery,
  JsonObject,
  JsonValue,
  SendOptions,
  Session,
  UserMessageData,
} from '../core/index.js'

/** What a tool returns: text, content blocks, or content with an error flag and meta. */
export type ToolOutput =
  | string
  | readonly ContentBlock[]
  | {
      readonly content: readonly ContentBlock[]
      readonly isError?: boolean
      readonly meta?: JsonValue
    }

/** The parts of the agent a running tool may call (the full agent satisfies it). */
export interface ToolAgent {
  send(input: string | UserMessageData, options?: SendOptions): Delivery
  steer(input: string | UserMessageData): Delivery
  inject(context: UserMessageData): Delivery
}

/** Given to `execute`: the call's signal, identity and ways to report back. */
export type ToolContext = {
  /** Aborted when the turn is canceled or the agent disposed. */
  readonly signal: AbortSignal
  readonly callId: string
  readonly cwd: string
  readonly session: Session
  readonly agent: ToolAgent
  /** Reports progress live (not logged). */
  update(progress: JsonValue): void
  /** Ends the turn after this batch's results instead of asking the model again. */
  concludeTurn(): void
}

/** The outcome of validating the model's arguments. */
export type ParsedArguments<Args> =
  | { readonly ok: true; readonly args: Args }
  | { readonly ok: false; readonly message: string }

/** A tool the agent can run. */
export interface Tool<Args = unknown> {
  readonly name: string
  readonly description: string
  /** JSON Schema of the arguments, as sent to the model. */
  readonly parameters: JsonObject
  /** `parallel` (default) tools of one batch run together; `exclusive` ones run alone. */
  readonly concurrency: 'parallel' | 'exclusive'
  /** Validates arguments from the model; the failure message names the field and what was expected. */
  parse(args: unknown): ParsedArguments<Args>
  execute(args: Args, context: ToolContext): ToolOutput | Promise<ToolOutput>
}
