/**
 * How rudder's tools look to hook scripts (docs/hooks.md, "Tool names"): the built-ins answer
 * to Claude Code's names (`Bash`, `Read`, `Edit`, `Write`, `Grep`, `Glob`, `LS`) and show their
 * arguments under Claude Code's field names (`command`, `file_path` made absolute, `old_string`,
 * `new_string`, `content`, …); `updatedInput` comes back in those names and is mapped to the
 * tool's own arguments. Codex hooks see `Bash` and, for file edits, `apply_patch`. Other tools
 * (MCP, a program's own) keep their names and arguments.
 */
import { isAbsolute, resolve } from 'node:path'
import { type JsonObject, type JsonValue, setDataProperty } from '../core/index.js'
import type { Dialect } from './hook-config.js'

/** A field of a built-in tool: its rudder name, its Claude Code name, and how values convert. */
type Field = {
  readonly rudder: string
  readonly claude: string
  /** `path`: made absolute against the cwd for hooks; `ms`: rudder seconds ↔ Claude Code milliseconds. */
  readonly kind?: 'path' | 'ms'
}

type Builtin = {
  readonly claude: string
  readonly fields: readonly Field[]
  /** Claude Code fields rudder's tool has no use for: dropped from `updatedInput`, not logged. */
  readonly claudeOnly?: readonly string[]
}

const BUILTINS: Readonly<Record<string, Builtin>> = {
  bash: {
    claude: 'Bash',
    claudeOnly: ['description', 'run_in_background'],
    fields: [
      { rudder: 'command', claude: 'command' },
      { rudder: 'timeout', claude: 'timeout', kind: 'ms' },
    ],
  },
  read: {
    claude: 'Read',
    fields: [
      { rudder: 'path', claude: 'file_path', kind: 'path' },
      { rudder: 'offset', claude: 'offset' },
      { rudder: 'limit', claude: 'limit' },
    ],
  },
  write: {
    claude: 'Write',
    fields: [
      { rudder: 'path', claude: 'file_path', kind: 'path' },
      { rudder: 'content', claude: 'content' },
    ],
  },
  edit: {
    claude: 'Edit',
    fields: [
      { rudder: 'path', claude: 'file_path', kind: 'path' },
      { rudder: 'oldText', claude: 'old_string' },
      { rudder: 'newText', claude: 'new_string' },
      { rudder: 'replaceAll', claude: 'replace_all' },
    ],
  },
  grep: {
    claude: 'Grep',
    claudeOnly: ['output_mode', 'multiline', 'type', 'head_limit', '-n', '-A', '-B', '-C'],
    fields: [
      { rudder: 'pattern', claude: 'pattern' },
      { rudder: 'path', claude: 'path' },
      { rudder: 'glob', claude: 'glob' },
      { rudder: 'ignoreCase', claude: '-i' },
    ],
  },
  glob: {
    claude: 'Glob',
    fields: [
      { rudder: 'pattern', claude: 'pattern' },
      { rudder: 'path', claude: 'path' },
    ],
  },
  ls: { claude: 'LS', fields: [{ rudder: 'path', claude: 'path', kind: 'path' }] },
}

