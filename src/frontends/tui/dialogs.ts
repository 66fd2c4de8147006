/**
 * What takes the editor's place for a moment: the approval prompt (issue 12 item 6), the
 * `/resume` picker, a yes/no question (trusting a project). Each is plain data with a key
 * handler and its lines, so the app holds exactly one at a time.
 */
import { matchesKey } from '@mariozechner/pi-tui'
import { assertNever } from '../../index.js'
import type { ApprovalAnswer, ApprovalQuestion } from '../../runtime/approval-control.js'
import { clip } from './item-lines.js'
import type { Theme } from './theme.js'

export type PickItem = {
  readonly value: string
  readonly label: string
  readonly description?: string
}

export type Dialog =
  | {
      readonly kind: 'approve'
      readonly question: ApprovalQuestion
      /** The reason being typed after "deny", or undefined while choosing. */
      reason: string | undefined
      /** `isCancel`: Esc, which also cancels the turn. */
      readonly onAnswer: (answer: ApprovalAnswer, isCancel: boolean) => void
    }
  | {
      readonly kind: 'pick'
      readonly title: string
      readonly items: readonly PickItem[]
      filter: string
      selected: number
      readonly onPick: (value: string) => void
    }
  | {
      readonly kind: 'confirm'
      readonly title: string
      readonly onAnswer: (isYes: boolean) => void
    }

/** Rows of the picker shown at once. */
const PICK_ROWS = 10

/** Handles one key; 'close' when the dialog is done. */
export function handleDialogKey(dialog: Dialog, data: string): 'close' | 'open' {
  switch (dialog.kind) {
    case 'approve':
      return approveKey(dialog, data)
    case 'pick':
      return pickKey(dialog, data)
    case 'confirm': {
      if (data === 'y' || data === 'Y') dialog.onAnswer(true)
      else if (data === 'n' || data === 'N' || matchesKey(data, 'escape')) dialog.onAnswer(false)
      else return 'open'
      return 'close'
    }
    default:
      return assertNever(dialog)
  }
}

function approveKey(dialog: Extract<Dialog, { kind: 'approve' }>, data: string): 'close' | 'open' {
  if (matchesKey(data, 'escape') || matchesKey(data, 'ctrl+c')) {
    dialog.onAnswer({ kind: 'deny', reason: 'The user canceled the turn.' }, true)
    return 'close'
  }
  if (dialog.reason !== undefined) {
    if (matchesKey(data, 'enter')) {
      const reason = dialog.reason.trim()
      dialog.onAnswer(reason === '' ? { kind: 'deny' } : { kind: 'deny', reason }, false)
      return 'close'
    }
    if (matchesKey(data, 'backspace')) dialog.reason = dialog.reason.slice(0, -1)
    else if (isPrintable(data)) dialog.reason += data
    return 'open'
  }
  switch (data) {
    case 'y':
    case 'Y':
      dialog.onAnswer({ kind: 'allow' }, false)
      return 'close'
    case 'a':
    case 'A':
      dialog.onAnswer({ kind: 'allow', always: true }, false)
      return 'close'
    case 'n':
    case 'N':
      dialog.reason = ''
      return 'open'
    default:
      return 'open'
  }
}

function pickKey(dialog: Extract<Dialog, { kind: 'pick' }>, data: string): 'close' | 'open' {
  const shown = filtered(dialog)
  if (matchesKey(data, 'escape')) return 'close'
  if (matchesKey(data, 'enter')) {
    const item = shown[dialog.selected]
    if (!item) return 'open'
    dialog.onPick(item.value)
    return 'close'
  }
  if (matchesKey(data, 'up')) dialog.selected = Math.max(0, dialog.selected - 1)
  else if (matchesKey(data, 'down'))
    dialog.selected = Math.min(shown.length - 1, dialog.selected + 1)
  else if (matchesKey(data, 'backspace')) {
    dialog.filter = dialog.filter.slice(0, -1)
    dialog.selected = 0
  } else if (isPrintable(data)) {
    dialog.filter += data
    dialog.selected = 0
  }
  return 'open'
}

function filtered(dialog: Extract<Dialog, { kind: 'pick' }>): readonly PickItem[] {
  const words = dialog.filter.toLowerCase().split(/\s+/).filter(Boolean)
  if (words.length === 0) return dialog.items
  return dialog.items.filter((item) => {
    const haystack = `${item.label} ${item.value}`.toLowerCase()
    return words.every((word) => haystack.includes(word))
  })
}

export function dialogLines(dialog: Dialog, width: number, theme: Theme): string[] {
  const rule = theme.dim('─'.repeat(Math.max(0, width)))
  switch (dialog.kind) {
    case 'approve': {
      const { call, reason } = dialog.question
      const args = JSON.stringify(call.args)
      const lines = [
        rule,
        clip(theme.warning(`Allow ${theme.bold(call.name)}? ${reason}`), width),
        clip(`  ${args.length > 400 ? `${args.slice(0, 399)}…` : args}`, width),
      ]
      if (dialog.reason === undefined)
        lines.push(
          clip(
            `  ${theme.bold('y')} allow once · ${theme.bold('a')} allow for this session · ${theme.bold('n')} deny with a reason · ${theme.bold('Esc')} deny and cancel the turn`,
            width,
          ),
        )
      else lines.push(clip(`  reason for the model (Enter to deny): ${dialog.reason}▏`, width))
      return [...lines, rule]
    }
    case 'pick': {
      const shown = filtered(dialog)
      const start = Math.max(0, Math.min(dialog.selected - PICK_ROWS + 1, shown.length - PICK_ROWS))
      const lines = [
        rule,
        clip(theme.bold(dialog.title), width),
        clip(`  search: ${dialog.filter}▏`, width),
      ]
      for (const [offset, item] of shown.slice(start, start + PICK_ROWS).entries()) {
        const isSelected = start + offset === dialog.selected
        const text = `${isSelected ? '›' : ' '} ${item.label}  ${theme.dim(item.description ?? '')}`
        lines.push(clip(isSelected ? theme.accent(text) : text, width))
      }
      if (shown.length === 0) lines.push(theme.dim('  no session matches'))
      else lines.push(theme.dim(clip(`  ${shown.length} of ${dialog.items.length}`, width)))
      return [...lines, rule]
    }
    case 'confirm':
      return [rule, ...wrapPlain(dialog.title, width).map((line) => theme.warning(line)), rule]
    default:
      return assertNever(dialog)
  }
}

function wrapPlain(text: string, width: number): string[] {
  const lines: string[] = []
  let rest = text
  while (rest.length > width && width > 0) {
    const cut = rest.lastIndexOf(' ', width) > 0 ? rest.lastIndexOf(' ', width) : width
    lines.push(rest.slice(0, cut))
    rest = rest.slice(cut).trimStart()
  }
  lines.push(rest)
  return lines
}

function isPrintable(data: string): boolean {
  for (const char of data) {
    const code = char.codePointAt(0) ?? 0
    if (code < 0x20 || code === 0x7f) return false
  }
  return data.length > 0
}
