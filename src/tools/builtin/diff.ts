/**
 * A line-based unified diff (Myers' O(ND) algorithm) for the `meta` of `edit` results, so
 * front ends can show what changed without keeping both versions of the file.
 */

type Operation = { readonly kind: ' ' | '-' | '+'; readonly line: string }

/** Past this many differing lines the middle is shown as one replaced block (bounded work). */
const MAX_EDIT_DISTANCE = 2000

/**
 * A unified diff of two texts, with `context` unchanged lines around each change and
 * `--- a/<path>` / `+++ b/<path>` headers. Empty when the texts are equal. A missing final
 * newline is not marked.
 */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  return cappedDiff(path, before, after, { context }).diff
}

/** A diff cut to a size, and whether it was cut. */
export type CappedDiff = { readonly diff: string; readonly isTruncated: boolean }

/**
 * `unifiedDiff` cut after `maxChars` characters (whole lines; default unlimited): a diff kept in
 * an event's `meta` must stay small whatever the edit. Never builds argument lists from the
 * texts (a spread of 200 000 lines overflows the stack).
 */
export function cappedDiff(
  path: string,
  before: string,
  after: string,
  options: { readonly context?: number; readonly maxChars?: number } = {},
): CappedDiff {
  if (before === after) return { diff: '', isTruncated: false }
  const maxChars = options.maxChars ?? Number.POSITIVE_INFINITY
  const lines = [`--- a/${path}`, `+++ b/${path}`]
  let chars = lines[0]!.length + lines[1]!.length + 1
  const operations = diffLines(splitLines(before), splitLines(after))
  for (const line of hunkLines(operations, options.context ?? 3)) {
    chars += line.length + 1
    if (chars > maxChars) return { diff: lines.join('\n'), isTruncated: true }
    lines.push(line)
  }
  return { diff: lines.join('\n'), isTruncated: false }
}

function splitLines(text: string): string[] {
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

function diffLines(a: readonly string[], b: readonly string[]): Operation[] {
  let prefix = 0
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++
  let suffix = 0
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++
  const middleA = a.slice(prefix, a.length - suffix)
  const middleB = b.slice(prefix, b.length - suffix)
  const operations: Operation[] = []
  for (let index = 0; index < prefix; index++) operations.push({ kind: ' ', line: a[index]! })
  const middle = myers(middleA, middleB)
  if (middle !== undefined) for (const operation of middle) operations.push(operation)
  else {
    for (const line of middleA) operations.push({ kind: '-', line })
    for (const line of middleB) operations.push({ kind: '+', line })
  }
  for (let index = a.length - suffix; index < a.length; index++)
    operations.push({ kind: ' ', line: a[index]! })
  return operations
}

/** The shortest edit script, or undefined when it is longer than `MAX_EDIT_DISTANCE`. */
function myers(a: readonly string[], b: readonly string[]): Operation[] | undefined {
  const n = a.length
  const m = b.length
  const limit = Math.min(n + m, MAX_EDIT_DISTANCE)
  const offset = limit + 1
  const v = new Int32Array(2 * limit + 3)
  // Each snapshot keeps only the diagonals -d..d, so memory grows with D², not D·(N+M).
  const trace: Int32Array[] = []
  for (let d = 0; d <= limit; d++) {
    trace.push(v.slice(offset - d, offset + d + 1))
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      v[offset + k] = x
      if (x >= n && y >= m) return backtrack(a, b, trace, d)
    }
  }
  return undefined
}

function backtrack(
  a: readonly string[],
  b: readonly string[],
  trace: readonly Int32Array[],
  distance: number,
): Operation[] {
  const reversed: Operation[] = []
  let x = a.length
  let y = b.length
  for (let d = distance; d > 0; d--) {
    const snapshot = trace[d]!
    const at = (k: number) => snapshot[k + d]!
    const k = x - y
    const previousK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1
    const previousX = at(previousK)
    const previousY = previousX - previousK
    while (x > previousX && y > previousY) {
      reversed.push({ kind: ' ', line: a[x - 1]! })
      x--
      y--
    }
    if (x === previousX) reversed.push({ kind: '+', line: b[y - 1]! })
    else reversed.push({ kind: '-', line: a[x - 1]! })
    x = previousX
    y = previousY
  }
  while (x > 0 && y > 0) {
    reversed.push({ kind: ' ', line: a[x - 1]! })
    x--
    y--
  }
  return reversed.reverse()
}

/** The hunks of a diff, line by line, with line numbers counted once across all hunks. */
function* hunkLines(operations: readonly Operation[], context: number): Generator<string> {
  const changed: number[] = []
  operations.forEach((operation, index) => {
    if (operation.kind !== ' ') changed.push(index)
  })
  let cursor = 0
  let counted = 0
  let oldLine = 1
  let newLine = 1
  while (cursor < changed.length) {
    const start = Math.max(0, changed[cursor]! - context)
    let end = changed[cursor]!
    // Changes closer than two contexts apart share a hunk, as in `diff -u`.
    while (cursor + 1 < changed.length && changed[cursor + 1]! - end <= 2 * context) {
      cursor++
      end = changed[cursor]!
    }
    end = Math.min(operations.length - 1, end + context)
    cursor++
    for (; counted < start; counted++) {
      if (operations[counted]!.kind !== '+') oldLine++
      if (operations[counted]!.kind !== '-') newLine++
    }
    let oldCount = 0
    let newCount = 0
    for (let index = start; index <= end; index++) {
      if (operations[index]!.kind !== '+') oldCount++
      if (operations[index]!.kind !== '-') newCount++
    }
    yield `@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`
    for (let index = start; index <= end; index++) {
      const operation = operations[index]!
      yield operation.kind + operation.line
    }
  }
}

/** `start,count` as `diff -u` writes it: an empty range names the line before it. */
function range(start: number, count: number): string {
  if (count === 0) return `${start - 1},0`
  return count === 1 ? `${start}` : `${start},${count}`
}
