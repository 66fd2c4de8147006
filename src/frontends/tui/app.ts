/**
 * The terminal UI of one process (issue 12, docs/spec.md §11): the transcript of the current
 * session folded from its log and live notifications, the pending panel, the editor and the
 * status line, over the host's sessions (`/new`, `/resume`, `/fork` switch between them).
 * Everything the agent does goes through its public surface: send, steer, inject, cancel,
 * compact, and the approval control's asker.
 */
import {
  CombinedAutocompleteProvider,
  type Component,
  type Editor,
  matchesKey,
  type TUI,
} from '@mariozechner/pi-tui'
import type { SessionEvent, UserMessageData } from '../../index.js'
import type { ApprovalAnswer, ApprovalQuestion } from '../../runtime/approval-control.js'
import type { Host, SessionChoice, SessionRuntime } from '../../runtime/host.js'
import { chooseMcpServers } from '../../runtime/mcp-servers.js'
import type { Notice } from '../../runtime/notices.js'
import { isDirectoryTrusted, trustDirectory } from '../../runtime/trust.js'
import { createInputsModel, type InputsModel, isSettled } from '../view/inputs-model.js'
import {
  createTranscriptModel,
  type LiveNotification,
  type TranscriptModel,
} from '../view/transcript-model.js'
import { CachedEditor } from './cached-editor.js'
import {
  type CommandName,
  type PromptCommand,
  parseCommand,
  promptArguments,
  promptCommandName,
  slashCommands,
} from './commands.js'
import { type Dialog, dialogLines, handleDialogKey } from './dialogs.js'
import { clip, printable } from './item-lines.js'
import { MentionError, mentionContexts } from './mentions.js'
import { pendingLines, withdrawableInputs } from './pending-panel.js'
import { runSlashCommand } from './slash-commands.js'
import { statusLine } from './status-line.js'
import type { Theme } from './theme.js'
import { TranscriptView } from './transcript-view.js'

/** A second Ctrl-C within this window quits; a second Esc clears the editor. */
const DOUBLE_PRESS_MS = 1500

export type AppOptions = {
  readonly tui: TUI
  readonly host: Host
  readonly theme: Theme
  readonly env: Readonly<Record<string, string | undefined>>
  readonly home: string
  /** Called once when the person quits, with the exit code (0, or 130 after Ctrl-C). */
  readonly onQuit: (code: number) => void
  /** The start-up screen's editor, taken over with what was typed (docs/decisions/0083). */
  readonly editor?: Editor
}

export class App {
  private runtime: SessionRuntime | undefined
  private transcript: TranscriptModel = createTranscriptModel()
  private inputs: InputsModel = createInputsModel()
  private readonly view: TranscriptView
  private readonly editor: Editor
  private dialog: Dialog | undefined
  /** The switch to another session under way (`open`): a prompt submitted meanwhile waits for it. */
  private switching: Promise<void> | undefined
  /** Lines shown above the pending panel until the next input (help, results, notices). */
  private note: string[] = []
  private flash: { readonly text: string; readonly until: number } | undefined
  private lastInterruptAt = 0
  private lastEscapeAt = 0
  private retryAt: number | undefined
  private prompts: PromptCommand[] = []
  private detach: (() => void) | undefined
  private hasQuit = false
  private hasAskedTrust = false
  /** The pending panel has the focus (Shift+Tab, Alt+Up) with this row selected. */
  private panelSelection: string | undefined

  constructor(private readonly options: AppOptions) {
    const { tui, theme } = options
    this.view = new TranscriptView(() => this.transcript.items, theme)
    this.editor = options.editor ?? new CachedEditor(tui, theme.editor)
    this.editor.onSubmit = (text) => void this.submit(text, 'enter')
    const screen: Component = {
      render: (width) => this.render(width),
      invalidate: () => this.editor.invalidate(),
    }
    tui.addChild(screen)
    tui.setFocus(this.editor)
    tui.addInputListener((data) => (this.handleKey(data) ? { consume: true } : undefined))
    options.host.notices.subscribe((notice) => this.showNotice(notice))
  }

