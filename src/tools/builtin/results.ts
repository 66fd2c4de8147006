/**
 * Tool results as values. Failures the model can act on are error results whose text says
 * what went wrong and what to do next; they are never thrown.
 */
import type { ContentBlock, JsonValue } from '../../core/index.js'

/** The result shape every built-in tool returns. */
export type BuiltinResult = {
  readonly content: readonly ContentBlock[]
  readonly isError: boolean
  readonly meta?: JsonValue
}

/** A successful text result, with optional meta (kept in the log, never shown to the model). */
export function textResult(text: string, meta?: JsonValue): BuiltinResult {
  return meta === undefined
    ? { content: [{ type: 'text', text }], isError: false }
    : { content: [{ type: 'text', text }], isError: false, meta }
}

/** An error result: `message` says what is wrong and how the model can fix it. */
export function errorResult(message: string, meta?: JsonValue): BuiltinResult {
  return meta === undefined
    ? { content: [{ type: 'text', text: message }], isError: true }
    : { content: [{ type: 'text', text: message }], isError: true, meta }
}

/** The error result for a call whose signal was aborted before or while it ran. */
export function canceledResult(tool: string): BuiltinResult {
  return errorResult(`${tool} was canceled before it finished.`)
}

/** An error result for a failed file-system call, with advice that fits its errno code. */
export function fileErrorResult(display: string, error: unknown): BuiltinResult {
  const code = (error as NodeJS.ErrnoException).code
  const advice: Record<string, string> = {
    ENOENT: 'it does not exist; check the path with ls or glob',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EISDIR: 'it is a directory; use ls to list it',
    ENOTDIR: 'a part of the path is not a directory; check the path with ls',
    ELOOP: 'too many levels of symbolic links',
  }
  // Node's own messages name the absolute path; the model is shown workspace-relative paths.
  const path = (error as NodeJS.ErrnoException).path
  const message = (error as Error).message
  const reason =
    (code && advice[code]) ?? (path === undefined ? message : message.split(path).join(display))
  return errorResult(`${display}: ${reason}.`)
}
