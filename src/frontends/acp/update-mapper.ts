/**
 * The log as `session/update`s. One mapper serves both the live stream of a running session
 * and the replay of `session/load`, so what an editor shows after a reload is what it showed
 * live:
 * - user-role events become `user_message_chunk`s carrying `_meta.rudder { source, type, seq }`,
 *   so a client can tell a person's prompt from steering and injected context;
 * - assistant text and thinking become `agent_message_chunk` / `agent_thought_chunk` (live from
 *   the streamed deltas, in replay from the logged message);
 * - each tool call is announced as `tool_call` when the assistant message is logged, moves to
 *   `in_progress` at `tool/call` and ends with a `tool_call_update` carrying its final status
 *   and content (an edit's diff, bash output as text or as Zed's terminal `_meta`);
 * - a plan a tool reports becomes `plan`; usage after each response becomes `usage_update`
 *   when the model's context window is known; a retry becomes a `notice` when the client
 *   takes notices; a compaction becomes a `compaction_update` when the client takes those.
 */
import type * as acp from '@agentclientprotocol/sdk/unstable'
import {
  type AgentNotification,
  assertNever,
  type ContentBlock,
  isCoreEvent,
  type JsonValue,
  type MessageSource,
  type SessionEvent,
  type Usage,
} from '../../index.js'
import { ACP_SOURCE, toAcpBlock } from './prompt-content.js'
import { describeToolCall, exitOf, planOf, resultContent } from './tool-calls.js'

export type MapperOptions = {
  /** `live`: deltas carry the assistant's text and the client's own input is not echoed. */
  readonly mode: 'live' | 'replay'
  /** The session's workspace, to make paths absolute. */
  readonly cwd: string
  /** The client advertised Zed's terminal convention (`clientCapabilities._meta.terminal_output`). */
  readonly terminalOutput: boolean
  readonly notices: boolean
  readonly compaction: boolean
  /** The current model's context window, for `usage_update`; undefined when unknown. */
  readonly contextWindow: () => number | undefined
}

export interface UpdateMapper {
  /** The updates for one durable event (in seq order). */
  event(event: SessionEvent): acp.SessionUpdate[]
  /** The updates for one live notification (live mode only; replay has none). */
  notification(notification: AgentNotification): acp.SessionUpdate[]
}

/** Streamed bash output kept for clients without the terminal convention (its tail). */
const OUTPUT_TAIL = 8_000

type CallState = {
  readonly name: string
  args: JsonValue
  /** Output streamed so far (tail), for clients without the terminal convention. */
  output: string
  hasStreamed: boolean
}