  /** Opens a session (new, resumed, forked) and shows it; the previous one is closed. */
  async open(choice: SessionChoice): Promise<void> {
    const switching = this.switchTo(choice)
    // The command that asked for the switch reports its failure; a waiting prompt goes on.
    const settled = switching.then(
      () => {},
      () => {},
    )
    this.switching = settled
    try {
      await switching
    } finally {
      if (this.switching === settled) this.switching = undefined
    }
  }

  private async switchTo(choice: SessionChoice): Promise<void> {
    const next = await this.options.host.openSession({ choice })
    const previous = this.runtime
    const shown = this.attach(next)
    if (previous) await previous.close()
    await shown
    for (const notice of this.options.host.notices.all)
      if (notice.sessionId === next.session.header.id) this.showNotice(notice)
    this.askTrustOnce(next)
  }

  /** Sends `text` as if typed and submitted (`rudder -i "task"`). */
  sendInitial(text: string): Promise<void> {
    return this.submit(text, 'enter')
  }

  /**
   * Sends a prompt submitted while the session was opening (docs/decisions/0083): a prompt of
   * its own, queued behind the ones before it, never a steer into their turn.
   */
  sendQueued(text: string): Promise<void> {
    return this.submit(text, 'queue')
  }

  /** Closes the current session (its turn, if any, ends `canceled` in the log). */
  async close(): Promise<void> {
    this.detach?.()
    await this.runtime?.close()
  }

  get sessionId(): string | undefined {
    return this.runtime?.session.header.id
  }

  /**
   * Shows `runtime`'s session: its history, read from the store where the session does not
   * hold it (docs/spec.md §9.2), then what happens live. Resolves once the history is shown;
   * what is logged or streamed meanwhile is shown after it, in order.
   */
  private attach(runtime: SessionRuntime): Promise<void> {
    this.detach?.()
    this.runtime = runtime
    this.transcript = createTranscriptModel()
    this.inputs = createInputsModel()
    this.view.reset()
    const { session, agent } = runtime
    // Everything before the subscription is in the replay; everything after it is held here
    // until the replay is done.
    const throughSeq = session.nextSeq - 1
    let held: (() => void)[] | undefined = []
    const whenShown = (show: () => void) => {
      if (held) held.push(show)
      else show()
    }
    const stopEvents = session.subscribe((event: SessionEvent) =>
      whenShown(() => {
        this.transcript.applyEvent(event)
        this.inputs.applyEvent(event)
        this.inputs.applyPending(agent.pending())
        this.options.tui.requestRender()
      }),
    )
    const stopLive = agent.subscribe((notification) =>
      whenShown(() => {
        this.transcript.applyNotification(notification as LiveNotification)
        this.inputs.applyNotification(notification as LiveNotification)
        if (notification.type === 'request/retry') this.countDown(notification.delayMs)
        if (notification.type === 'listener/error')
          this.setNote([
            this.options.theme.error(
              printable(`${notification.source} failed: ${notification.message}`),
            ),
          ])
        this.inputs.applyPending(agent.pending())
        this.options.tui.requestRender()
      }),
    )
    const previousAsker = runtime.approval.setAsker((question) => this.ask(question))
    this.detach = () => {
      held = undefined
      stopEvents()
      stopLive()
      runtime.approval.setAsker(previousAsker)
    }
    this.editor.setAutocompleteProvider(
      new CombinedAutocompleteProvider(slashCommands(this.prompts), runtime.cwd),
    )
    void this.loadPrompts(runtime)
    this.options.tui.requestRender()
    return this.replay(runtime, throughSeq).finally(() => {
      const shows = held ?? []
      held = undefined
      if (this.runtime !== runtime) return
      for (const show of shows) show()
      this.options.tui.requestRender()
    })
  }

