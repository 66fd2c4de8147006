/**
 * Compaction (docs/spec.md §10): a model call summarizes history before a cut, and a `compaction`
 * event makes the projection `[summary] + events from firstKeptSeq`. The full history stays in
 * the log; the summarizing request is recorded in the event.
 */
import {
  type CompactionReason,
  type ContentBlock,
  type CoreEvent,
  createProjector,
  isCoreEvent,
  type Message,
  messageOf,
  type SessionEvent,
} from '../core/index.js'
import type { ModelRequest, Provider } from '../providers/provider.js'
import { newMessageId } from './inputs.js'
import { type RetryPolicy, retryDelayMs, sleep } from './retry.js'

export type CompactionOptions = {
  /** The model's context window in tokens. Automatic compaction needs it. */
  readonly contextWindow?: number
  /** Compact before a step once the prompt passes `threshold` of the window (default 0.8). */
  readonly auto?: boolean | { readonly threshold?: number }
  /** Recent history kept verbatim, in estimated tokens (default 20 000). */
  readonly keepRecentTokens?: number
}

export type CompactResult =
  | {
      readonly status: 'compacted'
      readonly seq: number
      readonly tokensBefore: number
      readonly tokensAfter: number
    }
  | { readonly status: 'skipped'; readonly reason: string }
  | {
      readonly status: 'error'
      readonly error: { readonly code: string; readonly message: string }
    }
  | { readonly status: 'discarded'; readonly reason: 'canceled' | 'disposed' }

export type CompactionSettings = {
  readonly contextWindow: number | undefined
  readonly autoThreshold: number | undefined
  readonly keepRecentTokens: number
}

export function compactionSettings(options: CompactionOptions = {}): CompactionSettings {
  const auto = options.auto ?? true
  const threshold = auto === false ? undefined : auto === true ? 0.8 : (auto.threshold ?? 0.8)
  return {
    contextWindow: options.contextWindow,
    autoThreshold: options.contextWindow === undefined ? undefined : threshold,
    keepRecentTokens: options.keepRecentTokens ?? 20_000,
  }
}

/** A deterministic, provider-neutral token estimate: four characters a token. */
export function estimateTokens(messages: readonly Message[], system = ''): number {
  let characters = system.length
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'text' || block.type === 'thinking') characters += block.text.length
      else if (block.type === 'tool-call')
        characters += block.name.length + JSON.stringify(block.args).length
      else characters += 1000 // an image: a flat guess, not its base64 size
    }
  }
  return Math.ceil(characters / 4)
}

const SUMMARY_SYSTEM =
  'You write the summary that replaces the earlier part of a conversation between a user and a coding agent. Keep what the agent needs to continue: the goal, decisions made, files and commands involved, what was tried and what worked or failed, and open questions. Be concise and factual.'

export type CompactionRun = {
  /** The session's resident events (`Session.residentEvents`), from seq `fromSeq`. */
  readonly events: readonly SessionEvent[]
  readonly fromSeq: number
  /** The transcript now (`Session.messages()`). */
  readonly messages: readonly Message[]
  readonly provider: Provider
  readonly model: string
  readonly retry: RetryPolicy
  readonly settings: CompactionSettings
  readonly signal: AbortSignal
  readonly reason: CompactionReason
  readonly instructions?: string
  /** Told before each attempt of the summarizing request. */
  onAttempt(attempt: number): void
  /** Appends the compaction event; returns its seq. */
  append(data: CoreEvent<'compaction'>['data']): number
}

/**
 * Summarizes history before a cut that keeps about `keepRecentTokens` of recent events
 * (or, for `overflow`, at most half of that) and appends the compaction event.
 */
export async function compact(run: CompactionRun): Promise<CompactResult> {
  const log = residentLog(run.events, run.fromSeq)
  const tokensBefore = estimateTokens(run.messages)
  const keep =
    run.reason === 'overflow'
      ? Math.floor(run.settings.keepRecentTokens / 2)
      : run.settings.keepRecentTokens
  const cut = chooseCut(log, keep)
  if (cut === undefined)
    return {
      status: 'skipped',
      reason: 'nothing to compact: the history since the last compaction fits what is kept',
    }
  const toSummarize = log.project(log.floor() - 1, cut)
  const instruction = `Summarize the conversation above for continuing it later.${run.instructions ? `\n\nAdditional instructions: ${run.instructions}` : ''}`
  const request: ModelRequest = {
    model: run.model,
    system: SUMMARY_SYSTEM,
    messages: [...toSummarize, { role: 'user', content: [{ type: 'text', text: instruction }] }],
    tools: [],
    params: {},
  }
  const answer = await summarize(run, request)
  if (answer.status !== 'ok') return answer.result
  const summary: ContentBlock[] = [
    { type: 'text', text: `Summary of the earlier conversation:\n\n${answer.text}` },
  ]
  const kept = log.project(cut, log.end)
  const tokensAfter = estimateTokens([{ role: 'user', content: summary }, ...kept])
  const seq = run.append({
    id: newMessageId(),
    summary,
    firstKeptSeq: cut,
    reason: run.reason,
    tokensBefore,
    tokensAfter,
    request: { model: run.model, system: SUMMARY_SYSTEM, messageCount: request.messages.length },
  })
  return { status: 'compacted', seq, tokensBefore, tokensAfter }
}

