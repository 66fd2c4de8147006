/**
 * How a tool call looks in an editor: ACP's kind, title, locations and content for rudder's
 * built-in tools (an unknown tool, e.g. one from MCP, is `other` titled by its name). Paths
 * are made absolute against the session's workspace, as ACP asks.
 */
import { isAbsolute, resolve } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { ContentBlock, JsonValue } from '../../index.js'
import { toAcpBlock } from './prompt-content.js'

/** What an editor shows when a call is announced (and in a permission request). */
export type ToolCallView = {
  readonly kind: acp.ToolKind
  readonly title: string
  readonly locations: acp.ToolCallLocation[]
  /** Content known before the call runs: the proposed change of an edit. */
  readonly content: acp.ToolCallContent[]
}

const TITLE_LIMIT = 120

/** The announcement of a call to `name` with `args`, in the workspace `cwd`. */
export function describeToolCall(name: string, args: JsonValue, cwd: string): ToolCallView {
  const field = (key: string): string | undefined => stringField(args, key)
  const at = (path: string | undefined): acp.ToolCallLocation[] =>
    path === undefined ? [] : [{ path: absolute(path, cwd) }]
  switch (name) {
    case 'read': {
      const path = field('path')
      // The model's raw args: only a whole line number is a location.
      const raw = numberField(args, 'offset')
      const offset = raw !== undefined && Number.isInteger(raw) && raw >= 0 ? raw : undefined
      const location =
        path === undefined
          ? []
          : [{ path: absolute(path, cwd), ...(offset === undefined ? {} : { line: offset }) }]
      return {
        kind: 'read',
        title: `Read ${path ?? 'a file'}${offset === undefined ? '' : ` from line ${offset}`}`,
        locations: location,
        content: [],
      }
    }
    case 'write':
      return {
        kind: 'edit',
        title: `Write ${field('path') ?? 'a file'}`,
        locations: at(field('path')),
        content: [],
      }
    case 'edit': {
      const path = field('path')
      const oldText = field('oldText')
      const newText = field('newText')
      const content: acp.ToolCallContent[] =
        path === undefined || oldText === undefined || newText === undefined
          ? []
          : [{ type: 'diff', path: absolute(path, cwd), oldText, newText }]
      return { kind: 'edit', title: `Edit ${path ?? 'a file'}`, locations: at(path), content }
    }
    case 'bash':
      return {
        kind: 'execute',
        title: shorten(field('command') ?? 'bash'),
        locations: [],
        content: [],
      }
    case 'grep': {
      const path = field('path')
      const where = path === undefined ? '' : ` in ${path}`
      const glob = field('glob')
      return {
        kind: 'search',
        title: shorten(
          `Search ${field('pattern') ?? ''}${where}${glob === undefined ? '' : ` (${glob})`}`,
        ),
        locations: at(path),
        content: [],
      }
    }
    case 'glob': {
      const path = field('path')
      return {
        kind: 'search',
        title: shorten(`Find ${field('pattern') ?? ''}${path === undefined ? '' : ` in ${path}`}`),
        locations: at(path),
        content: [],
      }
    }
    case 'ls': {
      const path = field('path')
      return {
        kind: 'read',
        title: `List ${path ?? 'the workspace'}`,
        locations: at(path ?? '.'),
        content: [],
      }
    }
    default:
      return { kind: 'other', title: name, locations: [], content: [] }
  }
}

/** A finished call: the data of its `tool/result` event. */
export type ToolResultData = {
  readonly name: string
  readonly content: readonly ContentBlock[]
  readonly isError: boolean
  readonly meta?: JsonValue
}

/**
 * The content an editor shows for a finished call: the change of a successful edit (and of a
 * write that created its file) as ACP `diff` content before the tool's own text; otherwise the
 * result's blocks. A write over an existing file shows as text: its result does not keep the
 * old text to diff against.
 */
export function resultContent(
  result: ToolResultData,
  args: JsonValue,
  cwd: string,
): acp.ToolCallContent[] {
  const blocks: acp.ToolCallContent[] = result.content.map((block) => ({
    type: 'content',
    content: toAcpBlock(block),
  }))
  if (result.isError) return blocks
  const path = stringField(args, 'path')
  if (result.name === 'edit') {
    const oldText = stringField(args, 'oldText')
    const newText = stringField(args, 'newText')
    if (path !== undefined && oldText !== undefined && newText !== undefined)
      return [{ type: 'diff', path: absolute(path, cwd), oldText, newText }, ...blocks]
  }
  if (result.name === 'write') {
    const newText = stringField(args, 'content')
    const isCreated = booleanField(result.meta ?? null, 'isCreated')
    if (path !== undefined && newText !== undefined && isCreated === true)
      return [{ type: 'diff', path: absolute(path, cwd), oldText: null, newText }, ...blocks]
  }
  return blocks
}

/**
 * A plan a tool reported in its result's `meta.plan` (entries of `{ content, status,
 * priority? }`), as ACP plan entries; undefined when the result carries none. No built-in tool
 * reports one; a to-do tool (or an MCP tool) that does gets an editor's plan view.
 */
export function planOf(meta: JsonValue | undefined): acp.PlanEntry[] | undefined {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined
  const plan = (meta as { plan?: JsonValue }).plan
  if (!Array.isArray(plan)) return undefined
  const entries: acp.PlanEntry[] = []
  for (const entry of plan) {
    const content = stringField(entry, 'content')
    const status = stringField(entry, 'status')
    if (content === undefined || !isPlanStatus(status)) return undefined
    const priority = stringField(entry, 'priority')
    entries.push({ content, status, priority: isPlanPriority(priority) ? priority : 'medium' })
  }
  return entries
}

/** `bash` result meta: the exit code and the signal that ended the command, if any. */
export function exitOf(meta: JsonValue | undefined): {
  exitCode: number | null
  signal: string | null
} {
  const exitCode = numberField(meta ?? null, 'exitCode')
  const signal = stringField(meta ?? null, 'signal')
  return { exitCode: exitCode ?? null, signal: signal ?? null }
}

function isPlanStatus(value: string | undefined): value is acp.PlanEntryStatus {
  return value === 'pending' || value === 'in_progress' || value === 'completed'
}

function isPlanPriority(value: string | undefined): value is acp.PlanEntryPriority {
  return value === 'high' || value === 'medium' || value === 'low'
}

function absolute(path: string, cwd: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path)
}

function shorten(text: string): string {
  const line = text.split('\n', 1)[0]!
  const cut = line.length > TITLE_LIMIT ? `${line.slice(0, TITLE_LIMIT - 1)}…` : line
  return cut === text ? text : cut.endsWith('…') ? cut : `${cut} …`
}

function fieldOf(value: JsonValue, key: string): JsonValue | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  return (value as { readonly [key: string]: JsonValue })[key]
}

function stringField(value: JsonValue, key: string): string | undefined {
  const field = fieldOf(value, key)
  return typeof field === 'string' ? field : undefined
}

function numberField(value: JsonValue, key: string): number | undefined {
  const field = fieldOf(value, key)
  return typeof field === 'number' ? field : undefined
}

function booleanField(value: JsonValue, key: string): boolean | undefined {
  const field = fieldOf(value, key)
  return typeof field === 'boolean' ? field : undefined
}
