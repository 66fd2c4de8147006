/**
 * The approval question as `session/request_permission`: allow once / allow always / reject
 * once / reject always, mapped onto the runtime's `Asker` answer. "Always" becomes a session
 * rule (the approval control keeps it). A request the editor fails, or answers `cancelled`,
 * refuses the call (fail closed) and the model is told why (docs/decisions/0036).
 */
import { readFile, stat } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { ApprovalAnswer, ApprovalQuestion, Asker } from '../../runtime/approval-control.js'
import { describeToolCall } from './tool-calls.js'

type OptionId = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always'

const OPTIONS: readonly acp.PermissionOption[] = [
  { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' },
]

/** Old files larger than this are not read to show a write's diff in the question. */
const DIFF_READ_LIMIT = 256 * 1024

export type PermissionBridgeOptions = {
  readonly client: acp.AgentContext
  readonly sessionId: string
  readonly cwd: string
}

/** An `Asker` that puts each question to the editor of one session. */
export function permissionAsker(options: PermissionBridgeOptions): Asker {
  return async (question) => {
    const toolCall = await questionToolCall(question, options.cwd)
    let response: acp.RequestPermissionResponse
    try {
      response = await options.client.request(
        'session/request_permission',
        { sessionId: options.sessionId, toolCall, options: [...OPTIONS] },
        { cancellationSignal: question.signal, stopWaitingOnCancel: true },
      )
    } catch (error) {
      if (question.signal.aborted) throw new Error('the turn was canceled while it waited')
      throw new Error(
        `the editor's permission request failed (${error instanceof Error ? error.message : String(error)})`,
      )
    }
    return answerOf(response)
  }
}

/** Maps the editor's choice onto the approval answer; an unknown choice refuses. */
export function answerOf(response: acp.RequestPermissionResponse): ApprovalAnswer {
  const outcome = response.outcome
  if (outcome.outcome === 'cancelled')
    return { kind: 'deny', reason: 'the permission request was cancelled' }
  const optionId = outcome.optionId as OptionId
  switch (optionId) {
    case 'allow_once':
      return { kind: 'allow' }
    case 'allow_always':
      return { kind: 'allow', always: true }
    case 'reject_once':
      return { kind: 'deny' }
    case 'reject_always':
      return { kind: 'deny', always: true }
    default:
      throw new Error(
        `the editor chose ${JSON.stringify(outcome.optionId)}, which is not one of the options offered`,
      )
  }
}

async function questionToolCall(
  question: ApprovalQuestion,
  cwd: string,
): Promise<acp.ToolCallUpdate> {
  const { call } = question
  const view = describeToolCall(call.name, call.args, cwd)
  const content = call.name === 'write' ? await writeDiff(call.args, cwd) : view.content
  return {
    toolCallId: call.id,
    title: view.title,
    kind: view.kind,
    status: 'pending',
    rawInput: call.args,
    ...(view.locations.length > 0 ? { locations: view.locations } : {}),
    ...(content.length > 0 ? { content } : {}),
    _meta: { rudder: { reason: question.reason } },
  }
}

/**
 * What a write would change, read from disk while the person decides: the whole new text
 * against the current file (`oldText: null` for a new file); nothing when it cannot be read.
 */
async function writeDiff(args: unknown, cwd: string): Promise<acp.ToolCallContent[]> {
  const { path, content } = (args ?? {}) as { path?: unknown; content?: unknown }
  if (typeof path !== 'string' || typeof content !== 'string') return []
  const file = isAbsolute(path) ? path : resolve(cwd, path)
  try {
    const stats = await stat(file)
    if (!stats.isFile() || stats.size > DIFF_READ_LIMIT) return []
    const oldText = await readFile(file, 'utf8')
    return [{ type: 'diff', path: file, oldText, newText: content }]
  } catch (error) {
    // No file yet: the write creates it. Any other failure: show nothing rather than guess.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return [{ type: 'diff', path: file, oldText: null, newText: content }]
    return []
  }
}
