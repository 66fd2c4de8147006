/**
 * A readable transcript of a session log (`rudder sessions show`). Injected context and
 * steering are marked with their source, so a reader can tell who said what.
 */
import {
  type ContentBlock,
  isCoreEvent,
  type MessageSource,
  type SessionEvent,
  type SessionHeader,
  textOf,
} from '../../index.js'

export type TranscriptOptions = {
  /** Lines of a tool result or context shown before folding (default 12). */
  readonly foldAfter?: number
}

/** Names a message's producer for a reader. */
export function sourceLabel(source: MessageSource): string {
  switch (source.kind) {
    case 'user':
      return 'user'
    case 'hook':
      return `hook ${String(source.hook)}/${String(source.name)}`
    case 'plugin':
      return `plugin ${String(source.name)}`
    case 'reference':
      return `reference ${String(source.sessionId)}@${String(source.throughSeq)}`
    default:
      return source.kind
  }
}

export function renderTranscript(
  header: SessionHeader,
  events: readonly SessionEvent[],
  options: TranscriptOptions = {},
): string {
  const foldAfter = options.foldAfter ?? 12
  const lines: string[] = []
  const created = new Date(header.createdAt).toISOString().replace('T', ' ').slice(0, 16)
  lines.push(`session ${header.id}${header.title ? ` · ${header.title}` : ''}`)
  lines.push(
    `created ${created} UTC · ${events.length} events${header.cwd ? ` · ${header.cwd}` : ''}${header.parent ? ` · forked from ${header.parent.sessionId}@${header.parent.seq}` : ''}`,
  )
  const block = (label: string, content: readonly ContentBlock[]) => {
    const text = content
      .map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType}]`))
      .join('\n')
    const body = fold(text, foldAfter)
    lines.push(
      body.includes('\n') || body.length > 60 ? `${label}:\n${indent(body)}` : `${label}: ${body}`,
    )
  }
  for (const event of events) {
    if (!isCoreEvent(event)) continue
    switch (event.type) {
      case 'user/message': {
        const person = event.data.source.kind === 'user'
        block(person ? 'you' : `[context · ${sourceLabel(event.data.source)}]`, event.data.content)
        break
      }
      case 'steering/message':
        block(`[steering · ${sourceLabel(event.data.source)}]`, event.data.content)
        break
      case 'turn/start':
        lines.push(
          '',
          `── turn ${event.data.turn}${event.data.trigger === 'continue' ? ' (continue)' : ''} ──`,
        )
        break
      case 'turn/end': {
        const reason = event.data.reason
        const detail =
          reason.kind === 'error'
            ? `: ${reason.message}`
            : reason.kind === 'canceled'
              ? ` (${reason.cause})`
              : ''
        lines.push(`── end of turn ${event.data.turn}: ${reason.kind}${detail} ──`, '')
        break
      }
      case 'assistant/message': {
        const text = textOf(event.data.content)
        if (text !== '')
          block(event.data.interrupted ? 'assistant (interrupted)' : 'assistant', [
            { type: 'text', text },
          ])
        for (const part of event.data.content)
          if (part.type === 'tool-call') lines.push(`  → ${part.name} ${JSON.stringify(part.args)}`)
        break
      }
      case 'tool/result':
        block(`  ← ${event.data.name}${event.data.isError ? ' (error)' : ''}`, event.data.content)
        break
      case 'compaction':
        block(
          `[compaction · ${event.data.reason} · keeps from seq ${event.data.firstKeptSeq}]`,
          event.data.summary,
        )
        break
      case 'step/start':
      case 'step/end':
      case 'request/header':
      case 'tool/call':
        break
    }
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`
}

function fold(text: string, after: number): string {
  const lines = text.split('\n')
  if (lines.length <= after) return text
  return [...lines.slice(0, after), `… (${lines.length - after} more lines)`].join('\n')
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n')
}