  /** Shows the session's log through `throughSeq`; a log that cannot be read is said so. */
  private async replay(runtime: SessionRuntime, throughSeq: number): Promise<void> {
    try {
      for await (const batch of runtime.session.readEvents({ throughSeq })) {
        if (this.runtime !== runtime) return
        for (const event of batch) this.transcript.applyEvent(event)
      }
    } catch (error) {
      if (this.runtime === runtime)
        this.setNote([
          this.options.theme.error(`cannot show this session's history: ${messageOf(error)}`),
        ])
    }
  }

  /** MCP servers' prompts become slash commands once the servers are up. */
  private async loadPrompts(runtime: SessionRuntime): Promise<void> {
    if (runtime.mcp.summaries().length === 0) return
    try {
      await runtime.mcp.start({ everything: true })
      const prompts = await runtime.mcp.prompts()
      if (this.runtime !== runtime) return
      this.prompts = prompts.map((prompt) => ({
        server: prompt.server,
        prompt: prompt.name,
        ...(prompt.description === undefined ? {} : { description: prompt.description }),
        arguments: prompt.arguments,
      }))
      this.editor.setAutocompleteProvider(
        new CombinedAutocompleteProvider(slashCommands(this.prompts), runtime.cwd),
      )
      if (this.prompts.length > 0)
        this.setNote([
          ...this.note,
          this.options.theme.dim(
            `MCP prompts: ${this.prompts.map((command) => `/${promptCommandName(command)}`).join(' ')}`,
          ),
        ])
    } catch (error) {
      this.setNote([this.options.theme.error(`MCP prompts: ${messageOf(error)}`)])
    }
  }

  // --- input -----------------------------------------------------------------------------

  /** Keys the app owns before the editor sees them. Returns whether the key was used. */
  private handleKey(data: string): boolean {
    if (this.dialog) {
      const outcome = handleDialogKey(this.dialog, data)
      if (outcome === 'close') this.dialog = undefined
      this.options.tui.requestRender()
      return true
    }
    if (this.panelSelection !== undefined && this.handlePanelKey(data)) return true
    // A printable character is none of the keys below (all control keys or escape sequences):
    // it goes to the editor without a dozen key parses (bench B7, docs/decisions/0087).
    if (isPrintableCharacter(data)) return false
    const agent = this.runtime?.agent
    if (
      (matchesKey(data, 'shift+tab') || matchesKey(data, 'alt+up')) &&
      !this.editor.isShowingAutocomplete()
    ) {
      this.focusPanel()
      return true
    }
    if (matchesKey(data, 'ctrl+c')) {
      const now = Date.now()
      if (now - this.lastInterruptAt < DOUBLE_PRESS_MS) {
        this.quit(130)
        return true
      }
      this.lastInterruptAt = now
      if (agent && agent.status !== 'idle') this.cancel()
      else this.editor.setText('')
      this.flash = { text: 'press Ctrl-C again to quit', until: now + DOUBLE_PRESS_MS }
      this.options.tui.requestRender()
      setTimeout(() => this.options.tui.requestRender(), DOUBLE_PRESS_MS).unref()
      return true
    }
    if (matchesKey(data, 'ctrl+d')) {
      if (this.editor.getText() !== '') return false
      this.quit(0)
      return true
    }
    if (matchesKey(data, 'escape')) {
      if (this.editor.isShowingAutocomplete()) return false
      const now = Date.now()
      if (agent && (agent.status !== 'idle' || agent.pending().queued.length > 0)) this.cancel()
      else if (now - this.lastEscapeAt < DOUBLE_PRESS_MS) this.editor.setText('')
      this.lastEscapeAt = now
      this.options.tui.requestRender()
      return true
    }
    if (matchesKey(data, 'alt+enter') || (matchesKey(data, 'tab') && this.isQueueTab())) {
      const text = this.editor.getExpandedText()
      if (text.trim() === '') return true
      this.editor.addToHistory(text)
      this.editor.setText('')
      void this.submit(text, 'queue')
      return true
    }
    if (matchesKey(data, 'pageUp') || matchesKey(data, 'pageDown')) {
      const page = Math.max(1, this.options.tui.terminal.rows - 8)
      if (this.view.scrollBy(matchesKey(data, 'pageUp') ? page : -page))
        this.options.tui.requestRender()
      return true
    }
    if (matchesKey(data, 'ctrl+o')) {
      this.view.isExpanded = !this.view.isExpanded
      this.options.tui.requestRender()
      return true
    }
    return false
  }

