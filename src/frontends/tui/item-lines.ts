/**
 * One transcript item as terminal lines (issue 12 item 3): a person's prompt, context folded
 * to one line labelled by its producer (its text byte for byte when expanded), steering where
 * it joined, assistant text as rendered Markdown with thinking folded, tool calls as cards,
 * compaction as a divider with its token figures. Every line fits `width` (pi-tui refuses
 * wider ones).
 */
import { Markdown, truncateToWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui'
import { assertNever, type JsonValue } from '../../index.js'
import type { TranscriptItem } from '../view/transcript-model.js'
import { type StreamingMemo, streamingLines } from './streaming-lines.js'
import type { Theme } from './theme.js'

/** Lines shown of a folded tool output or diff; the rest is one Ctrl-O away. */
const FOLDED_TAIL = 6

export type RenderOptions = {
  readonly width: number
  readonly isExpanded: boolean
  readonly theme: Theme
  /** Kept by the caller per streaming item: what of it is rendered already, reused. */
  readonly streaming?: StreamingMemo
}

export function itemLines(item: TranscriptItem, options: RenderOptions): string[] {
  const { theme, width, isExpanded } = options
  switch (item.kind) {
    case 'user': {
      if (item.role === 'prompt') return ['', ...wrap(item.text, width, '› ', theme.prompt)]
      const label = theme.context(`${item.role === 'reference' ? '◆' : '▸'} ${item.label}`)
      const size = describeSize(item.text, item.images)
      if (!isExpanded) return [clip(`${label} ${theme.dim(`(${size}, Ctrl-O to expand)`)}`, width)]
      return [
        clip(`${label} ${theme.dim(`(${size})`)}`, width),
        ...verbatim(item.text, width, '  '),
      ]
    }
    case 'steering':
      return wrap(
        item.text,
        width,
        `↳ steer before step ${item.beforeStep}${item.label === 'user' ? '' : ` (${item.label})`}: `,
        theme.steering,
      )
    case 'assistant':
      return assistantLines(item, options)
    case 'tool':
      return toolLines(item, options)
    case 'turn-start':
      return []
    case 'turn-end':
      return item.reason.kind === 'completed'
        ? []
        : [
            clip(
              theme.warning(
                `  turn ${item.turn} ended: ${item.reason.kind}${item.reason.kind === 'error' ? ` (${item.reason.message})` : ''}`,
              ),
              width,
            ),
          ]
    case 'compaction': {
      const figures = `compacted (${item.reason}): ${item.tokensBefore.toLocaleString('en-US')} → ${
        item.tokensAfter === undefined ? '?' : item.tokensAfter.toLocaleString('en-US')
      } tokens`
      const rule = '─'.repeat(Math.max(0, Math.floor((width - figures.length - 2) / 2)))
      const lines = [clip(theme.dim(`${rule} ${figures} ${rule}`), width)]
      return isExpanded ? [...lines, ...verbatim(item.summary, width, '  ')] : lines
    }
    case 'extension':
      return isExpanded ? [clip(theme.dim(`  · ${item.type}`), width)] : []
    default:
      return assertNever(item)
  }
}

function assistantLines(
  item: Extract<TranscriptItem, { kind: 'assistant' }>,
  { width, isExpanded, theme, streaming }: RenderOptions,
): string[] {
  const lines: string[] = []
  if (item.thinking !== '') {
    if (isExpanded) lines.push(...wrap(item.thinking, width, '∴ ', theme.dim))
    else {
      const first = firstLine(item.thinking)
      lines.push(clip(theme.dim(`∴ thinking: ${first}`), width))
    }
  }
  if (item.text !== '') {
    const markdown = (part: string) =>
      new Markdown(part, 0, 0, theme.markdown)
        .render(Math.max(1, width))
        .map((line) => clip(line, width))
    if (item.isStreaming && streaming)
      lines.push(
        ...streamingLines(
          item.textPieces === undefined || item.pieceCount === undefined
            ? { text: item.text }
            : { text: item.text, pieces: item.textPieces, pieceCount: item.pieceCount },
          streaming,
          {
            width,
            markdown,
            printable,
            elision: theme.dim('⋮'),
          },
        ),
      )
    else lines.push(...markdown(printable(item.text)))
  }
  if (item.isStreaming && item.text === '' && item.thinking === '') lines.push(theme.dim('…'))
  if (item.isInterrupted) lines.push(theme.warning('(interrupted)'))
  return lines
}

function toolLines(
  item: Extract<TranscriptItem, { kind: 'tool' }>,
  { width, isExpanded, theme }: RenderOptions,
): string[] {
  const mark =
    item.status === 'ok'
      ? theme.ok('✓')
      : item.status === 'running' || item.status === 'pending'
        ? theme.accent('●')
        : theme.error('✗')
  const duration = item.durationMs === undefined ? '' : ` ${formatDuration(item.durationMs)}`
  const head = `${mark} ${theme.bold(item.name)} ${printable(argumentSummary(item.name, item.args))}`
  const tail = theme.dim(` ${item.status}${duration}`)
  const lines = [clip(`${head}${tail}`, width)]
  const diff = diffOf(item.meta)
  const body = printable(diff ?? item.output ?? '')
  if (body === '' || item.status === 'pending') return lines
  const bodyLines = body.replace(/\n$/, '').split('\n')
  const shown = isExpanded ? bodyLines : bodyLines.slice(-FOLDED_TAIL)
  if (shown.length < bodyLines.length)
    lines.push(theme.dim(clip(`  ⋮ ${bodyLines.length - shown.length} more lines`, width)))
  for (const line of shown) {
    const styled =
      diff === undefined
        ? theme.dim(line)
        : line.startsWith('+')
          ? theme.ok(line)
          : line.startsWith('-')
            ? theme.error(line)
            : line
    lines.push(clip(`  ${styled}`, width))
  }
  return lines
}

/** The arguments that matter for a card: a command, a path, a pattern. */
function argumentSummary(name: string, args: JsonValue): string {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return ''
  const record = args as Record<string, JsonValue>
  for (const key of ['command', 'path', 'pattern', 'file', 'url', 'query']) {
    const value = record[key]
    if (typeof value === 'string') return value.split('\n')[0] ?? ''
  }
  const text = JSON.stringify(args)
  return name.startsWith('mcp__') || text.length < 80 ? text : `${text.slice(0, 77)}…`
}

function diffOf(meta: JsonValue | undefined): string | undefined {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined
  const diff = (meta as Record<string, JsonValue>).diff
  return typeof diff === 'string' && diff !== '' ? diff : undefined
}

function describeSize(text: string, images: number): string {
  const lines = text === '' ? 0 : text.split('\n').length
  const parts = [`${lines} line${lines === 1 ? '' : 's'}`]
  if (images > 0) parts.push(`${images} image${images === 1 ? '' : 's'}`)
  return parts.join(', ')
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`
}

/** Wrapped text with a styled prefix on the first line and an indent on the rest. */
function wrap(text: string, width: number, prefix: string, style: (text: string) => string) {
  const indent = ' '.repeat(Math.min(prefix.length, 4))
  const inner = Math.max(1, width - indent.length)
  const out: string[] = []
  for (const [index, line] of wrapTextWithAnsi(style(prefix) + printable(text), inner).entries())
    out.push(clip(index === 0 ? line : indent + line, width))
  return out.length === 0 ? [clip(style(prefix), width)] : out
}

/** Text as given, each line cut to the width (nothing reflowed, so it reads byte for byte). */
function verbatim(text: string, width: number, indent: string): string[] {
  const out: string[] = []
  for (const line of printable(text).split('\n')) {
    const chunks = wrapTextWithAnsi(line, Math.max(1, width - indent.length))
    if (chunks.length === 0) out.push('')
    for (const chunk of chunks) out.push(clip(indent + chunk, width))
  }
  return out
}

/** Anything `printable` changes: control characters but the newline (tabs included), C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it finds
const UNPRINTABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

/** The first non-blank line of some text, printable, without scanning the rest of it. */
function firstLine(text: string): string {
  const from = text.search(/\S/)
  if (from < 0) return ''
  const end = text.indexOf('\n', from)
  return printable(text.slice(from, end < 0 ? undefined : end)).trim()
}

/**
 * Text as it may reach the terminal: tabs as four spaces, and no escape sequences or other
 * control characters (a tool's coloured output or a stray `\r` would move the cursor and
 * break the screen). Newlines stay.
 */
export function printable(text: string): string {
  // Most text has nothing to strip: return it as it is, without building a copy.
  if (!UNPRINTABLE.test(text)) return text
  let out = ''
  // Where we are in an escape sequence: after ESC, in a CSI (`ESC [` … final byte), in an
  // OSC (`ESC ]` … BEL or ST).
  let sequence: 'none' | 'start' | 'csi' | 'osc' = 'none'
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0
    if (sequence === 'start') {
      sequence = char === '[' ? 'csi' : char === ']' ? 'osc' : 'none'
      continue
    }
    if (sequence === 'csi') {
      if (code >= 0x40 && code <= 0x7e) sequence = 'none'
      continue
    }
    if (sequence === 'osc') {
      if (code === 0x07) sequence = 'none'
      else if (code === 0x1b) sequence = 'start'
      continue
    }
    if (code === 0x1b) sequence = 'start'
    else if (char === '\t') out += '    '
    else if (char === '\n' || (code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0)))
      out += char
  }
  return out
}

export function clip(line: string, width: number): string {
  return truncateToWidth(line, Math.max(0, width))
}
