/**
 * The pending panel above the editor (issue 12 item 5): every input the person gave whose fate
 * is open (queued, staged, logged while its turn runs), and the ones that ended badly
 * (blocked with the reason, discarded, error) until the next prompt is sent.
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

export function pendingLines(inputs: InputsModel, width: number, theme: Theme): string[] {
  const shown = shownInputs(inputs)
  if (shown.length === 0) return []
  const lines: string[] = []
  const hidden = Math.max(0, shown.length - MAX_ROWS)
  if (hidden > 0) lines.push(theme.dim(`  … ${hidden} earlier`))
  for (const input of shown.slice(hidden)) {
    const kind = input.kind === 'steering' ? 'steer' : input.kind
    const status = `${input.status}${input.reason === undefined ? '' : `: ${input.reason}`}`
    const style = SHOWN_WHEN_SETTLED.has(input.status) ? theme.error : theme.dim
    const text = printable(input.text.replace(/\s+/g, ' '))
    lines.push(clip(`${theme.accent('◦')} ${kind} ${style(`[${status}]`)} ${text}`, width))
  }
  return lines
}