/** A tool call as a hook sees it. */
export type HookToolView = {
  readonly toolName: string
  readonly toolInput: JsonValue
  /** More names the matcher answers to (Codex matches `apply_patch` as `Edit` and `Write`). */
  readonly matchNames: readonly string[]
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** How the call `name(args)` looks to a hook of `dialect`; `undefined` when that dialect's hooks do not see the tool. */
export function toolView(
  dialect: Dialect,
  name: string,
  args: JsonValue,
  cwd: string,
): HookToolView | undefined {
  const builtin = BUILTINS[name]
  if (!builtin || !isObject(args)) return { toolName: name, toolInput: args, matchNames: [name] }
  if (dialect === 'codex') return codexView(name, args, cwd)
  const input: Record<string, JsonValue> = {}
  const known = new Set(builtin.fields.map((field) => field.rudder))
  for (const field of builtin.fields) {
    const value = field.kind === 'path' && name === 'ls' ? (args.path ?? '.') : args[field.rudder]
    if (value === undefined) continue
    input[field.claude] = toClaude(field, value, cwd)
  }
  // Arguments Claude Code has no name for keep rudder's, so an echoed input round-trips.
  for (const [key, value] of Object.entries(args))
    if (!known.has(key)) setDataProperty(input, key, value)
  return { toolName: builtin.claude, toolInput: input, matchNames: [builtin.claude] }
}

/** Codex's hooks see the shell as `Bash` and file edits as `apply_patch`; not reads or searches. */
function codexView(name: string, args: JsonObject, cwd: string): HookToolView | undefined {
  if (name === 'bash') return { toolName: 'Bash', toolInput: args, matchNames: ['Bash'] }
  if (name !== 'edit' && name !== 'write') return undefined
  const path = typeof args.path === 'string' ? resolve(cwd, args.path) : ''
  const plus = (text: unknown) =>
    String(text ?? '')
      .split('\n')
      .map((line) => `+${line}`)
  const minus = (text: unknown) =>
    String(text ?? '')
      .split('\n')
      .map((line) => `-${line}`)
  const body =
    name === 'write'
      ? [`*** Add File: ${path}`, ...plus(args.content)]
      : [`*** Update File: ${path}`, '@@', ...minus(args.oldText), ...plus(args.newText)]
  return {
    toolName: 'apply_patch',
    toolInput: { command: ['*** Begin Patch', ...body, '*** End Patch'].join('\n') },
    matchNames: ['apply_patch', 'Edit', 'Write'],
  }
}

function toClaude(field: Field, value: JsonValue, cwd: string): JsonValue {
  if (field.kind === 'path' && typeof value === 'string') return resolve(cwd, value)
  if (field.kind === 'ms' && typeof value === 'number') return value * 1000
  return value
}

/**
 * Maps a hook's `updatedInput` back to the tool's own arguments. It replaces the whole input
 * (as documented), so a field it leaves out is left out. A path equal to the original one made
 * absolute keeps the original spelling, so an echoed input changes nothing in the log.
 * Returns an error message for a shape that cannot be mapped.
 */
export function fromUpdatedInput(options: {
  readonly dialect: Dialect
  readonly name: string
  readonly originalArgs: JsonValue
  readonly updatedInput: JsonValue
  readonly cwd: string
}): { readonly args: JsonValue } | { readonly error: string } {
  const { dialect, name, originalArgs, updatedInput, cwd } = options
  const builtin = BUILTINS[name]
  if (!builtin) return { args: updatedInput }
  if (!isObject(updatedInput))
    return { error: `updatedInput for ${builtin.claude} must be an object` }
  if (dialect === 'codex') {
    if (name !== 'bash')
      return { error: 'rewriting an apply_patch call through updatedInput is not supported' }
    if (typeof updatedInput.command !== 'string')
      return { error: 'updatedInput for Bash must include a string "command"' }
  }
  const original = isObject(originalArgs) ? originalArgs : {}
  const args: Record<string, JsonValue> = {}
  const byClaudeName = new Map(builtin.fields.map((field) => [field.claude, field]))
  for (const [key, value] of Object.entries(updatedInput)) {
    if (builtin.claudeOnly?.includes(key)) continue
    const field = byClaudeName.get(key)
    if (!field) {
      setDataProperty(args, key, value)
      continue
    }
    // `LS` shows a missing path as the cwd; echoed back, it stays missing.
    if (name === 'ls' && original.path === undefined && value === resolve(cwd)) continue
    args[field.rudder] = fromClaude(field, value, original[field.rudder], cwd)
  }
  return { args }
}

function fromClaude(field: Field, value: JsonValue, original: JsonValue | undefined, cwd: string) {
  if (field.kind === 'path' && typeof value === 'string') {
    if (typeof original === 'string' && resolve(cwd, original) === value) return original
    return isAbsolute(value) ? value : resolve(cwd, value)
  }
  if (field.kind === 'ms' && typeof value === 'number') return value / 1000
  return value
}

/** The Claude Code name of a rudder tool (for notices); other tools keep theirs. */
export function claudeToolName(name: string): string {
  return BUILTINS[name]?.claude ?? name
}
