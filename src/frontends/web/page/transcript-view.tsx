/**
 * The transcript, item by item as the shared model folds it: prompts, injected context folded
 * and labelled by its source, steering where it joined, streaming text with folded thinking,
 * tool cards with diffs, compaction dividers and turn boundaries. Items are compared by
 * identity (the model replaces an item when it changes), and only the latest ones are drawn
 * until the person asks for earlier ones.
 */
import { memo } from 'preact/compat'
import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { JsonObject, JsonValue, TurnEndReason } from '../../../index.js'
import type { TranscriptItem } from '../../view/transcript-model.js'

/** Items drawn at first; older ones appear a page at a time. */
const PAGE = 200

export function TranscriptView({
  items,
  version,
}: {
  items: readonly TranscriptItem[]
  version: number
}) {
  const [shown, setShown] = useState(PAGE)
  const scroller = useRef<HTMLDivElement>(null)
  const isPinned = useRef(true)
  const start = Math.max(0, items.length - shown)
  useLayoutEffect(() => {
    const element = scroller.current
    if (element && isPinned.current) element.scrollTop = element.scrollHeight
  }, [version, items.length])
  return (
    <div
      class="transcript"
      data-testid="transcript"
      ref={scroller}
      onScroll={(event) => {
        const element = event.currentTarget
        isPinned.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40
      }}
    >
      {start > 0 && (
        <button type="button" class="earlier" onClick={() => setShown(shown + PAGE)}>
          Show {Math.min(PAGE, start)} earlier of {start}
        </button>
      )}
      {items.slice(start).map((item) => (
        <Item key={item.key} item={item} />
      ))}
    </div>
  )
}

const Item = memo(function Item({ item }: { item: TranscriptItem }) {
  switch (item.kind) {
    case 'user':
      if (item.role === 'prompt')
        return (
          <div class="message prompt" data-kind="prompt" data-seq={item.seq}>
            <div class="who">you</div>
            <div class="text">{item.text}</div>
            {item.images > 0 && <div class="meta">{item.images} image(s)</div>}
          </div>
        )
      return (
        <details class={`context ${item.role}`} data-kind="context" data-label={item.label}>
          <summary>
            <span class="chip">{item.role}</span> <span class="label">{item.label}</span>{' '}
            <span class="meta">
              {item.text.length} chars{item.turn === undefined ? ' · between turns' : ''}
            </span>
          </summary>
          <pre class="text">{item.text}</pre>
        </details>
      )
    case 'steering':
      return (
        <div class="message steering" data-kind="steering" data-turn={item.turn}>
          <div class="who">
            steer · turn {item.turn}, before step {item.beforeStep}
            {item.label === 'user' ? '' : ` · ${item.label}`}
          </div>
          <div class="text">{item.text}</div>
        </div>
      )
    case 'assistant':
      // A message that only called tools: its tool cards follow.
      if (item.text === '' && item.thinking === '' && !item.isStreaming && !item.isInterrupted)
        return null
      return (
        <div
          class={`message assistant${item.isStreaming ? ' streaming' : ''}`}
          data-kind="assistant"
          data-streaming={item.isStreaming ? 'true' : 'false'}
        >
          {item.thinking !== '' && (
            <details class="thinking">
              <summary>thinking</summary>
              <pre>{item.thinking}</pre>
            </details>
          )}
          <div class="text">{item.text}</div>
          {item.isInterrupted && <div class="meta">interrupted</div>}
        </div>
      )
    case 'tool':
      return <ToolCard item={item} />
    case 'turn-start':
      return (
        <div class="divider turn" data-kind="turn-start" data-turn={item.turn}>
          turn {item.turn}
          {item.trigger === 'continue' ? ' (continue)' : ''}
        </div>
      )
    case 'turn-end':
      return (
        <div
          class={`turn-end reason-${item.reason.kind}`}
          data-kind="turn-end"
          data-turn={item.turn}
        >
          turn {item.turn} {describeEnd(item.reason)}
        </div>
      )
    case 'compaction':
      return (
        <details class="divider compaction" data-kind="compaction">
          <summary>
            compacted ({item.reason}): {item.tokensBefore} → {item.tokensAfter ?? '?'} tokens
          </summary>
          <pre>{item.summary}</pre>
        </details>
      )
    case 'extension':
      return (
        <details class="extension" data-kind="extension">
          <summary>{item.type}</summary>
          <pre>{JSON.stringify(item.data, null, 2)}</pre>
        </details>
      )
  }
})

function ToolCard({ item }: { item: Extract<TranscriptItem, { kind: 'tool' }> }) {
  const diff = diffOf(item.meta)
  return (
    <details class={`tool status-${item.status}`} data-kind="tool" data-status={item.status}>
      <summary>
        <span class="name">{item.name}</span> <span class="args">{briefArgs(item.args)}</span>{' '}
        <span class="chip">{item.status}</span>
        {item.durationMs !== undefined && <span class="meta"> {item.durationMs} ms</span>}
      </summary>
      <pre class="args-full">{JSON.stringify(item.args, null, 2)}</pre>
      {diff !== undefined && (
        <pre class="diff">
          {diff.split('\n').map((line, index) => (
            <div
              key={index}
              class={
                line.startsWith('+')
                  ? 'add'
                  : line.startsWith('-')
                    ? 'del'
                    : line.startsWith('@@')
                      ? 'hunk'
                      : ''
              }
            >
              {line}
            </div>
          ))}
        </pre>
      )}
      {item.progress !== undefined && <pre class="progress">{JSON.stringify(item.progress)}</pre>}
      {item.output !== undefined && <pre class="output">{clip(item.output)}</pre>}
    </details>
  )
}

function describeEnd(reason: TurnEndReason): string {
  switch (reason.kind) {
    case 'completed':
      return 'completed'
    case 'error':
      return `ended with an error: ${String(reason.message)}`
    case 'canceled':
      return 'canceled'
    default:
      return `ended: ${reason.kind}`
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function briefArgs(args: JsonValue): string {
  if (!isObject(args)) return JSON.stringify(args)
  const first = args.command ?? args.path ?? args.pattern ?? Object.values(args)[0]
  const text = typeof first === 'string' ? first : JSON.stringify(first ?? '')
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

function diffOf(meta: JsonValue | undefined): string | undefined {
  if (!isObject(meta)) return undefined
  return typeof meta.diff === 'string' ? meta.diff : undefined
}

function clip(text: string): string {
  return text.length > 20_000
    ? `${text.slice(0, 20_000)}\n… (${text.length - 20_000} more characters)`
    : text
}