/**
 * The log as far as compaction reads it, by seq: the resident events, which hold everything
 * from the last compaction's kept events on (`Session.loadProjection`).
 */
type ResidentLog = {
  readonly start: number
  /** One past the last seq. */
  readonly end: number
  at(seq: number): SessionEvent | undefined
  /** The first seq after the last compaction (the first resident one if there is none). */
  floor(): number
  /** The projection of the log before `to`, applied from `from` (a compaction or a boundary). */
  project(from: number, to: number): readonly Message[]
}

export function residentLog(events: readonly SessionEvent[], fromSeq: number): ResidentLog {
  const at = (seq: number) => events[seq - fromSeq]
  const end = fromSeq + events.length
  return {
    start: fromSeq,
    end,
    at,
    floor() {
      for (let seq = end - 1; seq >= fromSeq; seq--)
        if (at(seq)?.type === 'compaction') return seq + 1
      return fromSeq
    },
    project(from, to) {
      const projector = createProjector(at)
      for (let seq = Math.max(from, fromSeq); seq < to; seq++) {
        const event = at(seq)
        if (event) projector.apply(event)
      }
      return projector.messages()
    },
  }
}

/**
 * The seq to keep from: the earliest boundary (a turn or step start, or a message outside a
 * step) after the last compaction whose tail fits `keepTokens`, or else the newest boundary.
 * Undefined when the cut would summarize nothing new.
 */
export function chooseCut(log: ResidentLog, keepTokens: number): number | undefined {
  const floor = log.floor()
  const boundaries: number[] = []
  let inStep = false
  for (let seq = floor; seq < log.end; seq++) {
    const event = log.at(seq)
    if (!event || !isCoreEvent(event)) continue
    if (event.type === 'step/start') {
      boundaries.push(seq)
      inStep = true
    } else if (event.type === 'step/end') inStep = false
    else if (
      event.type === 'turn/start' ||
      ((event.type === 'user/message' || event.type === 'steering/message') && !inStep)
    )
      boundaries.push(seq)
  }
  // Walk back from the newest boundary while the kept tail still fits.
  let cut: number | undefined
  for (const candidate of [...boundaries].reverse()) {
    if (estimateTokens(log.project(candidate, log.end)) > keepTokens) break
    cut = candidate
  }
  // When even the newest boundary's tail is too big, keep from it anyway: the latest message
  // or step stays verbatim rather than being folded into the summary.
  cut ??= boundaries.at(-1) ?? log.end
  let summarizesSomething = false
  for (let seq = floor; seq < cut && !summarizesSomething; seq++) {
    const event = log.at(seq)
    summarizesSomething = event !== undefined && isCoreEvent(event) && isModelVisible(event)
  }
  return summarizesSomething ? cut : undefined
}

function isModelVisible(event: CoreEvent): boolean {
  return (
    event.type === 'user/message' ||
    event.type === 'steering/message' ||
    event.type === 'assistant/message' ||
    event.type === 'tool/result'
  )
}

async function summarize(
  run: CompactionRun,
  request: ModelRequest,
): Promise<{ status: 'ok'; text: string } | { status: 'failed'; result: CompactResult }> {
  for (let attempt = 1; ; attempt++) {
    const pieces: string[] = []
    let failure:
      | { code: string; message: string; retryable: boolean; retryAfterMs?: number }
      | undefined
    let ended = false
    run.onAttempt(attempt)
    try {
      for await (const part of run.provider.stream(request, run.signal)) {
        if (part.type === 'text-delta') pieces.push(part.text)
        else if (part.type === 'error') {
          failure = part
          break
        } else if (part.type === 'end') {
          ended = true
          break
        }
      }
    } catch (error) {
      failure = { code: 'provider-threw', message: messageOf(error), retryable: false }
    }
    if (run.signal.aborted)
      return { status: 'failed', result: { status: 'discarded', reason: 'canceled' } }
    if (!failure && ended) {
      const text = pieces.join('').trim()
      if (text === '')
        return {
          status: 'failed',
          result: {
            status: 'error',
            error: {
              code: 'empty-summary',
              message: 'the model returned an empty summary; nothing was compacted',
            },
          },
        }
      return { status: 'ok', text }
    }
    failure ??= {
      code: 'stream-incomplete',
      message: `provider ${run.provider.id} ended its stream without an end part`,
      retryable: true,
    }
    if (!failure.retryable || attempt > run.retry.maxRetries)
      return {
        status: 'failed',
        result: { status: 'error', error: { code: failure.code, message: failure.message } },
      }
    await sleep(retryDelayMs(run.retry, attempt, failure.retryAfterMs), run.signal)
  }
}
