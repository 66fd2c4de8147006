/**
 * Telling text from binary and recognizing images, from the first bytes of a file.
 */
import { type FileHandle, open } from 'node:fs/promises'

/** How many leading bytes the checks look at. */
export const SNIFF_BYTES = 8192

/** Reads up to `SNIFF_BYTES` from the start of a file. */
export async function readHead(path: string): Promise<Buffer> {
  const handle = await open(path, 'r')
  try {
    return await readHeadOf(handle)
  } finally {
    await handle.close()
  }
}

/** Reads up to `SNIFF_BYTES` from the start of an open file (its position is not used). */
export async function readHeadOf(handle: FileHandle): Promise<Buffer> {
  const buffer = Buffer.alloc(SNIFF_BYTES)
  const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0)
  return buffer.subarray(0, bytesRead)
}

/** The media type of an image format providers accept, from its magic bytes. */
export function imageMediaType(head: Buffer): string | undefined {
  if (
    head.length >= 8 &&
    head.readUInt32BE(0) === 0x89504e47 &&
    head.readUInt32BE(4) === 0x0d0a1a0a
  )
    return 'image/png'
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff)
    return 'image/jpeg'
  const ascii = head.subarray(0, 12).toString('latin1')
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'image/gif'
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'image/webp'
  return undefined
}

/**
 * Whether the bytes look binary: a NUL byte, or mostly control characters. UTF-8 and Latin-1
 * text pass; this is the heuristic git and ripgrep use, with the control-ratio as a backstop.
 */
export function looksBinary(head: Buffer): boolean {
  if (head.includes(0)) return true
  if (head.length === 0) return false
  let control = 0
  for (const byte of head) {
    // Tab, newline, vertical tab, form feed, carriage return and escape occur in text files.
    if (
      byte < 0x20 &&
      byte !== 0x09 &&
      byte !== 0x0a &&
      byte !== 0x0b &&
      byte !== 0x0c &&
      byte !== 0x0d &&
      byte !== 0x1b
    )
      control++
  }
  return control / head.length > 0.3
}
