/**
 * The JSONL line reader over files of several chunks: every line handed out whole, with its
 * number and end offset, the batch's bytes exactly the file's bytes of its lines, lines before
 * `firstLine` skipped, a start offset honoured and a last segment without `\n` reported torn;
 * the next chunk read while a batch is taken.
 */
import { writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LINE_SHAPE, type Line, readLines } from '../../src/stores/jsonl/line-reader.js'
import { haveSameClass, isSmallInteger } from '../support/v8-natives.js'
import { tempDirectory } from './support/stores.js'

/** Lines of pseudo-random lengths (fixed seed), non-ASCII included, some far over 1 MiB total. */
function linesOf(count: number, seed: number): string[] {
  let state = seed
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state
  }
  const lines: string[] = []
  for (let index = 0; index < count; index++) {
    const length = next() % 3 === 0 ? next() % 40_000 : next() % 300
    lines.push(`${index}:${'é漢x'.repeat(Math.ceil(length / 3)).slice(0, length)}`)
  }
  return lines
}

async function readAll(path: string, options?: Parameters<typeof readLines>[1]) {
  const lines: Line[] = []
  let torn: { number: number; start: number; bytes: number } | undefined
  const bytes: Buffer[] = []
  for await (const batch of readLines(path, options)) {
    for (const line of batch.lines) lines.push(line)
    if (batch.torn) torn = { ...batch.torn }
    if (batch.bytes) {
      // Valid until the next batch only: copied, and checked against where the batch starts.
      expect(batch.start).toBe(
        batch.lines[0]!.position - Buffer.byteLength(`${batch.lines[0]!.text}\n`),
      )
      bytes.push(Buffer.from(batch.bytes))
    }
  }
  return { lines, torn, bytes: Buffer.concat(bytes) }
}

describe('readLines', () => {
  const texts = linesOf(600, 17)
  const file = Buffer.from(`${texts.join('\n')}\n`)

  it('hands out every line of a file of several chunks whole, numbered, with its end', async () => {
    const path = join(tempDirectory(), 'whole.jsonl')
    writeFileSync(path, file)
    expect(file.length).toBeGreaterThan(3 * 1024 * 1024)
    const { lines, torn, bytes } = await readAll(path)
    expect(torn).toBeUndefined()
    expect(lines.map((line) => line.text)).toEqual(texts)
    expect(lines.map((line) => line.where)).toEqual(texts.map((_, index) => index + 1))
    let end = 0
    for (const [index, line] of lines.entries()) {
      end += Buffer.byteLength(texts[index]!) + 1
      expect(line).toEqual({ kind: 'line', text: texts[index], where: index + 1, position: end })
    }
    expect(bytes.equals(file)).toBe(true)
  })

  it('skips lines before firstLine, counting them, and starts at a given line start', async () => {
    const path = join(tempDirectory(), 'skip.jsonl')
    writeFileSync(path, file)
    const skipped = await readAll(path, { firstLine: 301 })
    expect(skipped.lines.map((line) => line.where)).toEqual(texts.slice(300).map((_, i) => i + 301))
    expect(skipped.lines.map((line) => line.text)).toEqual(texts.slice(300))
    const offset = Buffer.byteLength(`${texts.slice(0, 250).join('\n')}\n`)
    expect(
      skipped.bytes.equals(file.subarray(Buffer.byteLength(`${texts.slice(0, 300).join('\n')}\n`))),
    ).toBe(true)
    const from = await readAll(path, { from: { offset, line: 251 } })
    expect(from.lines.map((line) => line.text)).toEqual(texts.slice(250))
    expect(from.lines[0]!.where).toBe(251)
    expect(from.lines.at(-1)!.position).toBe(file.length)
    expect(from.bytes.equals(file.subarray(offset))).toBe(true)
  })

  it('reports a last segment without a newline as torn, after the complete lines', async () => {
    const path = join(tempDirectory(), 'torn.jsonl')
    const tail = Buffer.from('{"seq":600,"ti')
    writeFileSync(path, Buffer.concat([file, tail]))
    const { lines, torn } = await readAll(path)
    expect(lines.map((line) => line.text)).toEqual(texts)
    expect(torn).toEqual({ number: 601, start: file.length, bytes: tail.length })
  })

  it('gives lines the class LINE_SHAPE holds when the start offset is a boxed double', async () => {
    const path = join(tempDirectory(), 'boxed.jsonl')
    writeFileSync(path, file)
    const offset = Buffer.byteLength(`${texts.slice(0, 250).join('\n')}\n`)
    // A field that once held a fraction holds doubles: reading it gives a boxed number, as a
    // parsed checkpoint's `start` did (decision 0179).
    const holder = { offset: 0.5, line: 0.5 }
    holder.offset = offset
    holder.line = 251
    expect(isSmallInteger(holder.offset)).toBe(false)
    const from = await readAll(path, { from: { offset: holder.offset, line: holder.line } })
    expect(from.lines.map((line) => line.text)).toEqual(texts.slice(250))
    expect(from.lines.at(-1)!.position).toBe(file.length)
    for (const line of [from.lines[0]!, from.lines.at(-1)!]) {
      expect(isSmallInteger(line.position)).toBe(true)
      expect(isSmallInteger(line.where)).toBe(true)
      expect(haveSameClass(line, LINE_SHAPE)).toBe(true)
    }
  })

  it('reads a line longer than two chunks whole, between ordinary ones', async () => {
    const path = join(tempDirectory(), 'long.jsonl')
    const long = `{"seq":1,"text":"${'é'.repeat(1_600_000)}"}`
    const around = ['{"seq":0}', long, '{"seq":2}']
    writeFileSync(path, `${around.join('\n')}\n`)
    const { lines, bytes } = await readAll(path)
    expect(lines.map((line) => line.text)).toEqual(around)
    expect(lines.at(-1)!.position).toBe(Buffer.byteLength(`${around.join('\n')}\n`))
    expect(bytes.toString()).toBe(`${around.join('\n')}\n`)
  })

  it('reads the next chunk while the caller takes a batch, and ends it before closing', async () => {
    const path = join(tempDirectory(), 'ahead.jsonl')
    writeFileSync(path, file)
    const probe = await open(path, 'r')
    const prototype = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => unknown }
    await probe.close()
    const read = prototype.read
    const reads: Promise<unknown>[] = []
    prototype.read = function (this: unknown, ...args: unknown[]) {
      const result = read.apply(this, args) as Promise<unknown>
      reads.push(result)
      return result
    }
    try {
      const batches = readLines(path)[Symbol.asyncIterator]()
      const first = await batches.next()
      expect(first.done).toBe(false)
      // The first chunk, and the one after it already asked for while this batch is taken.
      expect(reads).toHaveLength(2)
      // Stopping here: the read under way ends before the file is closed, and nothing throws.
      await batches.return(undefined)
      await expect(Promise.all(reads)).resolves.toHaveLength(2)
    } finally {
      prototype.read = read
    }
  })
})