export function createUpdateMapper(options: MapperOptions): UpdateMapper {
  const calls = new Map<string, CallState>()
  const isLive = options.mode === 'live'
  const usesTerminal = (name: string) => options.terminalOutput && name === 'bash'

  function userChunks(
    type: 'user/message' | 'steering/message',
    data: { readonly content: readonly ContentBlock[]; readonly source: MessageSource },
    seq: number,
  ): acp.SessionUpdate[] {
    // Live, the client already shows what it sent itself: the person's prompt and its attachments.
    if (isLive && isFromClient(data.source)) return []
    const _meta = { rudder: { source: data.source, type, seq } }
    return data.content.map((block) => ({
      sessionUpdate: 'user_message_chunk',
      content: toAcpBlock(block),
      _meta,
    }))
  }

  function announce(callId: string, name: string, args: JsonValue): acp.SessionUpdate {
    calls.set(callId, { name, args, output: '', hasStreamed: false })
    const view = describeToolCall(name, args, options.cwd)
    const terminal = usesTerminal(name)
    return {
      sessionUpdate: 'tool_call',
      toolCallId: callId,
      title: view.title,
      kind: view.kind,
      status: 'pending',
      rawInput: args,
      ...(view.locations.length > 0 ? { locations: view.locations } : {}),
      ...(terminal
        ? {
            content: [{ type: 'terminal', terminalId: callId }],
            _meta: { terminal_info: { terminal_id: callId, cwd: options.cwd } },
          }
        : view.content.length > 0
          ? { content: view.content }
          : {}),
    }
  }

  function finish(data: {
    readonly callId: string
    readonly name: string
    readonly content: readonly ContentBlock[]
    readonly isError: boolean
    readonly meta?: JsonValue
  }): acp.SessionUpdate[] {
    const call = calls.get(data.callId)
    calls.delete(data.callId)
    const args = call?.args ?? null
    const status = data.isError ? 'failed' : 'completed'
    const updates: acp.SessionUpdate[] = []
    if (usesTerminal(data.name)) {
      const { exitCode, signal } = exitOf(data.meta)
      const text = data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
      updates.push({
        sessionUpdate: 'tool_call_update',
        toolCallId: data.callId,
        status,
        ...(data.meta === undefined ? {} : { rawOutput: data.meta }),
        _meta: {
          // Output already streamed is on the client's terminal; otherwise send it whole.
          ...(call?.hasStreamed
            ? {}
            : { terminal_output: { terminal_id: data.callId, data: text } }),
          terminal_exit: { terminal_id: data.callId, exit_code: exitCode, signal },
        },
      })
    } else {
      updates.push({
        sessionUpdate: 'tool_call_update',
        toolCallId: data.callId,
        status,
        content: resultContent(data, args, options.cwd),
        ...(data.meta === undefined ? {} : { rawOutput: data.meta }),
      })
    }
    const plan = planOf(data.meta)
    if (plan) updates.push({ sessionUpdate: 'plan', entries: plan })
    return updates
  }

  function usage(used: Usage): acp.SessionUpdate[] {
    const size = options.contextWindow()
    if (size === undefined) return []
    const tokens = used.inputTokens + used.outputTokens
    return [{ sessionUpdate: 'usage_update', used: Math.min(tokens, size), size }]
  }

  return {
    event(event) {
      if (!isCoreEvent(event)) return []
      switch (event.type) {
        case 'user/message':
        case 'steering/message':
          return userChunks(event.type, event.data, event.seq)
        case 'assistant/message': {
          const updates: acp.SessionUpdate[] = []
          for (const block of event.data.content) {
            if (block.type === 'tool-call') updates.push(announce(block.id, block.name, block.args))
            else if (!isLive)
              updates.push({
                sessionUpdate:
                  block.type === 'text' ? 'agent_message_chunk' : 'agent_thought_chunk',
                content: { type: 'text', text: block.text },
              })
          }
          if (isLive) updates.push(...usage(event.data.usage))
          return updates
        }
        case 'tool/call': {
          const call = calls.get(event.data.callId)
          // The args a hook replaced are what runs; the call shows them.
          if (call) call.args = event.data.args
          return [
            {
              sessionUpdate: 'tool_call_update',
              toolCallId: event.data.callId,
              status: 'in_progress',
              rawInput: event.data.args,
            },
          ]
        }
        case 'tool/result':
          return finish(event.data)
        case 'compaction':
          if (!options.compaction) return []
          return [
            {
              sessionUpdate: 'compaction_update',
              compactionId: event.data.id,
              status: 'completed',
              summary: event.data.summary.map(toAcpBlock),
            },
          ]
        case 'turn/start':
        case 'turn/end':
        case 'step/start':
        case 'step/end':
        case 'request/header':
          return []
        default:
          return assertNever(event)
      }
    },
    notification(notification) {
      switch (notification.type) {
        case 'assistant/delta':
          return [
            {
              sessionUpdate:
                notification.kind === 'text' ? 'agent_message_chunk' : 'agent_thought_chunk',
              content: { type: 'text', text: notification.text },
            },
          ]
        case 'tool/progress':
          return progress(notification.callId, notification.name, notification.progress)
        case 'request/retry':
          if (!options.notices) return []
          return [
            {
              sessionUpdate: 'notice',
              severity: 'warning',
              title: `The model request failed (${notification.error.message}); retrying in ${Math.round(notification.delayMs / 100) / 10}s (attempt ${notification.attempt})`,
            },
          ]
        case 'status/change':
        case 'request/start':
        case 'delivery/end':
        case 'compaction/request':
        case 'listener/error':
          return []
        default:
          return assertNever(notification)
      }
    },
  }

  function progress(callId: string, name: string, value: JsonValue): acp.SessionUpdate[] {
    const call = calls.get(callId)
    const output =
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as { output?: JsonValue }).output
        : undefined
    if (!call || typeof output !== 'string') return []
    call.hasStreamed = true
    if (usesTerminal(name))
      return [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: callId,
          _meta: { terminal_output: { terminal_id: callId, data: output } },
        },
      ]
    call.output = (call.output + output).slice(-OUTPUT_TAIL)
    return [
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: callId,
        content: [{ type: 'content', content: { type: 'text', text: call.output } }],
      },
    ]
  }
}

/** Input the client sent itself: the person's own messages and what the editor attached. */
function isFromClient(source: MessageSource): boolean {
  return (
    source.kind === 'user' ||
    (source.kind === ACP_SOURCE.kind && (source as { name?: unknown }).name === 'acp')
  )
}
