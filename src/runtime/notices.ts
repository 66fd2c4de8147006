/**
 * Notices for the person using rudder, never for the model: ignored untrusted project config,
 * a hook's `systemMessage`, an MCP server that failed to start. Front ends show them (the CLI
 * on stderr, the terminal UI and web page as a notice line, ACP as a message to the editor).
 */

export type Notice = {
  readonly level: 'info' | 'warning' | 'error'
  /** Who says it: `config`, `hook:PreToolUse`, `mcp:github`. */
  readonly source: string
  readonly message: string
  /** The session it concerns; absent for the host as a whole. */
  readonly sessionId?: string
}

export type NoticeListener = (notice: Notice) => void

/** Keeps every notice published, and tells listeners of each new one. */
export interface NoticeBoard {
  /** Every notice so far, oldest first (a front end that starts late shows these first). */
  readonly all: readonly Notice[]
  publish(notice: Notice): void
  /** Notified of every notice published after subscribing. Returns an unsubscribe function. */
  subscribe(listener: NoticeListener): () => void
}

export function createNoticeBoard(): NoticeBoard {
  const all: Notice[] = []
  const listeners = new Set<NoticeListener>()
  return {
    get all() {
      return [...all]
    },
    publish(notice) {
      const frozen = Object.freeze({ ...notice })
      all.push(frozen)
      for (const listener of [...listeners]) {
        try {
          listener(frozen)
        } catch (error) {
          // A listener that fails to show a notice cannot be told through the board itself.
          console.error('rudder: a notice listener threw:', error)
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
  }
}
