/**
 * Seeded generator of realistic session logs for benchmarks: turns with prompts, assistant
 * text, tool calls and results of a few KB. Deterministic for a seed; nothing is committed.
 */
import type { EventMap, EventType } from '../src/index.js'

export type Append = { [K in EventType]: readonly [K, EventMap[K]] }[EventType]

/** A small, fast, seeded PRNG (mulberry32). */
export function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS =
  'the model sees exactly what the session log holds every input is a durable event tool result file read write edit bash grep'.split(
    ' ',
  )

function words(next: () => number, count: number): string {
  const out: string[] = []
  for (let i = 0; i < count; i++) out.push(WORDS[Math.floor(next() * WORDS.length)]!)
  return out.join(' ')
}

/**
 * Yields appends forming whole turns until at least `count` events are produced. Each event
 * carries `textSize` characters of text on average where it has text.
 */
export function* turns(options: {
  count: number
  seed?: number
  textWords?: number
}): Generator<Append> {
  const next = random(options.seed ?? 1)
  const textWords = options.textWords ?? 60
  let produced = 0
  let turn = 0
  let ids = 0
  const emit = function* (append: Append) {
    produced++
    yield append
  }
  while (produced < options.count) {
    turn++
    yield* emit(['turn/start', { turn, trigger: 'prompt' }])
    yield* emit([
      'user/message',
      {
        id: `m${++ids}`,
        content: [{ type: 'text', text: words(next, textWords) }],
        source: { kind: 'user' },
      },
    ])
    const steps = 1 + Math.floor(next() * 3)
    for (let step = 1; step <= steps; step++) {
      yield* emit(['step/start', { turn, step }])
      const isLast = step === steps
      const callId = `c${++ids}`
      yield* emit([
        'assistant/message',
        {
          id: `a${++ids}`,
          content: isLast
            ? [{ type: 'text', text: words(next, textWords) }]
            : [
                { type: 'text', text: words(next, 8) },
                {
                  type: 'tool-call',
                  id: callId,
                  name: 'read',
                  args: { path: `src/file${ids}.ts` },
                },
              ],
          provider: 'bench',
          model: 'bench',
          stopReason: isLast ? 'stop' : 'tool-calls',
          usage: { inputTokens: 1000, outputTokens: 100 },
        },
      ])
      if (!isLast) {
        yield* emit(['tool/call', { callId, name: 'read', args: { path: `src/file${ids}.ts` } }])
        yield* emit([
          'tool/result',
          {
            callId,
            name: 'read',
            content: [{ type: 'text', text: words(next, textWords * 4) }],
            isError: false,
          },
        ])
      }
      yield* emit(['step/end', { turn, step }])
    }
    yield* emit(['turn/end', { turn, reason: { kind: 'completed' } }])
  }
}

/** Collects `count` (or slightly more, to close the last turn) appends. */
export function appends(count: number, seed = 1): Append[] {
  return [...turns({ count, seed })]
}