  /** Shift+Tab / Alt+Up: the pending panel takes the focus, its newest withdrawable row selected. */
  private focusPanel(): void {
    const last = withdrawableInputs(this.inputs).at(-1)
    if (last) this.panelSelection = last.id
    else {
      const now = Date.now()
      this.flash = { text: 'nothing pending to withdraw', until: now + DOUBLE_PRESS_MS }
      setTimeout(() => this.options.tui.requestRender(), DOUBLE_PRESS_MS).unref()
    }
    this.options.tui.requestRender()
  }

  /**
   * Keys while the pending panel has the focus (docs/decisions/0082): arrows choose, x / Delete
   * / Backspace withdraw, Enter withdraws into the editor, Esc (or Shift+Tab) goes back. Any
   * other key gives the focus back to the editor and does what it does there, so typing on
   * never gets lost. Returns whether the key was used.
   */
  private handlePanelKey(data: string): boolean {
    const rows = withdrawableInputs(this.inputs)
    const at = rows.findIndex((input) => input.id === this.panelSelection)
    const done = () => {
      this.options.tui.requestRender()
      return true
    }
    const isAction =
      data === 'x' ||
      matchesKey(data, 'delete') ||
      matchesKey(data, 'backspace') ||
      matchesKey(data, 'enter')
    if (at === -1) {
      // The selected row reached the log since the last frame: select the newest one left and
      // act on nothing, so a key never withdraws a row the person did not see selected.
      this.panelSelection = rows.at(-1)?.id
      if (isAction)
        this.setNote([this.options.theme.warning('too late: that input has reached the log')])
      if (isAction || matchesKey(data, 'up') || matchesKey(data, 'down')) return done()
      this.panelSelection = undefined
      this.options.tui.requestRender()
      // Esc only leaves the panel, even one that emptied meanwhile: it never cancels from here.
      return matchesKey(data, 'escape') || matchesKey(data, 'shift+tab')
    }
    const selected = rows[at] as (typeof rows)[number]
    if (matchesKey(data, 'escape') || matchesKey(data, 'shift+tab')) {
      this.panelSelection = undefined
      return done()
    }
    if (matchesKey(data, 'up') || matchesKey(data, 'alt+up')) {
      this.panelSelection = rows[Math.max(0, at - 1)]?.id ?? selected.id
      return done()
    }
    if (matchesKey(data, 'down') || matchesKey(data, 'alt+down')) {
      if (at === rows.length - 1) this.panelSelection = undefined
      else this.panelSelection = rows[at + 1]?.id
      return done()
    }
    if (data === 'x' || matchesKey(data, 'delete') || matchesKey(data, 'backspace')) {
      this.withdraw(selected.id, 'drop')
      this.panelSelection = withdrawableInputs(this.inputs).at(Math.max(0, at - 1))?.id
      return done()
    }
    if (matchesKey(data, 'enter')) {
      this.withdraw(selected.id, 'edit')
      this.panelSelection = undefined
      return done()
    }
    this.panelSelection = undefined
    this.options.tui.requestRender()
    return false
  }

