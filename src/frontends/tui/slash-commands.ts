/**
 * What each built-in slash command does (issue 12 item 8), over a small context the app
 * gives it: the current session, the store, and the app's few levers (open a session, show a
 * note or a dialog, track or withdraw an input, trust, quit).
 */
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { assertNever, type SessionStore, type UserMessageData } from '../../index.js'
import type { SessionChoice, SessionRuntime } from '../../runtime/host.js'
import { type CommandName, HELP_TEXT } from './commands.js'
import type { Dialog } from './dialogs.js'
import type { Theme } from './theme.js'

export type CommandContext = {
  readonly runtime: SessionRuntime
  readonly store: SessionStore
  readonly theme: Theme
  /** The current session's id (it changes after `open`). */
  sessionId(): string | undefined
  open(choice: SessionChoice): Promise<void>
  note(lines: string[]): void
  showDialog(dialog: Dialog): void
  /** Shows an input this command gave in the pending panel. */
  track(id: string, data: UserMessageData): void
  trust(): Promise<void>
  /** Takes back row `argument` of the pending panel (the newest when empty). */
  withdraw(argument: string): void
  quit(code: number): void
}

/** Runs a command; failures throw (the app shows them and puts the text back). */
export async function runSlashCommand(
  name: CommandName,
  argument: string,
  context: CommandContext,
): Promise<void> {
  const { runtime, theme, note } = context
  switch (name) {
    case 'help':
      return note(HELP_TEXT.split('\n'))
    case 'quit':
      return context.quit(0)
    case 'new':
      await context.open({ kind: 'new' })
      return note([theme.dim(`new session ${context.sessionId()}`)])
    case 'resume':
      if (argument !== '') return context.open({ kind: 'resume', id: argument })
      return pickSession(context)
    case 'fork': {
      const atSeq = argument === '' ? undefined : Number(argument)
      if (atSeq !== undefined && !(Number.isInteger(atSeq) && atSeq >= 0))
        return note([theme.error(`/fork takes a seq (a whole number), got ${argument}`)])
      const from = runtime.session.header.id
      await context.open({ kind: 'fork', id: from, ...(atSeq === undefined ? {} : { atSeq }) })
      return note([theme.dim(`forked ${from} into ${context.sessionId()}`)])
    }
    case 'compact': {
      note([theme.dim('compacting…')])
      const result = await runtime.agent.compact(argument === '' ? {} : { instructions: argument })
      return note([
        result.status === 'compacted'
          ? theme.dim(`compacted: ${result.tokensBefore} → ${result.tokensAfter} tokens`)
          : theme.warning(`not compacted: ${'reason' in result ? result.reason : result.status}`),
      ])
    }
    case 'model':
      if (argument === '') return note([`model: ${runtime.label}`])
      await runtime.setModel(argument)
      return note([theme.dim(`model: ${runtime.label} from the next step`)])
    case 'sessions': {
      const listed = await context.store.list({ cwd: runtime.cwd, limit: 20 })
      return note(
        listed.map(
          (session) =>
            `${session.id}  ${new Date(session.updatedAt).toISOString().slice(0, 16)}  ${session.title ?? ''}`,
        ),
      )
    }
    case 'inject': {
      if (argument === '') return note([theme.error('/inject needs the text to add')])
      const data: UserMessageData = {
        content: [{ type: 'text', text: argument }],
        source: { kind: 'plugin', name: 'tui' },
      }
      context.track(runtime.agent.inject(data).id, data)
      return
    }
    case 'export': {
      const id = runtime.session.header.id
      const file = resolve(runtime.cwd, argument === '' ? `rudder-${id}.jsonl` : argument)
      const lines: string[] = []
      for await (const line of context.store.exportJsonl(id)) lines.push(line)
      // `wx`: never overwrite a file the person already has.
      await writeFile(file, lines.join(''), { flag: 'wx' })
      return note([theme.dim(`exported ${lines.length} lines to ${file}`)])
    }
    case 'trust':
      return context.trust()
    case 'withdraw':
      return context.withdraw(argument)
    default:
      return assertNever(name)
  }
}

/** `/resume` without an id: a searchable list of this directory's other sessions. */
async function pickSession(context: CommandContext): Promise<void> {
  const { runtime } = context
  const listed = await context.store.list({ cwd: runtime.cwd, limit: 1000 })
  const items = listed
    .filter((session) => session.id !== runtime.session.header.id)
    .map((session) => ({
      value: session.id,
      label: `${new Date(session.updatedAt).toISOString().slice(0, 16).replace('T', ' ')}  ${session.title ?? '(untitled)'}`,
      description: `${session.id.slice(0, 8)} · ${session.eventCount} events`,
    }))
  if (items.length === 0) return context.note(['no other session in this directory'])
  context.showDialog({
    kind: 'pick',
    title: 'Resume which session? (type to search, Enter to open, Esc to go back)',
    items,
    filter: '',
    selected: 0,
    onPick: (id) => {
      void context
        .open({ kind: 'resume', id })
        .catch((error: unknown) =>
          context.note([
            context.theme.error(error instanceof Error ? error.message : String(error)),
          ]),
        )
    },
  })
}
