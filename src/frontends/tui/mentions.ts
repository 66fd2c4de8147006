/**
 * What `@` in a person's text attaches (issue 12 item 8, issue 16 item 6), each as its own
 * context logged before the prompt, so the model sees it verbatim and the transcript shows
 * who supplied it:
 * - `@path` of a workspace file: its content, source `{kind:'plugin', name:'tui'}`;
 * - `@session:<id>`: a snapshot of that session's transcript through its last seq, source
 *   `{kind:'reference', sessionId, throughSeq}` (docs/spec.md §2);
 * - `@server:uri`: an MCP server's resource, source `{kind:'plugin', name:'mcp:<server>'}`.
 * The text itself is sent unchanged.
 */
import { readFile, stat } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'
import { project, type SessionStore, type UserMessageData } from '../../index.js'
import type { SessionRuntime } from '../../runtime/host.js'
import { resourceContexts } from '../../runtime/mcp-references.js'

/** Files larger than this are not attached (the model can read them with its tools). */
const MAX_FILE_BYTES = 256 * 1024

/** A mention that cannot be attached: nothing is sent, the person is told why. */
export class MentionError extends Error {
  override name = 'MentionError'
}

export async function mentionContexts(
  text: string,
  runtime: Pick<SessionRuntime, 'cwd' | 'mcp'>,
  store: SessionStore,
): Promise<UserMessageData[]> {
  const contexts: UserMessageData[] = []
  for (const match of text.matchAll(/(?:^|\s)@session:(\S+)/g))
    contexts.push(await sessionReference(store, trimPunctuation(match[1] as string)))
  contexts.push(...(await resourceContexts(runtime.mcp, text)))
  for (const match of text.matchAll(/(?:^|\s)@([^\s:@][^\s]*)/g)) {
    const path = trimPunctuation(match[1] as string)
    const file = await workspaceFile(runtime.cwd, path)
    if (file !== undefined) contexts.push(file)
  }
  return contexts
}

async function workspaceFile(cwd: string, path: string): Promise<UserMessageData | undefined> {
  const absolute = resolve(cwd, path)
  const inside = relative(cwd, absolute)
  if (inside.startsWith('..') || isAbsolute(inside)) return undefined
  const info = await stat(absolute).catch(() => undefined)
  // Not a file here: an e-mail address or a handle, left as text.
  if (!info?.isFile()) return undefined
  if (info.size > MAX_FILE_BYTES)
    throw new MentionError(
      `@${path} is ${info.size} bytes, more than the ${MAX_FILE_BYTES} attached inline; ask the model to read it instead`,
    )
  const content = await readFile(absolute, 'utf8')
  return {
    content: [{ type: 'text', text: `Contents of ${inside}:\n\n${content}` }],
    source: { kind: 'plugin', name: 'tui' },
    meta: { path: inside },
  }
}

async function sessionReference(store: SessionStore, id: string): Promise<UserMessageData> {
  const snapshot = await store.read(id).catch((error: unknown) => {
    throw new MentionError(
      `@session:${id}: ${error instanceof Error ? error.message : String(error)}`,
    )
  })
  const throughSeq = snapshot.events.length - 1
  const lines = [`Transcript of session ${id} through seq ${throughSeq}:`]
  for (const message of project(snapshot.events)) {
    const text = message.content
      .map((block) => {
        switch (block.type) {
          case 'text':
            return block.text
          case 'tool-call':
            return `[tool call ${block.name} ${JSON.stringify(block.args)}]`
          case 'image':
            return '[image]'
          default:
            return ''
        }
      })
      .filter((part) => part !== '')
      .join('\n')
    lines.push('', `${message.role === 'tool' ? `tool ${message.name}` : message.role}: ${text}`)
  }
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    source: { kind: 'reference', sessionId: id, throughSeq },
  }
}

function trimPunctuation(text: string): string {
  return text.replace(/[),.;:!?]+$/, '')
}
