/**
 * MCP server entries as users already write them: Claude Code's `.mcp.json` shape
 * (`command`/`args`/`env`, or `type: "http"` with `url`/`headers`) under `mcpServers`, in
 * rudder's config files or a project's `.mcp.json`, with `${VAR}` and `${VAR:-default}`
 * expanded in commands, arguments, environment, URLs and headers. rudder adds a few keys of its
 * own (`startup`, timeouts, `concurrency`, `enabled`). zod at this trust boundary; every
 * problem names the file and key.
 */
import type { z } from 'zod'
import { ConfigError } from '../core/index.js'
import { type Zod, zodNow } from '../tools/lazy-zod.js'

const SERVER_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * The schemas, built on first use (a memo of an immutable construction, as in decision 0141):
 * most runs configure no MCP server, so a headless run does not build them (bench B10).
 */
let serverSchemas: ServerSchemas | undefined
type ServerSchemas = ReturnType<typeof buildServerSchemas>

function buildServerSchemas(z: Zod = zodNow()) {
  const common = {
    /** `eager`: start when the session opens; `lazy` (default): when the first turn starts. */
    startup: z.enum(['eager', 'lazy']).optional(),
    /** How long starting (spawn + initialize + tools/list) may take (default 30 s). */
    startTimeoutMs: z.number().int().positive().optional(),
    /** How long one tool call may take (default 10 min). */
    callTimeoutMs: z.number().int().positive().optional(),
    /** `parallel` (default): calls of one batch run together; `exclusive`: alone. */
    concurrency: z.enum(['parallel', 'exclusive']).optional(),
    /** `false` keeps the entry but does not start the server. */
    enabled: z.boolean().optional(),
  }

  const stdioSchema = z.strictObject({
    type: z.literal('stdio').optional(),
    command: z.string().min(1, 'must name the program to run, e.g. "npx"'),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    /** The server's working directory (default: the session's workspace). */
    cwd: z.string().optional(),
    ...common,
  })

  const remoteSchema = z.strictObject({
    type: z.enum(['http', 'sse', 'streamable-http']),
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).optional(),
    ...common,
  })

  return {
    stdioSchema,
    remoteSchema,
    /** One `mcpServers` entry. */
    server: z.union([stdioSchema, remoteSchema]),
    /** The `mcpServers` object: server name → entry. */
    servers: z.record(
      z.string().regex(SERVER_NAME, 'server names are 1–64 letters, digits, "_" or "-"'),
      z.unknown(),
    ),
  }
}

type WrittenServer = z.infer<ServerSchemas['server']>

/** A server ready to start: variables expanded, where it came from recorded. */
export type McpServerConfig =
  | (Omit<z.infer<ServerSchemas['stdioSchema']>, 'type'> & {
      readonly transport: 'stdio'
      readonly name: string
      readonly file: string
    })
  | (Omit<z.infer<ServerSchemas['remoteSchema']>, 'type'> & {
      readonly transport: 'http' | 'sse'
      readonly name: string
      readonly file: string
    })

/**
 * Reads the `mcpServers` object of one file. Throws `ConfigError` naming `file`, the key and
 * the fix; a variable that is not set and has no default is an error too.
 */
export function parseMcpServers(
  value: unknown,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  key = 'mcpServers',
): McpServerConfig[] {
  serverSchemas ??= buildServerSchemas()
  const names = serverSchemas.servers.safeParse(value)
  if (!names.success) {
    const issue = names.error.issues[0]
    throw new ConfigError(
      `${file}: ${key}${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'must be an object of server name → { command, args, env } or { type: "http", url }'}`,
    )
  }
  const servers: McpServerConfig[] = []
  for (const [name, entry] of Object.entries(names.data)) {
    const parsed = serverSchemas.server.safeParse(entry)
    if (!parsed.success) {
      throw new ConfigError(
        `${file}: ${key}.${name} is not a valid MCP server (${describe(parsed.error)}). Write { "command": "npx", "args": ["-y", "some-server"] } for a local server, or { "type": "http", "url": "https://…" } for a remote one.`,
      )
    }
    servers.push(expand(name, parsed.data, file, env, `${key}.${name}`))
  }
  return servers
}

function expand(
  name: string,
  server: WrittenServer,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  where: string,
): McpServerConfig {
  const sub = (text: string, field: string) =>
    expandVariables(text, env, `${file}: ${where}.${field}`)
  const record = (values: Readonly<Record<string, string>> | undefined, field: string) =>
    values === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(values).map(([key, text]) => [key, sub(text, `${field}.${key}`)]),
        )
  if ('command' in server) {
    const { type: _type, command, args, env: serverEnv, cwd, ...rest } = server
    const expandedEnv = record(serverEnv, 'env')
    return {
      ...rest,
      transport: 'stdio',
      name,
      file,
      command: sub(command, 'command'),
      ...(args === undefined ? {} : { args: args.map((arg, index) => sub(arg, `args.${index}`)) }),
      ...(expandedEnv === undefined ? {} : { env: expandedEnv }),
      ...(cwd === undefined ? {} : { cwd: sub(cwd, 'cwd') }),
    }
  }
  const { type, url, headers, ...rest } = server
  const expandedHeaders = record(headers, 'headers')
  const expandedUrl = sub(url, 'url')
  if (!/^https?:\/\//.test(expandedUrl))
    throw new ConfigError(
      `${file}: ${where}.url must be an http(s) URL, got ${JSON.stringify(expandedUrl)}`,
    )
  return {
    ...rest,
    transport: type === 'sse' ? 'sse' : 'http',
    name,
    file,
    url: expandedUrl,
    ...(expandedHeaders === undefined ? {} : { headers: expandedHeaders }),
  }
}

/**
 * Expands `${VAR}` and `${VAR:-default}` as Claude Code does. An unset variable without a
 * default is a `ConfigError` naming it: a server started with an empty key fails obscurely.
 */
export function expandVariables(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  where: string,
): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_match, name: string, fallback?: string) => {
      const value = env[name]
      if (value !== undefined && value !== '') return value
      if (fallback !== undefined) return fallback
      throw new ConfigError(
        `${where} uses \${${name}}, which is not set. Set ${name} in the environment, or write \${${name}:-default}.`,
      )
    },
  )
}

function describe(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.')
      return path === '' ? issue.message : `${path}: ${issue.message}`
    })
    .join('; ')
}
