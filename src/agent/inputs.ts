/**
 * Checks and copies what callers hand to send / steer / inject. Caller mistakes throw at
 * once, before anything is queued.
 */
import { randomFillSync } from 'node:crypto'
import {
  type ContentBlock,
  RudderError,
  type SendOptions,
  toFrozenJson,
  type UserMessageData,
} from '../core/index.js'

/** Turns `send`/`steer`/`inject` input into a frozen `UserMessageData` (a string is a person's text). */
export function toUserMessage(input: unknown, call: string): UserMessageData {
  if (typeof input === 'string')
    return Object.freeze({
      content: Object.freeze([Object.freeze({ type: 'text', text: input })]),
      source: Object.freeze({ kind: 'user' }),
    })
  if (typeof input !== 'object' || input === null) {
    throw new RudderError(
      'INVALID_INPUT',
      `${call}: expected a string or { content, source, meta? }, got ${input === null ? 'null' : typeof input}`,
    )
  }
  const { content, source, meta } = input as { content?: unknown; source?: unknown; meta?: unknown }
  checkContent(content, call)
  if (
    typeof source !== 'object' ||
    source === null ||
    typeof (source as { kind?: unknown }).kind !== 'string'
  ) {
    throw new RudderError(
      'INVALID_INPUT',
      `${call}: source must be an object with a string kind, such as { kind: 'plugin', name: 'my-plugin' }`,
    )
  }
  const copy = meta === undefined ? { content, source } : { content, source, meta }
  try {
    return toFrozenJson(copy, call, 'input') as unknown as UserMessageData
  } catch (error) {
    throw new RudderError('INVALID_INPUT', (error as Error).message, { cause: error })
  }
}

function checkContent(content: unknown, call: string): asserts content is ContentBlock[] {
  if (!Array.isArray(content))
    throw new RudderError(
      'INVALID_INPUT',
      `${call}: content must be an array of blocks such as [{ type: 'text', text: '…' }]`,
    )
  content.forEach((block: unknown, index) => {
    const where = `${call}: content[${index}]`
    if (typeof block !== 'object' || block === null)
      throw new RudderError('INVALID_INPUT', `${where} must be a block object`)
    const typed = block as { type?: unknown; text?: unknown; mediaType?: unknown; data?: unknown }
    if (typed.type === 'text') {
      if (typeof typed.text !== 'string')
        throw new RudderError('INVALID_INPUT', `${where}.text must be a string`)
    } else if (typed.type === 'image') {
      if (typeof typed.mediaType !== 'string' || typeof typed.data !== 'string') {
        throw new RudderError(
          'INVALID_INPUT',
          `${where}: an image block needs string mediaType (e.g. image/png) and base64 data`,
        )
      }
    } else {
      throw new RudderError(
        'INVALID_INPUT',
        `${where}.type must be 'text' or 'image', got ${JSON.stringify(typed.type)}`,
      )
    }
  })
}

/** `inject()`'s input: a message whose source names its producer (a person's goes through send). */
export function toInjectedContext(context: unknown): UserMessageData {
  const data = toUserMessage(context, 'agent.inject()')
  if (data.source.kind === 'user')
    throw new RudderError(
      'INVALID_INPUT',
      "agent.inject(): the source must name the producer (e.g. { kind: 'plugin', name: 'my-plugin' }); a person's message goes through send() or steer()",
    )
  return data
}

const SEND_OPTION_KEYS = new Set(['target', 'wakeup'])

/** Checks `send()`'s options (docs/spec.md §5.1: `target` and `wakeup`, nothing else). */
export function checkSendOptions(options: SendOptions | undefined): {
  readonly target: 'next-turn' | 'next-step'
  readonly wakeup: boolean
} {
  for (const key of Object.keys(options ?? {})) {
    if (!SEND_OPTION_KEYS.has(key))
      throw new RudderError(
        'INVALID_INPUT',
        `agent.send(): unknown option ${JSON.stringify(key)}; SendOptions has only target and wakeup`,
      )
  }
  const target = options?.target ?? 'next-turn'
  if (target !== 'next-turn' && target !== 'next-step')
    throw new RudderError(
      'INVALID_INPUT',
      `agent.send(): target must be 'next-turn' or 'next-step', got ${JSON.stringify(target)}`,
    )
  return { target, wakeup: options?.wakeup ?? true }
}

/**
 * A fresh message id, `msg_` and a random (version 4) UUID: unique per session, assigned when
 * a value is accepted. Written byte by byte into one string from a batch of random bytes, as
 * `crypto.randomUUID` draws them: its string, built from 20 pieces and then prefixed, was 5%
 * of what an agent step allocates (bench B5+).
 */
export function newMessageId(): string {
  if (idsLeft === 0) {
    randomFillSync(randomBytes)
    idsLeft = ID_BATCH
  }
  const offset = 16 * --idsLeft
  let at = 4
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) at++
    let byte = randomBytes[offset + i] as number
    // The version (4) and variant (10xx) bits of RFC 9562.
    if (i === 6) byte = (byte & 0x0f) | 0x40
    else if (i === 8) byte = (byte & 0x3f) | 0x80
    idText[at++] = HEX_DIGITS[byte >> 4] as number
    idText[at++] = HEX_DIGITS[byte & 0x0f] as number
  }
  return idText.toString('latin1')
}

const ID_BATCH = 128
const randomBytes = new Uint8Array(16 * ID_BATCH)
let idsLeft = 0
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1')
/** The id being written; only the hex digits change. */
const idText = Buffer.from('msg_00000000-0000-0000-0000-000000000000', 'latin1')
