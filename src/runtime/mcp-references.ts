/**
 * `@server:uri` in a person's text attaches that MCP resource as a context whose source names
 * the server (`plugin`, `mcp:<server>`), so the model sees the resource verbatim and a front
 * end shows who supplied it. The text itself is sent unchanged.
 */
import type { UserMessageData } from '../core/index.js'
import type { McpManager } from '../mcp/manager.js'

export type ResourceReference = { readonly server: string; readonly uri: string }

/** The `@server:uri` references in `text` whose server is one of `servers`, in order, once each. */
export function findResourceReferences(
  text: string,
  servers: readonly string[],
): ResourceReference[] {
  const known = new Set(servers)
  const found: ResourceReference[] = []
  const seen = new Set<string>()
  for (const match of text.matchAll(/(?:^|\s)@([a-zA-Z0-9_-]{1,64}):(\S+)/g)) {
    const server = match[1] as string
    const uri = (match[2] as string).replace(/[),.;:!?]+$/, '')
    if (!known.has(server) || seen.has(`${server} ${uri}`)) continue
    seen.add(`${server} ${uri}`)
    found.push({ server, uri })
  }
  return found
}

/** Reads every referenced resource as a context. Throws the first failure (nothing is sent). */
export async function resourceContexts(
  mcp: McpManager,
  text: string,
  signal?: AbortSignal,
): Promise<UserMessageData[]> {
  const references = findResourceReferences(
    text,
    mcp.summaries().map((server) => server.name),
  )
  const contexts: UserMessageData[] = []
  for (const { server, uri } of references)
    contexts.push(await mcp.resourceContext(server, uri, signal))
  return contexts
}
