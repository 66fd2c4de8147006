/**
 * The stored form of an event, shared by JSONL lines and SQLite rows: the envelope of docs/spec.md §3.1
 * as one line of JSON, with payloads that would make the line larger than 1 MiB moved to
 * content-addressed blobs and referenced from a `blobs` list beside `data` (decision 0012).
 */
import type { JsonValue, SessionEvent } from '../core/index.js'
import { LogCorruptError } from '../core/index.js'
import type { BlobStore } from './blob-store.js'
import { canDecodeLater, freezeHolder, placeLazyText } from './lazy-text.js'
import { RecordProblem } from './record-problem.js'
import { describeShapeIssue } from './shape-check.js'
import { type BlobReference, ENVELOPE_CHECK } from './stored-shapes.js'
import { decodeUtf8 } from './utf8-slices.js'

/** No stored line or row is larger than this (B13). */
export const LINE_LIMIT_BYTES = 1024 * 1024
/** Strings at least this large are the ones moved out when a line is too large. */
export const BLOB_MIN_BYTES = 64 * 1024

/** The envelope as JSON text, keys in a fixed order, nothing moved out. */
export function envelopeLine(event: SessionEvent, data: JsonValue = event.data): string {
  return `{"seq":${event.seq},"time":${event.time},"type":${JSON.stringify(event.type)},"data":${JSON.stringify(data)}${event.ignorable ? ',"ignorable":true' : ''}}`
}

/** UTF-8 size of a string, computed only when it could matter. */
function byteLength(text: string, limit: number): number {
  // A UTF-16 code unit is at most 3 UTF-8 bytes, so short strings need no count.
  return text.length * 3 <= limit ? text.length : Buffer.byteLength(text, 'utf8')
}

/**
 * Encodes events as stored lines. Payloads are written to `blobs` (durably, once per content)
 * before the line that refers to them is returned. Without a blob store nothing is moved.
 */
export async function encodeEvents(
  events: readonly SessionEvent[],
  blobs: BlobStore | undefined,
): Promise<string[]> {
  const lines: string[] = new Array(events.length)
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!
    const line = envelopeLine(event)
    lines[index] =
      blobs && byteLength(line, LINE_LIMIT_BYTES) > LINE_LIMIT_BYTES
        ? await externalize(event, blobs)
        : line
  }
  return lines
}

type Moved = { path: (string | number)[]; content: string }

async function externalize(event: SessionEvent, blobs: BlobStore): Promise<string> {
  const moved: Moved[] = []
  const data = replaceLargeStrings(event.data, [], moved)
  let line = withReferences(event, data, await store(moved, blobs))
  if (byteLength(line, LINE_LIMIT_BYTES) > LINE_LIMIT_BYTES) {
    // Many medium values (or a huge structure) still overflow: move the whole of `data`.
    const whole = await blobs.put(JSON.stringify(event.data))
    line = withReferences(event, null, [{ path: [], ...whole, json: true }])
  }
  return line
}

function replaceLargeStrings(
  value: JsonValue,
  path: (string | number)[],
  moved: Moved[],
): JsonValue {
  if (typeof value === 'string') {
    if (byteLength(value, BLOB_MIN_BYTES) < BLOB_MIN_BYTES) return value
    moved.push({ path, content: value })
    return ''
  }
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value))
    return value.map((item, index) => replaceLargeStrings(item, [...path, index], moved))
  // fromEntries defines keys as own data properties, so a key such as "__proto__" stays data.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      replaceLargeStrings(item, [...path, key], moved),
    ]),
  )
}

async function store(moved: readonly Moved[], blobs: BlobStore): Promise<BlobReference[]> {
  const references: BlobReference[] = []
  for (const { path, content } of moved) references.push({ path, ...(await blobs.put(content)) })
  return references
}

function withReferences(
  event: SessionEvent,
  data: JsonValue,
  references: readonly BlobReference[],
): string {
  return `${envelopeLine(event, data).slice(0, -1)},"blobs":${JSON.stringify(references)}}`
}

/** A stored line parsed and checked, its blobs not yet read. */
export type DecodedLine = {
  readonly seq: number
  readonly time: number
  readonly type: string
  data: unknown
  readonly ignorable?: true
  readonly blobs?: readonly BlobReference[]
}

/**
 * Parses one stored line. Throws `RecordProblem` if it is not a valid envelope; the caller
 * adds where the line is (computing locations only on failure keeps loading cheap).
 */
export function decodeLine(text: string): DecodedLine {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new RecordProblem('LOG_CORRUPT', `not valid JSON (${(error as Error).message})`)
  }
  const found = ENVELOPE_CHECK(value)
  if (found) throw new RecordProblem('LOG_CORRUPT', describeShapeIssue(found, 'event'))
  return value as DecodedLine
}

