/**
 * Test helpers for calling tools directly: a `ToolContext` over a real session, the tool's own
 * `parse` + `execute`, and temp directories.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onTestFinished } from 'vitest'
import { type ContentBlock, createSession, type JsonValue, textOf } from '../../src/core/index.js'
import type { Tool, ToolContext } from '../../src/tools/index.js'

export type TestContext = {
  readonly context: ToolContext
  readonly controller: AbortController
  /** Every `update(progress)` the tool made, in order. */
  readonly updates: JsonValue[]
}

/** A context whose agent methods throw: built-in tools must not need the agent. */
export function toolContext(cwd = process.cwd()): TestContext {
  const controller = new AbortController()
  const updates: JsonValue[] = []
  const noAgent = () => {
    throw new Error('built-in tools do not call the agent')
  }
  const context: ToolContext = {
    signal: controller.signal,
    callId: 'call-1',
    cwd,
    session: createSession({ cwd }),
    agent: { send: noAgent, steer: noAgent, inject: noAgent },
    update: (progress) => {
      updates.push(progress)
    },
    concludeTurn: () => {},
  }
  return { context, controller, updates }
}

export type RunResult = {
  readonly content: readonly ContentBlock[]
  readonly isError: boolean
  readonly meta: JsonValue | undefined
  /** The text blocks joined. */
  readonly text: string
}

/**
 * Parses `args` as the agent would and executes the tool. Invalid arguments become an error
 * result with the parse message, as the agent logs them.
 */
export async function runTool(
  tool: Tool,
  args: unknown,
  context: ToolContext = toolContext().context,
): Promise<RunResult> {
  const parsed = tool.parse(args)
  if (!parsed.ok) return { content: [], isError: true, meta: undefined, text: parsed.message }
  const output = await tool.execute(parsed.args, context)
  if (typeof output === 'string')
    return {
      content: [{ type: 'text', text: output }],
      isError: false,
      meta: undefined,
      text: output,
    }
  if (Array.isArray(output)) {
    const blocks = output as readonly ContentBlock[]
    return { content: blocks, isError: false, meta: undefined, text: textOf(blocks) }
  }
  const result = output as { content: readonly ContentBlock[]; isError?: boolean; meta?: JsonValue }
  return {
    content: result.content,
    isError: result.isError === true,
    meta: result.meta,
    text: textOf(result.content),
  }
}

/** A fresh real temp directory (its real path), removed when the test finishes. */
export async function tempDir(prefix = 'rudder-tools-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  return dir
}
