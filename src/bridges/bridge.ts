/**
 * `createHookBridge`: runs Claude Code and Codex command hooks at rudder's extension points
 * (docs/spec.md §12, docs/hooks.md). Install it on an agent after any policy listener, so the
 * policy stays outermost; wrap the agent's approve callback with it; call `end()` before the
 * session closes.
 */
import type { Agent, ApproveCallback } from '../agent/index.js'
import type { EventMap } from '../core/index.js'
import { createBridgeCore, type HookBridgeOptions } from './bridge-core.js'
import { createToolHooks, type StopRequest } from './tool-hooks.js'
import { createTurnHooks } from './turn-hooks.js'

export type { BridgeNotice, HookBridgeOptions } from './bridge-core.js'

/** The bridge for one session. */
export interface HookBridge {
  /**
   * Registers the listeners on `agent` (`session-start`, `prompt-submit`, `step`, `tool-pre`,
   * `tool-post`, `turn-stopping`) and follows its session. Call right after `createAgent`, so
   * the `session-start` hooks run. Returns a function that removes everything.
   */
  install(agent: Agent): () => void
  /**
   * The agent's approve callback with `PermissionRequest` hooks answering first and
   * `Notification` (`permission_prompt`) hooks told. Usable before `install`; the hooks run once
   * installed.
   */
  wrapApprove(approve: ApproveCallback): ApproveCallback
  /** Runs `SessionEnd` hooks (reason `other` by default). Resolves when they are done. */
  end(reason?: string): Promise<void>
}

export function createHookBridge(options: HookBridgeOptions): HookBridge {
  let installed:
    | {
        readonly wrap: (approve: ApproveCallback) => ApproveCallback
        readonly end: (reason: string) => Promise<void>
      }
    | undefined
  return {
    install(agent) {
      const core = createBridgeCore(options, agent)
      // A tool hook's `continue: false`, carried out at the next step.
      let stopRequest: StopRequest | undefined
      const requestStop = (request: StopRequest) => {
        if (request.reason !== undefined)
          options.notify({ level: 'warning', source: 'hooks', message: request.reason })
        stopRequest = request
      }
      const takeStop = () => {
        const request = stopRequest
        stopRequest = undefined
        return request
      }
      const tools = createToolHooks(core, requestStop)
      const turns = createTurnHooks(core, takeStop)
      const removers = [
        agent.on('session-start', turns.sessionStart),
        agent.on('prompt-submit', turns.promptSubmit),
        agent.on('step', turns.step),
        agent.on('tool-pre', tools.toolPre),
        agent.on('tool-post', tools.toolPost),
        agent.on('turn-stopping', turns.turnStopping),
        agent.session.subscribe((event) => {
          if (event.type === 'turn/end') turns.afterTurnEnd(event.data as EventMap['turn/end'])
        }),
      ]
      installed = { wrap: tools.wrapApprove, end: turns.sessionEnd }
      return () => {
        for (const remove of removers) remove()
        core.dispose()
        installed = undefined
      }
    },
    wrapApprove(approve) {
      return (request) => (installed ? installed.wrap(approve)(request) : approve(request))
    },
    async end(reason = 'other') {
      await installed?.end(reason)
    },
  }
}
