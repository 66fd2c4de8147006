/**
 * The screen while the host opens (issue 12 item 10, docs/decisions/0083): the editor, focused
 * and taking keystrokes, the prompts submitted so far as queued rows, and a `starting…` status
 * line. It loads nothing but pi-tui and the theme, so it is drawn before the config, store,
 * provider and tools are loaded. The App takes its editor over, text and history included, and
 * sends the queued prompts in order once the session is open: nothing typed here is lost.
 */
// pi-tui's modules one by one, not its index: the index also loads Markdown (marked), images and
// autocompletion, which the first frame does not need (docs/decisions/0083; the version is pinned).
import type { Editor } from '@mariozechner/pi-tui/dist/components/editor.js'
import { matchesKey } from '@mariozechner/pi-tui/dist/keys.js'
import type { Component, TUI } from '@mariozechner/pi-tui/dist/tui.js'
import { truncateToWidth } from '@mariozechner/pi-tui/dist/utils.js'
import { CachedEditor } from './cached-editor.js'
import type { Theme } from './theme.js'

/** A second Ctrl-C within this window quits (as in the App). */
const DOUBLE_PRESS_MS = 1500

export type StartupScreenOptions = {
  readonly tui: TUI
  readonly theme: Theme
  /** Called when the person quits before the session is open (Ctrl-C twice, Ctrl-D). */
  readonly onQuit: (code: number) => void
}

export class StartupScreen {
  readonly editor: Editor
  /** Prompts submitted while starting, oldest first; the App sends them once it is ready. */
  readonly queued: string[] = []
  private readonly screen: Component
  private readonly stopKeys: () => void
  private lastInterruptAt = 0

  constructor(private readonly options: StartupScreenOptions) {
    const { tui, theme } = options
    this.editor = new CachedEditor(tui, theme.editor)
    this.editor.onSubmit = (text) => {
      if (text.trim() === '') return
      this.editor.addToHistory(text)
      this.queued.push(text)
      tui.requestRender()
    }
    this.screen = { render: (width) => this.render(width), invalidate: () => {} }
    tui.addChild(this.screen)
    tui.setFocus(this.editor)
    this.stopKeys = tui.addInputListener((data) =>
      this.handleKey(data) ? { consume: true } : undefined,
    )
  }

  /** Gives the screen up (the App draws from now on); returns the editor and the queued prompts. */
  handOver(): { readonly editor: Editor; readonly queued: readonly string[] } {
    this.stopKeys()
    this.options.tui.removeChild(this.screen)
    return { editor: this.editor, queued: this.queued }
  }

  private handleKey(data: string): boolean {
    if (matchesKey(data, 'ctrl+c')) {
      const now = Date.now()
      if (now - this.lastInterruptAt < DOUBLE_PRESS_MS) this.options.onQuit(130)
      else this.editor.setText('')
      this.lastInterruptAt = now
      this.options.tui.requestRender()
      return true
    }
    if (matchesKey(data, 'ctrl+d') && this.editor.getText() === '') {
      this.options.onQuit(0)
      return true
    }
    return false
  }

  private render(width: number): string[] {
    const { theme, tui } = this.options
    const clip = (line: string) => truncateToWidth(line, width)
    const bottom = [
      ...this.queued.map((text) =>
        clip(`${theme.accent('◦')} prompt ${theme.dim('[queued]')} ${oneLine(text)}`),
      ),
      ...this.editor.render(width),
      clip(theme.dim('rudder · starting…')),
    ]
    const height = tui.terminal.rows
    const blank = Array.from({ length: Math.max(0, height - bottom.length) }, () => '')
    return [...blank, ...bottom].slice(-height)
  }
}

/** The text on one line, control characters (a pasted escape sequence) shown as spaces. */
function oneLine(text: string): string {
  return [...text]
    .map((char) => ((char.codePointAt(0) ?? 0) < 32 || char === '\x7f' ? ' ' : char))
    .join('')
}
