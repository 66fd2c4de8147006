/**
 * `serveAcp`: rudder as an Agent Client Protocol agent over one connection (two byte streams),
 * on the official SDK's app API. It answers `initialize`, the session methods, `session/prompt`
 * and `session/cancel`, and the extensions `_session/steering` (as the Claude and Codex
 * adapters define it), `_rudder/inject` and the legacy `session/set_model`. docs/acp.md lists
 * every method and update with its status.
 */
import * as acp from '@agentclientprotocol/sdk/unstable'
import { z } from 'zod'
import type { MessageSource } from '../../index.js'
import type { Host } from '../../runtime/host.js'
import type { ClientFeatures } from './acp-session.js'
import { createArrivals } from './arrivals.js'
import { invalidParams, toRequestError } from './errors.js'
import { contentBlockSchema, convertContext, convertPrompt } from './prompt-content.js'
import { setConfigOption, setMode, setModel } from './session-config.js'
import { createSessionRegistry } from './session-registry.js'

export type ServeAcpOptions = {
  /** Bytes from the client (stdin), newline-delimited JSON-RPC. */
  readonly input: ReadableStream<Uint8Array>
  /** Bytes to the client (stdout): nothing but protocol frames may be written here. */
  readonly output: WritableStream<Uint8Array>
  /** The host the sessions are opened on; the caller closes it after `closed` resolves. */
  readonly host: Host
  /** `agentInfo` of `initialize`. */
  readonly agentInfo: { readonly name: string; readonly version: string }
  /** Diagnostics for the person running rudder (stderr), never the client. */
  readonly log: (message: string) => void
  /** Whether the default model takes images (`promptCapabilities.image`). Default true. */
  readonly acceptsImages?: boolean
}

export interface AcpServer {
  /** Resolves when the connection ended (stdin closed) and every session was closed. */
  readonly closed: Promise<void>
  /** Ends the connection and closes every session. */
  close(): Promise<void>
}

const steeringParams = z
  .object({
    sessionId: z.string(),
    prompt: z.array(contentBlockSchema),
    _meta: z
      .object({ steering: z.object({ idleBehavior: z.string().optional() }).loose().optional() })
      .loose()
      .nullish(),
  })
  .loose()

const injectParams = z
  .object({
    sessionId: z.string(),
    content: z.array(contentBlockSchema).min(1),
    source: z.object({ kind: z.string() }).loose(),
    meta: z.json().optional(),
  })
  .loose()

const setModelParams = z.object({ sessionId: z.string(), modelId: z.string() }).loose()

