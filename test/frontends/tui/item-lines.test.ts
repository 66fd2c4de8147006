/**
 * Transcript items as lines: what a tool printed or a model wrote never reaches the terminal
 * as control sequences (they would move the cursor and break the screen), context is folded
 * with its producer's label, and a tool card shows the tail of its output.
 */
import { describe, expect, it } from 'vitest'
import { itemLines, printable } from '../../../src/frontends/tui/item-lines.js'
import { createTheme } from '../../../src/frontends/tui/theme.js'
import type { TranscriptItem } from '../../../src/frontends/view/transcript-model.js'

const ESC = String.fromCharCode(27)
const plain = { width: 60, isExpanded: false, theme: createTheme(false) }

describe('item lines', () => {
  it('strips escape sequences and control characters, keeps text and newlines', () => {
    expect(
      printable(
        `a\tb${ESC}[31mred${ESC}[0m\r\nnext\u0007${ESC}]0;title\u0007ok${ESC}]8;;http://x${ESC}\\link`,
      ),
    ).toBe('a    bred\nnextoklink')
  })

  it("shows a bash card's status and the tail of its output, without its colours", () => {
    const output = Array.from(
      { length: 20 },
      (_, index) => `${ESC}[32mline ${index}${ESC}[0m`,
    ).join('\n')
    const item: TranscriptItem = {
      kind: 'tool',
      key: 'tool:1',
      callId: '1',
      name: 'bash',
      args: { command: 'npm test' },
      turn: 1,
      step: 1,
      status: 'ok',
      durationMs: 1500,
      output,
    }
    const lines = itemLines(item, plain)
    expect(lines[0]).toBe('✓ bash npm test ok 1.5s')
    expect(lines[1]).toBe('  ⋮ 14 more lines')
    expect(lines.slice(2)).toEqual(Array.from({ length: 6 }, (_, index) => `  line ${14 + index}`))
    expect(lines.join('\n')).not.toContain(ESC)
    expect(itemLines(item, { ...plain, isExpanded: true })).toHaveLength(21)
  })

  it('folds context to one line labelled by its source, its text verbatim when expanded', () => {
    const item: TranscriptItem = {
      kind: 'user',
      key: 'seq:1',
      seq: 1,
      id: 'm1',
      role: 'context',
      source: { kind: 'hook', hook: 'prompt-submit', name: 'guard.sh' },
      label: 'hook:prompt-submit:guard.sh',
      text: 'first\n  second',
      images: 0,
    }
    expect(itemLines(item, plain)).toEqual([
      '▸ hook:prompt-submit:guard.sh (2 lines, Ctrl-O to expand)',
    ])
    expect(itemLines(item, { ...plain, isExpanded: true })).toEqual([
      '▸ hook:prompt-submit:guard.sh (2 lines)',
      '  first',
      '    second',
    ])
  })
})