  /**
   * Takes back one pending input (`agent.withdraw`, docs/decisions/0072 and 0082). `drop`
   * leaves its row in the panel as withdrawn, with its text, until the next prompt (the
   * editor's history has it too); `edit` puts the text in the editor, above any draft, as Esc
   * does with canceled inputs. Losing the race to the agent (the input already reached the
   * log) is said, not an error.
   */
  private withdraw(id: string, how: 'drop' | 'edit'): void {
    const runtime = this.runtime
    if (!runtime) return
    const tracked = this.inputs.all.find((input) => input.id === id)
    const item = runtime.agent.withdraw(id)
    if (!item) {
      const what = printable((tracked?.text ?? '').replace(/\s+/g, ' '))
      this.setNote([
        this.options.theme.warning(
          `too late to withdraw${what === '' ? '' : ` "${what}"`}: it has reached the log`,
        ),
      ])
      return
    }
    // The agent's delivery/end notification marks the row withdrawn; applied here as well so
    // the panel never depends on when listeners run.
    this.inputs.applyNotification({
      type: 'delivery/end',
      id,
      kind: item.kind,
      result: { status: 'discarded', reason: 'withdrawn' },
    })
    if (how === 'drop') return
    this.inputs.forget(id)
    const text = textOf(item.data)
    if (text.trim() === '') return
    const current = this.editor.getText()
    this.editor.setText(current === '' ? text : `${text}\n${current}`)
  }

  /** `/withdraw [n]`: the n-th numbered row of the panel (the newest without n), dropped. */
  private withdrawNumbered(argument: string): void {
    const { theme } = this.options
    const rows = withdrawableInputs(this.inputs)
    if (rows.length === 0) {
      this.setNote([
        theme.error('nothing to withdraw: no prompt is queued and no steer or context is staged'),
      ])
      return
    }
    const number = argument === '' ? rows.length : Number(argument)
    const row = Number.isInteger(number) ? rows[number - 1] : undefined
    if (!row) {
      this.setNote([
        theme.error(
          `/withdraw ${argument}: the pending panel numbers its rows 1${rows.length > 1 ? `–${rows.length}` : ''}; /withdraw n takes back row n, /withdraw the newest`,
        ),
      ])
      return
    }
    this.withdraw(row.id, 'drop')
  }

  /** Tab queues while a turn runs and nothing is being completed; otherwise it completes. */
  private isQueueTab(): boolean {
    const text = this.editor.getText()
    if (this.editor.isShowingAutocomplete() || text.trim() === '' || text.startsWith('/'))
      return false
    if (/(^|\s)@\S*$/.test(text)) return false
    return this.runtime?.agent.status !== 'idle'
  }

  /** Esc: the turn ends `canceled`; the text of every discarded input comes back to the editor. */
  private cancel(): void {
    const runtime = this.runtime
    if (!runtime) return
    const { discarded } = runtime.agent.cancel({ keepQueue: false })
    const texts = discarded.map((item) => textOf(item.data)).filter((text) => text.trim() !== '')
    for (const item of discarded) this.inputs.forget(item.id)
    if (texts.length > 0) {
      const current = this.editor.getText()
      this.editor.setText([...texts, ...(current === '' ? [] : [current])].join('\n'))
    }
  }

  private async submit(text: string, how: 'enter' | 'queue'): Promise<void> {
    if (text.trim() === '') return
    // Typed after `/new`, `/resume` or `/fork` was submitted: it goes to the session they open.
    if (this.switching) await this.switching
    const runtime = this.runtime
    if (!runtime) {
      this.putBack(text, 'no session is open yet')
      return
    }
    if (how === 'enter') this.editor.addToHistory(text)
    this.note = []
    for (const input of this.inputs.all) if (isSettled(input)) this.inputs.forget(input.id)
    const command = parseCommand(text, this.prompts)
    try {
      if (command?.kind === 'builtin') return await this.runCommand(command.name, command.argument)
      if (command?.kind === 'unknown')
        return this.setNote([
          this.options.theme.error(`unknown command /${command.name}; /help lists the commands`),
        ])
      const data: UserMessageData =
        command?.kind === 'prompt'
          ? await runtime.mcp.promptMessage(
              command.command.server,
              command.command.prompt,
              promptArguments(command.command, command.argument),
            )
          : { content: [{ type: 'text', text }], source: { kind: 'user' } }
      const contexts = await mentionContexts(text, runtime, this.options.host.store)
      if (this.runtime !== runtime)
        return this.putBack(text, 'the session changed before this was sent')
      const { agent } = runtime
      for (const context of contexts) agent.inject(context)
      const isSteer = how === 'enter' && agent.status !== 'idle'
      const delivery = isSteer ? agent.steer(data) : agent.send(data)
      this.inputs.track({ id: delivery.id, kind: isSteer ? 'steering' : 'prompt', data })
      this.inputs.applyPending(agent.pending())
      delivery.result.then(
        () => this.options.tui.requestRender(),
        () => this.options.tui.requestRender(),
      )
    } catch (error) {
      // Nothing was sent: the text goes back to the editor with the reason.
      if (this.editor.getText() === '') this.editor.setText(text)
      this.setNote([this.options.theme.error(messageOf(error))])
    } finally {
      this.options.tui.requestRender()
    }
  }