export function serveAcp(options: ServeAcpOptions): AcpServer {
  const { host, log } = options
  const arrivals = createArrivals(acp.ndJsonStream(options.output, options.input))
  let features: ClientFeatures = { terminalOutput: false, notices: false, compaction: false }
  let registry: ReturnType<typeof createSessionRegistry> | undefined
  const sessions = () => {
    if (!registry) throw new acp.RequestError(-32603, 'the connection is not open')
    return registry
  }
  // Every failure reaches the client as a RequestError that says what to fix.
  const guard =
    <P, R>(
      handler: (params: P, context: { requestId: acp.JsonRpcId | undefined }) => R | Promise<R>,
    ) =>
    async ({ params, requestId }: { params: P; requestId?: acp.JsonRpcId }): Promise<R> => {
      try {
        return await handler(params, { requestId })
      } catch (error) {
        throw toRequestError(error)
      }
    }

  const app = acp
    .agent({ name: 'rudder' })
    .onRequest(
      acp.methods.agent.initialize,
      guard((params: acp.InitializeRequest): acp.InitializeResponse => {
        const capabilities = params.clientCapabilities
        features = {
          terminalOutput: capabilities?._meta?.terminal_output === true,
          notices: capabilities?.session?.notices != null,
          compaction: capabilities?.session?.compaction != null,
        }
        return {
          // Version 1 is the only one rudder speaks: the answer whatever the client asked for.
          protocolVersion: acp.PROTOCOL_VERSION,
          agentInfo: { ...options.agentInfo, title: 'rudder' },
          agentCapabilities: {
            loadSession: true,
            promptCapabilities: {
              image: options.acceptsImages ?? true,
              audio: false,
              embeddedContext: true,
            },
            mcpCapabilities: { http: false, sse: false },
            sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {} },
          },
          authMethods: [],
          _meta: {
            steering: { supported: true },
            rudder: { extensions: ['_rudder/inject', 'session/set_model'] },
          },
        }
      }),
    )
    .onRequest(
      acp.methods.agent.session.new,
      guard((params: acp.NewSessionRequest) => sessions().create(params)),
    )
    .onRequest(
      acp.methods.agent.session.load,
      guard((params: acp.LoadSessionRequest) => sessions().load(params)),
    )
    .onRequest(
      acp.methods.agent.session.resume,
      guard((params: acp.ResumeSessionRequest) => sessions().resume(params)),
    )
    .onRequest(
      acp.methods.agent.session.fork,
      guard((params: acp.ForkSessionRequest) => sessions().fork(params)),
    )
    .onRequest(
      acp.methods.agent.session.list,
      guard((params: acp.ListSessionsRequest) => sessions().list(params)),
    )
    .onRequest(
      acp.methods.agent.session.close,
      guard(async (params: acp.CloseSessionRequest) => {
        await sessions().close(params.sessionId)
        return {}
      }),
    )
    .onRequest(acp.methods.agent.session.prompt, async ({ params, requestId, signal }) => {
      try {
        // Synchronous up to the queue: the arrival number decides this prompt's place.
        const arrival = arrivals.take(requestId)
        const session = sessions().get(params.sessionId)
        return await session.prompt(convertPrompt(params.prompt), arrival, signal)
      } catch (error) {
        throw toRequestError(error)
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      try {
        sessions().get(params.sessionId).cancel()
      } catch (error) {
        log(`session/cancel: ${toRequestError(error).message}`)
      }
    })
    .onRequest(
      acp.methods.agent.session.setMode,
      guard((params: acp.SetSessionModeRequest) => {
        const session = sessions().get(params.sessionId)
        setMode(session.runtime, params.modeId)
        session.sendConfigChange('config')
        return {}
      }),
    )
    .onRequest(
      acp.methods.agent.session.setConfigOption,
      guard(async (params: acp.SetSessionConfigOptionRequest) => {
        const session = sessions().get(params.sessionId)
        const configOptions = await setConfigOption(session.runtime, params.configId, params.value)
        if (params.configId === 'mode') session.sendConfigChange('mode')
        return { configOptions }
      }),
    )
    .onRequest(
      'session/set_model',
      setModelParams,
      guard(async (params: z.infer<typeof setModelParams>) => {
        const session = sessions().get(params.sessionId)
        await setModel(session.runtime, params.modelId)
        session.sendConfigChange('config')
        return {}
      }),
    )
    .onRequest(
      '_session/steering',
      steeringParams,
      guard((params: z.infer<typeof steeringParams>, { requestId }) => {
        const arrival = arrivals.take(requestId)
        const session = sessions().get(params.sessionId)
        const idleBehavior = params._meta?.steering?.idleBehavior
        return session.steer(convertPrompt(params.prompt), arrival, idleBehavior)
      }),
    )
    .onRequest(
      '_rudder/inject',
      injectParams,
      guard(async (params: z.infer<typeof injectParams>, { requestId }) => {
        arrivals.take(requestId)
        const session = sessions().get(params.sessionId)
        if (params.source.kind === 'user')
          throw invalidParams(
            "_rudder/inject: source.kind must name the producer (e.g. { kind: 'plugin', name: 'my-extension' }); a person's message is a session/prompt or _session/steering",
          )
        const delivery = await session.inject({
          content: convertContext(params.content),
          source: params.source as MessageSource,
          ...(params.meta === undefined ? {} : { meta: params.meta }),
        })
        return { delivery }
      }),
    )

  const connection = app.connect(arrivals.stream)
  registry = createSessionRegistry({
    host,
    client: connection.client,
    features: () => features,
    arrivals,
    log,
  })
  const closing = connection.closed.then(() => registry!.closeAll())
  return {
    closed: closing,
    async close() {
      connection.close()
      await closing
    },
  }
}
