/**
 * Colours of the terminal UI. With `NO_COLOR` set, or a dumb terminal, every style is the
 * identity, so the screen carries text only (issue 12 item 9).
 */
import type { EditorTheme, MarkdownTheme, SelectListTheme } from '@mariozechner/pi-tui'

type Style = (text: string) => string

export type Theme = {
  readonly isColored: boolean
  readonly dim: Style
  readonly bold: Style
  readonly accent: Style
  readonly prompt: Style
  readonly context: Style
  readonly steering: Style
  readonly ok: Style
  readonly error: Style
  readonly warning: Style
  readonly inverse: Style
  readonly markdown: MarkdownTheme
  readonly editor: EditorTheme
  readonly selectList: SelectListTheme
}

/** Whether colours are wanted in this environment. */
export function wantsColor(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  return env.TERM !== 'dumb'
}

export function createTheme(isColored: boolean): Theme {
  const sgr =
    (open: string, close: string): Style =>
    (text) =>
      isColored ? `\x1b[${open}m${text}\x1b[${close}m` : text
  const plain: Style = (text) => text
  const dim = sgr('2', '22')
  const bold = sgr('1', '22')
  const accent = sgr('36', '39')
  const italic = sgr('3', '23')
  const selectList: SelectListTheme = {
    selectedPrefix: accent,
    selectedText: bold,
    description: dim,
    scrollInfo: dim,
    noMatch: dim,
  }
  return {
    isColored,
    dim,
    bold,
    accent,
    prompt: sgr('1;34', '22;39'),
    context: sgr('35', '39'),
    steering: sgr('33', '39'),
    ok: sgr('32', '39'),
    error: sgr('31', '39'),
    warning: sgr('33', '39'),
    inverse: sgr('7', '27'),
    markdown: {
      heading: bold,
      link: accent,
      linkUrl: dim,
      code: accent,
      codeBlock: plain,
      codeBlockBorder: dim,
      quote: italic,
      quoteBorder: dim,
      hr: dim,
      listBullet: accent,
      bold,
      italic,
      strikethrough: sgr('9', '29'),
      underline: sgr('4', '24'),
    },
    editor: { borderColor: dim, selectList },
    selectList,
  }
}
