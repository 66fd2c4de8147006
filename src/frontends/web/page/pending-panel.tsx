/**
 * Every input given through the host and its fate: queued → staged → logged → how its turn
 * ended, or blocked / discarded with the reason (docs/spec.md §1.5: nothing is lost silently).
 */
import type { TrackedInput } from '../../view/inputs-model.js'

export function PendingPanel({ inputs }: { inputs: ReadonlyMap<string, TrackedInput> }) {
  const list = [...inputs.values()].slice(-12)
  if (list.length === 0) return null
  return (
    <ul class="pending" data-testid="pending">
      {list.map((input) => (
        <li key={input.id} data-id={input.id} data-status={input.status} data-kind={input.kind}>
          <span class={`state status-${input.status}`}>{input.status}</span>{' '}
          <span class="kind">{input.kind}</span>{' '}
          <span class="text">{input.text || '(continue)'}</span>
          {input.turn !== undefined && <span class="meta"> · turn {input.turn}</span>}
          {input.reason !== undefined && <span class="reason"> · {input.reason}</span>}
        </li>
      ))}
    </ul>
  )
}