/**
 * Parses a stored line this store wrote and checked (a fork's source): JSON and the envelope's
 * field types only, without the schema walk of `decodeLine`. Throws `RecordProblem`.
 */
export function decodeTrustedLine(text: string): DecodedLine {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new RecordProblem('LOG_CORRUPT', `not valid JSON (${(error as Error).message})`)
  }
  const line = value as Partial<DecodedLine> | null
  if (
    typeof line !== 'object' ||
    line === null ||
    typeof line.seq !== 'number' ||
    typeof line.time !== 'number' ||
    typeof line.type !== 'string' ||
    !('data' in line)
  )
    throw new RecordProblem('LOG_CORRUPT', 'not an event envelope ({seq, time, type, data})')
  return line as DecodedLine
}

/**
 * Reads the blobs a decoded line refers to and puts their content back in place. A string's
 * bytes (a `text`'s only if ASCII) are put there to be decoded on first use
 * (src/stores/lazy-text.ts, decision 0176); other text is decoded now. Throws the reason of
 * `signal` if it aborts while a blob is decoded.
 */
export async function resolveBlobs(
  line: DecodedLine,
  blobs: BlobStore | undefined,
  location: string,
  hint: string,
  signal?: AbortSignal,
): Promise<void> {
  if (!line.blobs) return
  if (!blobs)
    throw new LogCorruptError(
      location,
      `the event refers to blobs, but this store keeps none; ${hint}`,
    )
  // Every read is started at once; each is then put in place in order, so the first reference
  // that cannot be read or placed is the one reported, as when they were read one by one.
  const reads = line.blobs.map((reference) => readBlob(blobs, reference, location, signal))
  for (const read of reads)
    read.catch(() => {
      // Reported below, in order, unless an earlier reference fails first.
    })
  // Objects given lazy text, and its keys in each: frozen once all are placed.
  const holders = new Map<object, Set<string>>()
  for (let index = 0; index < reads.length; index++) {
    const reference = line.blobs[index]!
    const read = await reads[index]!
    if (typeof read !== 'string') {
      const { parent, key } = placeholderAt(line, reference.path, location, hint)
      placeLazyText(parent, key, read)
      const keys = holders.get(parent) ?? new Set<string>()
      holders.set(parent, keys.add(String(key)))
      continue
    }
    let content: unknown = read
    if (reference.json) {
      try {
        content = JSON.parse(read)
      } catch (error) {
        throw new LogCorruptError(
          location,
          `the blob ${reference.sha256} is not valid JSON; ${hint}`,
          {
            cause: error,
          },
        )
      }
    }
    placeAt(line, reference.path, content, location, hint)
  }
  for (const [parent, keys] of holders) freezeHolder(parent, keys)
  delete (line as { blobs?: unknown }).blobs
}

/**
 * A blob's content: its bytes when they can be decoded on first use (a string in `data`, not
 * JSON; a `text` all ASCII), else its text.
 */
async function readBlob(
  blobs: BlobStore,
  reference: BlobReference,
  location: string,
  signal: AbortSignal | undefined,
): Promise<Buffer | string> {
  if (reference.json || reference.path.length === 0) return blobs.get(reference, location, signal)
  const bytes = await blobs.read(reference, location)
  return (await canDecodeLater(bytes, reference.path.at(-1)!, signal))
    ? bytes
    : decodeUtf8(bytes, { signal })
}

function placeAt(
  line: DecodedLine,
  path: readonly (string | number)[],
  content: unknown,
  location: string,
  hint: string,
): void {
  if (path.length === 0) {
    if (line.data !== null) throw badPath(location, path, hint)
    line.data = content
    return
  }
  const { parent, key } = placeholderAt(line, path, location, hint)
  ;(parent as Record<string | number, unknown>)[key] = content
}

/** The object and key of the empty string a (non-empty) blob path points at. */
function placeholderAt(
  line: DecodedLine,
  path: readonly (string | number)[],
  location: string,
  hint: string,
): { parent: object; key: string | number } {
  let parent: unknown = line.data
  for (const part of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null || !Object.hasOwn(parent, part))
      throw badPath(location, path, hint)
    parent = (parent as Record<string | number, unknown>)[part]
  }
  const key = path[path.length - 1]!
  if (
    typeof parent !== 'object' ||
    parent === null ||
    Object.isFrozen(parent) ||
    (parent as Record<string | number, unknown>)[key] !== ''
  )
    throw badPath(location, path, hint)
  return { parent, key }
}

function badPath(
  location: string,
  path: readonly (string | number)[],
  hint: string,
): LogCorruptError {
  return new LogCorruptError(
    location,
    `a blob reference points at ${JSON.stringify(path)}, where the event holds no placeholder; ${hint}`,
  )
}
