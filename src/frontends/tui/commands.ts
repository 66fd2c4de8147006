/**
 * Slash commands (issue 12 item 8; issue 16 item 6): what each is called, what it takes, and
 * parsing a typed line into one. MCP server prompts join as `/mcp__<server>__<prompt>`.
 */
import type { AutocompleteItem, SlashCommand } from '@mariozechner/pi-tui'

export type CommandName =
  | 'help'
  | 'new'
  | 'resume'
  | 'fork'
  | 'compact'
  | 'model'
  | 'sessions'
  | 'inject'
  | 'export'
  | 'trust'
  | 'withdraw'
  | 'quit'

export const COMMANDS: readonly (SlashCommand & { readonly name: CommandName })[] = [
  { name: 'help', description: 'keys and commands' },
  { name: 'new', description: 'start a new session in this directory' },
  { name: 'resume', description: 'pick a session to continue', argumentHint: '[id]' },
  { name: 'fork', description: 'continue a copy of this session', argumentHint: '[seq]' },
  { name: 'compact', description: 'summarize older history', argumentHint: '[instructions]' },
  {
    name: 'model',
    description: 'switch the model from the next step',
    argumentHint: 'provider/model',
  },
  { name: 'sessions', description: 'list the sessions of this directory' },
  {
    name: 'inject',
    description: 'add context (source plugin:tui) without a turn',
    argumentHint: '<text>',
  },
  { name: 'export', description: 'write this session as JSONL', argumentHint: '[file]' },
  {
    name: 'withdraw',
    description: 'take back a queued prompt or staged steer/context before it runs',
    argumentHint: '[n]',
  },
  { name: 'trust', description: "let this directory's .rudder/config.json apply in full" },
  { name: 'quit', description: 'leave (the session is kept)' },
]

/** An MCP prompt as a command. */
export type PromptCommand = {
  readonly server: string
  readonly prompt: string
  readonly description?: string
  readonly arguments: readonly { readonly name: string; readonly required?: boolean }[]
}

export function promptCommandName(command: Pick<PromptCommand, 'server' | 'prompt'>): string {
  return `mcp__${command.server}__${command.prompt}`
}

export type ParsedCommand =
  | { readonly kind: 'builtin'; readonly name: CommandName; readonly argument: string }
  | { readonly kind: 'prompt'; readonly command: PromptCommand; readonly argument: string }
  | { readonly kind: 'unknown'; readonly name: string }

/** A line starting with `/` as a command; undefined for text that is not one (`/path/x is…`). */
export function parseCommand(
  line: string,
  prompts: readonly PromptCommand[],
): ParsedCommand | undefined {
  const match = /^\/([A-Za-z][\w:-]*)(?:\s+([\s\S]*))?$/.exec(line.trim())
  if (!match) return undefined
  const name = match[1] as string
  const argument = (match[2] ?? '').trim()
  const builtin = COMMANDS.find((command) => command.name === name)
  if (builtin) return { kind: 'builtin', name: builtin.name, argument }
  const prompt = prompts.find((command) => promptCommandName(command) === name)
  if (prompt) return { kind: 'prompt', command: prompt, argument }
  return { kind: 'unknown', name }
}

/**
 * A prompt's arguments from `name=value` pairs, or positional words in the prompt's order.
 * Throws naming a missing required argument.
 */
export function promptArguments(command: PromptCommand, argument: string): Record<string, string> {
  const values: Record<string, string> = {}
  const words = argument === '' ? [] : argument.split(/\s+/)
  const positional: string[] = []
  for (const word of words) {
    const pair = /^([\w-]+)=(.*)$/.exec(word)
    if (pair && command.arguments.some((known) => known.name === pair[1]))
      values[pair[1] as string] = pair[2] as string
    else positional.push(word)
  }
  for (const known of command.arguments) {
    if (values[known.name] !== undefined) continue
    const next = positional.shift()
    if (next !== undefined) values[known.name] = next
  }
  if (positional.length > 0) {
    const last = command.arguments.at(-1)
    if (last) values[last.name] = `${values[last.name] ?? ''} ${positional.join(' ')}`.trim()
  }
  const missing = command.arguments.find(
    (known) => known.required && values[known.name] === undefined,
  )
  if (missing)
    throw new Error(
      `/${promptCommandName(command)} needs ${missing.name}: /${promptCommandName(command)} ${command.arguments.map((known) => `${known.name}=…`).join(' ')}`,
    )
  return values
}

/** Every command, for completion in the editor. */
export function slashCommands(
  prompts: readonly PromptCommand[],
): (SlashCommand | AutocompleteItem)[] {
  return [
    ...COMMANDS,
    ...prompts.map((command) => ({
      name: promptCommandName(command),
      description:
        command.description ?? `prompt ${command.prompt} of the MCP server ${command.server}`,
      argumentHint: command.arguments.map((known) => known.name).join(' '),
    })),
  ]
}

export const HELP_TEXT = `Keys
  Enter         send (idle) · steer the running turn (it joins the next step)
  Alt+Enter/Tab queue a follow-up turn
  Shift+Enter   new line (or end a line with \\)
  Esc           cancel the turn; queued text comes back here · Esc Esc clears the editor
  Ctrl-C        cancel · twice: quit          Ctrl-D  quit (empty editor)
  Ctrl-O        expand/fold context, thinking and tool output
  Shift+Tab     (or Alt+Up) choose a pending row: ↑/↓ choose, x/Del withdraw it,
                Enter withdraw it into the editor, Esc back
  PageUp/Down   scroll the transcript
Mentions
  @path         attach a workspace file as context
  @session:<id> attach another session's transcript as a reference
  @server:uri   attach an MCP server's resource
Commands
${COMMANDS.map((command) => `  /${command.name}${command.argumentHint ? ` ${command.argumentHint}` : ''}: ${command.description}`).join('\n')}
  /mcp__<server>__<prompt> [args]: send an MCP server's prompt`
