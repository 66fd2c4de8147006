/**
 * A harness for agent tests. Every harness is verified after its test (see verify-agents.ts):
 * the log keeps every invariant, and each request the scripted provider received equals the
 * projection of the log at its `step/start` plus the latest `request/header` (docs/spec.md scenario 28).
 */
import {
  type Agent,
  type AgentNotification,
  type AgentOptions,
  type ContentBlock,
  checkLog,
  createAgent,
  createSession,
  type ModelRequest,
  project,
  type Session,
  type SessionEvent,
  textOf,
} from '../../src/index.js'
import { type ScriptEntry, type ScriptedProvider, scriptedProvider } from '../../src/testing.js'

export type Harness = {
  readonly session: Session
  readonly provider: ScriptedProvider
  readonly agent: Agent
  readonly notifications: AgentNotification[]
  /** The log in the notation of docs/spec.md §13, e.g. `T+1 U(P) S+1 H A S-1 T-1(completed)`. */
  notation(from?: number): string
  /** The texts of the messages of request `index`, one string per message. */
  requestTexts(index: number): string[]
}

const live: Harness[] = []

export function agentHarness(
  script: readonly ScriptEntry[],
  options: Partial<AgentOptions> = {},
): Harness {
  const session = options.session ?? createSession({ checkInvariants: true })
  const provider = scriptedProvider(script)
  const agent = createAgent({
    provider,
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
    ...options,
    session,
  })
  const notifications: AgentNotification[] = []
  agent.subscribe((notification) => notifications.push(notification))
  const harness: Harness = {
    session,
    provider,
    agent,
    notifications,
    notation: (from = 0) => notation(session.residentEvents.slice(from)),
    requestTexts: (index) => requestTexts(provider.requests[index]!),
  }
  live.push(harness)
  return harness
}

export function requestTexts(request: ModelRequest): string[] {
  return request.messages.map((message) => {
    const text = textOf(message.content)
    return message.role === 'tool'
      ? `tool:${text}`
      : message.role === 'assistant'
        ? `assistant:${text}`
        : text
  })
}

/** Writes events in the notation of docs/spec.md §13. */
export function notation(events: readonly SessionEvent[]): string {
  return events
    .map((event) => {
      const data = event.data as {
        content: ContentBlock[]
        turn: number
        step: number
        reason: { kind: string }
        interrupted?: boolean
        callId: string
      }
      switch (event.type) {
        case 'user/message':
          return `U(${textOf(data.content)})`
        case 'steering/message':
          return `G(${textOf(data.content)})`
        case 'turn/start':
          return `T+${data.turn}`
        case 'turn/end':
          return `T-${data.turn}(${data.reason.kind})`
        case 'step/start':
          return `S+${data.step}`
        case 'step/end':
          return `S-${data.step}`
        case 'request/header':
          return 'H'
        case 'assistant/message':
          return data.interrupted ? 'A{interrupted}' : 'A'
        case 'tool/call':
          return `TC(${data.callId})`
        case 'tool/result':
          return `TR(${data.callId})`
        case 'compaction':
          return 'C'
        default:
          return event.type
      }
    })
    .join(' ')
}

/** Verifies and forgets every harness created since the last call. Throws on the first failure. */
export async function verifyHarnesses(): Promise<void> {
  const harnesses = live.splice(0)
  for (const harness of harnesses) {
    await harness.agent.dispose()
    verify(harness)
  }
}

function verify({ session, provider, notifications }: Harness): void {
  const problems = checkLog(session.residentEvents)
  if (problems.length > 0)
    throw new Error(`checkLog found problems:\n${problems.map((p) => p.message).join('\n')}`)
  const announced = notifications.filter(
    (n): n is Extract<AgentNotification, { type: 'request/start' | 'compaction/request' }> =>
      n.type === 'request/start' || n.type === 'compaction/request',
  )
  if (announced.length !== provider.requests.length) {
    throw new Error(
      `the provider received ${provider.requests.length} requests but the agent announced ${announced.length}`,
    )
  }
  const events = session.residentEvents
  let compactions = 0
  announced.forEach((start, index) => {
    const actual = provider.requests[index]!
    if (start.type === 'compaction/request') {
      // A summarizing request shows the history before the cut, then the instruction.
      if (start.attempt === 1) compactions++
      const event = events.filter((e) => e.type === 'compaction')[compactions - 1]
      if (!event) return // the compaction failed: nothing was logged
      const data = event.data as {
        firstKeptSeq: number
        request: { model: string; system: string; messageCount: number }
      }
      const expected = project(events.slice(0, data.firstKeptSeq))
      if (
        JSON.stringify(actual.messages.slice(0, -1)) !== JSON.stringify(expected) ||
        actual.messages.length !== data.request.messageCount ||
        actual.system !== data.request.system
      ) {
        throw new Error(
          `compaction request ${index + 1} does not match the history before firstKeptSeq ${data.firstKeptSeq} and the request recorded in the event`,
        )
      }
      return
    }
    const stepStart = events.findIndex(
      (e) =>
        e.type === 'step/start' &&
        (e.data as { turn: number }).turn === start.turn &&
        (e.data as { step: number }).step === start.step,
    )
    if (stepStart < 0)
      throw new Error(
        `request ${index + 1}: no step/start for turn ${start.turn} step ${start.step}`,
      )
    let stepEnd = events.findIndex((e, i) => i > stepStart && e.type === 'step/end')
    if (stepEnd < 0) stepEnd = events.length
    const header = events.slice(0, stepEnd).findLast((e) => e.type === 'request/header')?.data as
      | { model: string; system: string; tools: unknown; params: unknown }
      | undefined
    if (!header) throw new Error(`request ${index + 1}: no request/header before it`)
    const expected: ModelRequest = {
      model: header.model,
      system: header.system,
      messages: project(events.slice(0, stepStart + 1)),
      tools: header.tools as ModelRequest['tools'],
      params: header.params as ModelRequest['params'],
    }
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      throw new Error(
        `request ${index + 1} (turn ${start.turn}, step ${start.step}) differs from the projection at its step/start:\nactual:   ${JSON.stringify(actual)}\nexpected: ${JSON.stringify(expected)}`,
      )
    }
  })
}
