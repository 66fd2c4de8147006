/**
 * A pi-tui `Terminal` with no tty behind it: every write goes to `write`, every control call
 * does nothing. For renderer tests that read what was written.
 */
import type { Terminal } from '@mariozechner/pi-tui'

export function fakeTerminal(options: {
  readonly columns: number
  readonly rows: number
  readonly write: (data: string) => void
}): Terminal {
  const terminal = {
    start: () => {},
    stop: () => {},
    drainInput: async () => {},
    write: options.write,
    columns: options.columns,
    rows: options.rows,
    kittyProtocolActive: false,
    moveBy: () => {},
    hideCursor: () => {},
    showCursor: () => {},
    clearLine: () => {},
    clearFromCursor: () => {},
    clearScreen: () => {},
    setTitle: () => {},
    setProgress: () => {},
  }
  return terminal as unknown as Terminal
}