  /** Nothing was sent: the text comes back to the editor (if it is empty) with the reason. */
  private putBack(text: string, why: string): void {
    if (this.editor.getText() === '') this.editor.setText(text)
    this.setNote([this.options.theme.error(`${why}; press Enter to send it`)])
    this.options.tui.requestRender()
  }

  private runCommand(name: CommandName, argument: string): Promise<void> {
    const runtime = this.runtime as SessionRuntime
    return runSlashCommand(name, argument, {
      runtime,
      store: this.options.host.store,
      theme: this.options.theme,
      sessionId: () => this.sessionId,
      open: (choice) => this.open(choice),
      note: (lines) => this.setNote(lines),
      showDialog: (dialog) => {
        this.dialog = dialog
        this.options.tui.requestRender()
      },
      track: (id, data) => this.inputs.track({ id, kind: 'context', data }),
      trust: () => this.trustDirectory(runtime),
      withdraw: (argument) => this.withdrawNumbered(argument),
      quit: (code) => this.quit(code),
    })
  }

  private async trustDirectory(runtime: SessionRuntime): Promise<void> {
    const { host, theme } = this.options
    const location = this.locationOf(runtime)
    if (isDirectoryTrusted(location, runtime.cwd))
      return this.setNote([theme.dim(`${runtime.cwd} is trusted already`)])
    trustDirectory(location, runtime.cwd)
    // The project config applies when a session is opened: reopen this one under it.
    const id = runtime.session.header.id
    this.detach?.()
    await runtime.close()
    this.runtime = undefined
    await this.attach(await host.openSession({ choice: { kind: 'resume', id } }))
    this.setNote([theme.dim(`trusted ${runtime.cwd}; its .rudder/config.json applies in full`)])
  }

  private locationOf(runtime: SessionRuntime) {
    return { cwd: runtime.cwd, env: this.env, home: this.home }
  }

  /**
   * Issue 9 item 1: settings of an untrusted project were set aside (provider endpoints, looser
   * approval, hooks, MCP servers); ask once per run whether to trust the directory.
   */
  private askTrustOnce(runtime: SessionRuntime): void {
    if (this.hasAskedTrust) return
    const location = this.locationOf(runtime)
    if (isDirectoryTrusted(location, runtime.cwd)) return
    const what = [
      ...runtime.config.notices
        .filter((notice) => notice.command !== undefined)
        .map((notice) => `${notice.file} sets ${notice.keys.join(', ')}`),
      ...chooseMcpServers(location, runtime.config, false).ignored.map(
        ({ file, names }) => `${file} starts the MCP servers ${names.join(', ')}`,
      ),
    ]
    if (what.length === 0) return
    this.hasAskedTrust = true
    this.dialog = {
      kind: 'confirm',
      title: `${what.join('; ')}: these apply only in a directory you trust. Trust ${runtime.cwd}? (y/n)`,
      onAnswer: (isYes) => {
        if (isYes)
          void this.trustDirectory(runtime).catch((error: unknown) =>
            this.setNote([this.options.theme.error(messageOf(error))]),
          )
        else
          this.setNote([
            this.options.theme.dim(
              `not trusted; /trust (or rudder trust ${runtime.cwd}) trusts it later`,
            ),
          ])
      },
    }
  }

