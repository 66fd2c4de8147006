/**
 * The pending panel above the editor (issue 12 item 5): every input the person gave whose fate
 * is open (queued, staged, logged while its turn runs), and the ones that ended badly
 * (blocked with the reason, discarded, error) or were withdrawn, until the next prompt is sent.
 * Rows that can still be withdrawn are numbered (`/withdraw n`); when the panel has the focus
 * (Shift+Tab or Alt+Up), one of them is selected (docs/decisions/0082).
 */
import type { InputsModel, TrackedInput } from '../view/inputs-model.js'
import { clip, printable } from './item-lines.js'
import type { Theme } from './theme.js'

/** At most this many rows; older items collapse into a count. */
const MAX_ROWS = 6

const SHOWN_WHEN_SETTLED: ReadonlySet<TrackedInput['status']> = new Set([
  'blocked',
  'discarded',
  'error',
])

/** The inputs the panel shows, oldest first. */
export function shownInputs(inputs: InputsModel): TrackedInput[] {
  return inputs.all.filter(
    (input) => inputs.open.includes(input) || SHOWN_WHEN_SETTLED.has(input.status),
  )
}

/**
 * The shown inputs `agent.withdraw` can still take back, oldest first: queued prompts and
 * staged steers and contexts (a `continue()` is not withdrawable, docs/decisions/0072).
 */
export function withdrawableInputs(inputs: InputsModel): TrackedInput[] {
  return shownInputs(inputs).filter(
    (input) =>
      (input.status === 'queued' || input.status === 'staged') && input.kind !== 'continue',
  )
}

export const isWithdrawn = (input: Pick<TrackedInput, 'status' | 'reason'>): boolean =>
  input.status === 'discarded' && input.reason === 'withdrawn'

/** A bracketed status for a row: `[queued]`, `[blocked: reason]`, `[withdrawn]`. */
function statusLabel(input: TrackedInput): string {
  if (isWithdrawn(input)) return 'withdrawn'
  return `${input.status}${input.reason === undefined ? '' : `: ${input.reason}`}`
}

export const PANEL_HINT = '↑/↓ choose · x/Del withdraw · Enter withdraw and edit · Esc back'

export function pendingLines(
  inputs: InputsModel,
  width: number,
  theme: Theme,
  selectedId?: string,
): string[] {
  const shown = shownInputs(inputs)
  if (shown.length === 0) return []
  const numbers = new Map(withdrawableInputs(inputs).map((input, index) => [input.id, index + 1]))
  const lines: string[] = []
  // Keep the selected row on screen even when it is among the older, collapsed ones.
  const selectedAt = shown.findIndex((input) => input.id === selectedId)
  const hidden = Math.max(
    0,
    Math.min(shown.length - MAX_ROWS, selectedAt === -1 ? Number.POSITIVE_INFINITY : selectedAt),
  )
  if (hidden > 0) lines.push(theme.dim(`  … ${hidden} earlier`))
  for (const input of shown.slice(hidden, hidden + MAX_ROWS)) {
    const kind = input.kind === 'steering' ? 'steer' : input.kind
    const number = numbers.get(input.id)
    const style = isWithdrawn(input)
      ? theme.dim
      : SHOWN_WHEN_SETTLED.has(input.status)
        ? theme.error
        : theme.dim
    const text = printable(input.text.replace(/\s+/g, ' '))
    const isSelected = input.id === selectedId
    const marker = isSelected ? theme.accent('›') : theme.accent('◦')
    const row = `${marker} ${number === undefined ? '' : `${number}. `}${kind} ${style(`[${statusLabel(input)}]`)} ${text}`
    lines.push(clip(isSelected ? theme.inverse(row) : row, width))
  }
  const later = shown.length - hidden - MAX_ROWS
  if (later > 0) lines.push(theme.dim(`  … ${later} later`))
  if (selectedId !== undefined)
    lines.push(
      clip(
        theme.dim(`  ${numbers.size > 0 ? PANEL_HINT : 'nothing left to withdraw · Esc back'}`),
        width,
      ),
    )
  return lines
}
