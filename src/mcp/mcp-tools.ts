/**
 * An MCP server's tools as rudder tools: named `mcp__<server>__<tool>` (made safe for every
 * provider, with a map back to the real name), their JSON Schema passed to the model as the
 * server gave it, results turned into content blocks verbatim, and every failure a tool
 * result the model can read.
 */
import { createHash } from 'node:crypto'
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import {
  type ContentBlock,
  type JsonObject,
  type JsonValue,
  messageOf,
  toFrozenJson,
} from '../core/index.js'
import type { Tool, ToolOutput } from '../tools/tool.js'
import type { McpConnection } from './connection.js'

const MAX_NAME = 64
const UNSAFE = /[^a-zA-Z0-9_-]/g

/**
 * The rudder name of a server's tool. Characters providers refuse become `_`; a name over 64
 * characters is cut and ends with a hash of the whole, so two long names stay distinct.
 */
export function mcpToolName(server: string, tool: string): string {
  const name = `mcp__${server}__${tool}`.replace(UNSAFE, '_')
  if (name.length <= MAX_NAME && name === `mcp__${server}__${tool}`) return name
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8)
  return `${name.slice(0, MAX_NAME - hash.length - 1)}_${hash}`
}

/** The tools of one connected server, as rudder tools. */
export function mcpTools(connection: McpConnection): Tool<Record<string, unknown>>[] {
  const concurrency = connection.config.concurrency ?? 'parallel'
  return connection.tools.map((tool) => toRudderTool(connection, tool, concurrency))
}

function toRudderTool(
  connection: McpConnection,
  tool: McpTool,
  concurrency: 'parallel' | 'exclusive',
): Tool<Record<string, unknown>> {
  const name = mcpToolName(connection.name, tool.name)
  const description = [
    tool.title && tool.title !== tool.name ? tool.title : undefined,
    tool.description,
  ]
    .filter((part): part is string => typeof part === 'string' && part !== '')
    .join(': ')
  let parameters: JsonObject
  try {
    parameters = toFrozenJson(tool.inputSchema, `MCP tool ${name}`, 'inputSchema') as JsonObject
  } catch {
    // A schema that is not plain JSON cannot be sent to a model; the server's own checks remain.
    parameters = Object.freeze({ type: 'object' })
  }
  return {
    name,
    description:
      description === '' ? `${tool.name} (from the MCP server ${connection.name})` : description,
    parameters,
    concurrency,
    parse(args) {
      if (args === undefined || args === null) return { ok: true, args: {} }
      if (typeof args !== 'object' || Array.isArray(args))
        return {
          ok: false,
          message: `Invalid arguments for tool ${name}: expected a JSON object of named arguments, got ${Array.isArray(args) ? 'an array' : typeof args}.`,
        }
      return { ok: true, args: args as Record<string, unknown> }
    },
    async execute(args, context): Promise<ToolOutput> {
      try {
        await connection.start()
        const result = await connection.callTool(tool.name, args, {
          signal: context.signal,
          onProgress: (progress) => context.update(progress as JsonValue),
        })
        return toOutput(connection.name, tool.name, result)
      } catch (error) {
        const message = context.signal.aborted
          ? `The call to ${tool.name} on the MCP server ${connection.name} was canceled.`
          : `The MCP server ${connection.name} could not run ${tool.name}: ${messageOf(error)}`
        return {
          content: [{ type: 'text', text: message }],
          isError: true,
          meta: { server: connection.name, tool: tool.name, failed: true },
        }
      }
    },
  }
}

/** Tool result content, verbatim where rudder has a block for it and described where not. */
export function toOutput(server: string, tool: string, result: CallToolResult): ToolOutput {
  const content: ContentBlock[] = []
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: block.text })
        break
      case 'image':
        content.push({ type: 'image', mediaType: block.mimeType, data: block.data })
        break
      case 'audio':
        content.push({
          type: 'text',
          text: `[audio ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes, not shown]`,
        })
        break
      case 'resource_link':
        content.push({
          type: 'text',
          text: `[resource ${block.uri}${block.name ? ` "${block.name}"` : ''}${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? `: ${block.description}` : ''}]`,
        })
        break
      case 'resource': {
        const resource = block.resource
        if ('text' in resource && typeof resource.text === 'string')
          content.push({ type: 'text', text: resource.text })
        else if ('blob' in resource && resource.mimeType?.startsWith('image/'))
          content.push({ type: 'image', mediaType: resource.mimeType, data: resource.blob })
        else
          content.push({
            type: 'text',
            text: `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}, binary, not shown]`,
          })
        break
      }
      default:
        content.push({
          type: 'text',
          text: `[${(block as { type: string }).type} content, not shown]`,
        })
    }
  }
  const structured = result.structuredContent
  // A result with only structured content still tells the model something.
  if (content.length === 0 && structured !== undefined)
    content.push({ type: 'text', text: JSON.stringify(structured) })
  const meta: JsonObject = {
    server,
    tool,
    ...(structured === undefined
      ? {}
      : { structuredContent: toFrozenJson(structured, 'MCP result', 'structuredContent') }),
  }
  return { content, isError: result.isError === true, meta }
}
