/**
 * The status line (issue 12 item 7): provider/model, the session (short id), turn and step,
 * tokens of the last response and the context in use as a share of the model's window, a
 * retry countdown, and the store.
 */
import { findKnownModel } from '../../index.js'
import type { TranscriptStatus } from '../view/transcript-model.js'
import { clip } from './item-lines.js'
import type { Theme } from './theme.js'

export type StatusFacts = {
  readonly label: string
  readonly sessionId: string
  readonly store: string
  readonly status: TranscriptStatus
  /** Epoch ms when the pending retry starts (set when the retry notification came). */
  readonly retryAt?: number
  readonly now: number
  /** A short message that replaces the hints (e.g. "press Ctrl-C again to quit"). */
  readonly flash?: string
}

export function statusLine(facts: StatusFacts, width: number, theme: Theme): string {
  const { status } = facts
  const parts = [facts.label, `session ${facts.sessionId.slice(0, 8)}`]
  if (status.turn !== undefined)
    parts.push(`turn ${status.turn}${status.step === undefined ? '' : ` step ${status.step}`}`)
  parts.push(status.agent)
  const usage = status.usage
  if (usage) {
    parts.push(`${compact(usage.inputTokens)} in / ${compact(usage.outputTokens)} out`)
    const [provider, ...model] = facts.label.split('/')
    const known = findKnownModel(model.join('/'), provider)
    if (known) parts.push(`ctx ${Math.round((usage.inputTokens / known.contextWindow) * 100)}%`)
  }
  if (status.retry) {
    const seconds = Math.max(0, Math.ceil(((facts.retryAt ?? facts.now) - facts.now) / 1000))
    parts.push(
      theme.warning(`retry ${status.retry.attempt} in ${seconds}s: ${status.retry.error.message}`),
    )
  }
  parts.push(facts.store)
  const line = parts.join(' · ')
  return clip(
    facts.flash === undefined
      ? theme.dim(line)
      : `${theme.warning(facts.flash)}  ${theme.dim(line)}`,
    width,
  )
}

function compact(tokens: number): string {
  return tokens < 1000 ? String(tokens) : `${(tokens / 1000).toFixed(1)}k`
}
