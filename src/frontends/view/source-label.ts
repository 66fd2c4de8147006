/**
 * How front ends name the producer of a message, so injected context is shown by its source
 * (`plugin:workspace-context`, `hook:prompt-submit:guard.sh`, `reference:<id>@41`).
 * Browser-safe: no Node APIs, type-only imports.
 */
import type { MessageSource } from '../../index.js'

/** The role a user-side message plays in a transcript. */
export type UserMessageRole = 'prompt' | 'context' | 'reference'

/** A person's message is a prompt; a cross-session snapshot a reference; anything else context. */
export function roleOf(source: MessageSource): UserMessageRole {
  if (source.kind === 'user') return 'prompt'
  if (source.kind === 'reference') return 'reference'
  return 'context'
}

/** A short, stable label for a message's producer. Unknown kinds show as their kind. */
export function sourceLabel(source: MessageSource): string {
  switch (source.kind) {
    case 'user':
      return 'user'
    case 'hook':
      return `hook:${String(source.hook)}:${String(source.name)}`
    case 'plugin':
      return `plugin:${String(source.name)}`
    case 'reference':
      return `reference:${String(source.sessionId)}@${String(source.throughSeq)}`
    default:
      return String(source.kind)
  }
}