  /** The approval control's asker: an inline prompt; the turn waits for the answer. */
  private ask(question: ApprovalQuestion): Promise<ApprovalAnswer> {
    return new Promise((resolveAnswer) => {
      const done = (answer: ApprovalAnswer) => {
        if (this.dialog?.kind === 'approve' && this.dialog.question === question)
          this.dialog = undefined
        resolveAnswer(answer)
        this.options.tui.requestRender()
      }
      question.signal.addEventListener('abort', () => done({ kind: 'deny', reason: 'canceled' }), {
        once: true,
      })
      this.dialog = {
        kind: 'approve',
        question,
        reason: undefined,
        onAnswer: (answer, isCancel) => {
          done(answer)
          if (isCancel) this.cancel()
        },
      }
      this.options.tui.requestRender()
    })
  }

  /** Redraws the status line each second while a retry waits, so its countdown moves. */
  private countDown(delayMs: number): void {
    this.retryAt = Date.now() + delayMs
    const retryAt = this.retryAt
    const tick = () => {
      this.options.tui.requestRender()
      if (this.retryAt === retryAt && Date.now() < retryAt && !this.hasQuit)
        setTimeout(tick, Math.min(1000, retryAt - Date.now())).unref()
    }
    tick()
  }

  private showNotice(notice: Notice): void {
    if (notice.sessionId !== undefined && notice.sessionId !== this.sessionId) return
    const text = notice.source === 'rudder' ? notice.message : `${notice.source}: ${notice.message}`
    this.setNote([...this.note, this.options.theme.warning(printable(text))])
  }

  private setNote(lines: string[]): void {
    this.note = lines
    this.options.tui.requestRender()
  }

  private quit(code: number): void {
    if (this.hasQuit) return
    this.hasQuit = true
    this.options.onQuit(code)
  }

  private get env() {
    return this.options.env
  }

  private get home() {
    return this.options.home
  }

  // --- output ----------------------------------------------------------------------------

  /** The whole screen: transcript, notes, pending panel, dialog or editor, status line. */
  private render(width: number): string[] {
    const { theme, tui } = this.options
    const height = tui.terminal.rows
    const bottom: string[] = []
    for (const line of this.note.slice(-Math.max(1, Math.floor(height / 2))))
      bottom.push(...line.split('\n').map((part) => clip(part, width)))
    // A selected row that reached the log hands the selection to the newest one left; with
    // none left the panel keeps the focus, so the next Esc leaves it instead of canceling.
    const rows = withdrawableInputs(this.inputs)
    if (this.panelSelection !== undefined && rows.length > 0)
      if (!rows.some((input) => input.id === this.panelSelection))
        this.panelSelection = rows.at(-1)?.id
    bottom.push(...pendingLines(this.inputs, width, theme, this.panelSelection))
    if (this.dialog) bottom.push(...dialogLines(this.dialog, width, theme))
    else bottom.push(...this.editor.render(width))
    const now = Date.now()
    const runtime = this.runtime
    if (runtime)
      bottom.push(
        statusLine(
          {
            label: runtime.label,
            sessionId: runtime.session.header.id,
            store: this.options.host.store.url,
            status: this.transcript.status,
            now,
            ...(this.retryAt === undefined ? {} : { retryAt: this.retryAt }),
            ...(this.flash && this.flash.until > now ? { flash: this.flash.text } : {}),
          },
          width,
          theme,
        ),
      )
    const transcriptHeight = Math.max(0, height - bottom.length)
    return [...this.view.render(width, transcriptHeight), ...bottom].slice(-height)
  }
}

/** One printable ASCII character, as typed on a legacy or kitty keyboard alike. */
function isPrintableCharacter(data: string): boolean {
  if (data.length !== 1) return false
  const code = data.charCodeAt(0)
  return code >= 0x20 && code <= 0x7e
}

function textOf(data: UserMessageData | undefined): string {
  if (!data) return ''
  return data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

function messageOf(error: unknown): string {
  if (error instanceof MentionError) return error.message
  return error instanceof Error ? error.message : String(error)
}
