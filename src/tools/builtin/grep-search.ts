/**
 * The two engines behind `grep`: ripgrep (fast, when installed) and a JavaScript search over
 * the same walk `glob` uses. Both skip `.git`, `node_modules`, `.gitignore`d and binary files,
 * search hidden files, do not follow symlinks, and report matches in path order.
 */
import { spawn } from 'node:child_process'
import { constants } from 'node:fs'
import { access, type FileHandle, open } from 'node:fs/promises'
import { basename, delimiter, dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { looksBinary, readHeadOf } from './file-kind.js'
import { compileGlob } from './glob-pattern.js'
import { type LineMatch, startRegexWorker, type WorkerMatchOutcome } from './regex-worker.js'
import { walk } from './walk.js'

/** One matching line; `path` is absolute. */
export type GrepMatch = { readonly path: string; readonly line: number; readonly text: string }

export type GrepQuery = {
  readonly pattern: string
  /** Absolute real path of a file or directory. */
  readonly target: string
  readonly isDirectory: boolean
  /** Filter on file paths, ripgrep style: no `/` matches the name, else the path below `target`; a leading `!` excludes. */
  readonly glob?: string | undefined
  readonly ignoreCase: boolean
  readonly literal: boolean
  /** Stop after this many matches (one more is looked for, to know whether there are more). */
  readonly limit: number
  /** Where `.gitignore` files start to apply (the workspace). */
  readonly ignoreRoot: string
  /** JS engine only: larger files are skipped. */
  readonly maxFileBytes: number
  /** JS engine only: how long a regular expression may run in all, in milliseconds. */
  readonly timeoutMs: number
  readonly signal: AbortSignal
}

export type GrepOutcome =
  | { readonly ok: true; readonly matches: readonly GrepMatch[]; readonly isTruncated: boolean }
  | { readonly ok: false; readonly message: string; readonly isTooSlow?: boolean }

/** Looks for an executable on PATH; undefined when there is none. */
export async function findOnPath(
  name: string,
  path = process.env.PATH ?? '',
): Promise<string | undefined> {
  for (const directory of path.split(delimiter)) {
    if (directory === '') continue
    const candidate = join(directory, name)
    try {
      await access(candidate, constants.X_OK)
      return candidate
    } catch {
      // Not in this directory (or not executable); keep looking.
    }
  }
  return undefined
}

/** Orders paths component by component, as a depth-first walk with sorted names visits them. */
export function comparePaths(a: string, b: string): number {
  const left = a.split('/')
  const right = b.split('/')
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return left[index]! < right[index]! ? -1 : 1
  }
  return left.length - right.length
}

/** Searches with the ripgrep binary at `ripgrep`. */
export function searchWithRipgrep(ripgrep: string, query: GrepQuery): Promise<GrepOutcome> {
  const args = ['--json', '--no-config', '--no-require-git', '--hidden', '--sort', 'path']
  args.push('--glob', '!.git', '--glob', '!node_modules')
  if (query.ignoreCase) args.push('--ignore-case')
  if (query.literal) args.push('--fixed-strings')
  if (query.glob !== undefined) args.push('--glob', query.glob)
  // Run inside the searched directory so that globs with a "/" are relative to it, as in the
  // JavaScript engine; ripgrep then prints paths relative to it.
  const cwd = query.isDirectory ? query.target : dirname(query.target)
  args.push('--regexp', query.pattern)
  // An explicit path: without one, ripgrep may search stdin instead of the directory.
  args.push('--', query.isDirectory ? '.' : basename(query.target))
  return new Promise((finish) => {
    const child = spawn(ripgrep, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    const matches: GrepMatch[] = []
    let isTruncated = false
    let stderr = ''
    let startError: Error | undefined
    const onAbort = () => child.kill()
    query.signal.addEventListener('abort', onAbort, { once: true })
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString('utf8')
    })
    const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY })
    lines.on('line', (line) => {
      if (isTruncated) return
      const match = parseRipgrepMatch(line, cwd)
      if (match === undefined) return
      if (matches.length === query.limit) {
        isTruncated = true
        child.kill()
        return
      }
      matches.push(match)
    })
    child.on('error', (error) => {
      startError = error
    })
    child.on('close', (code) => {
      query.signal.removeEventListener('abort', onAbort)
      if (startError !== undefined)
        finish({ ok: false, message: `ripgrep could not run: ${startError.message}` })
      else if (code === 2 && matches.length === 0 && !isTruncated)
        finish({ ok: false, message: `ripgrep: ${stderr.trim()}` })
      else finish({ ok: true, matches, isTruncated })
    })
  })
}

type RipgrepText = { text?: string; bytes?: string }

/** A `match` message of `rg --json` as a match; undefined for other messages. */
function parseRipgrepMatch(line: string, cwd: string): GrepMatch | undefined {
  let message: {
    type?: string
    data?: { path?: RipgrepText; lines?: RipgrepText; line_number?: number }
  }
  try {
    message = JSON.parse(line)
  } catch {
    // ripgrep writes one JSON value per line; anything else is not a match.
    return undefined
  }
  if (message.type !== 'match' || message.data === undefined) return undefined
  const { path, lines, line_number: lineNumber } = message.data
  if (path === undefined || lines === undefined || typeof lineNumber !== 'number') return undefined
  return {
    path: resolve(cwd, decodeText(path)),
    line: lineNumber,
    text: decodeText(lines).replace(/\r?\n$/, ''),
  }
}

// ripgrep sends text that is not valid UTF-8 as base64 `bytes`.
function decodeText(value: RipgrepText): string {
  return value.text ?? Buffer.from(value.bytes ?? '', 'base64').toString('utf8')
}

/**
 * Searches in JavaScript. Returns an error outcome for an invalid regular expression, and for
 * one that runs past `timeoutMs` (it is matched in a worker that the deadline or the signal
 * terminates; plain text is matched here, as it cannot backtrack).
 */
export async function searchWithJavaScript(query: GrepQuery): Promise<GrepOutcome> {
  let regex: RegExp
  const source = query.literal
    ? query.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    : query.pattern
  const flags = query.ignoreCase ? 'i' : ''
  try {
    regex = new RegExp(source, flags)
  } catch (error) {
    return { ok: false, message: `invalid regular expression: ${(error as Error).message}` }
  }
  const worker = query.literal
    ? undefined
    : startRegexWorker({ source, flags, deadlineMs: query.timeoutMs, signal: query.signal })
  try {
    return await searchFiles(query, async (text, limit) =>
      worker === undefined
        ? { ok: true, matches: matchLines(regex, text, limit) }
        : worker.match(text, limit),
    )
  } finally {
    await worker?.close()
  }
}

type LineMatcher = (text: string, limit: number) => Promise<WorkerMatchOutcome>

async function searchFiles(query: GrepQuery, matchText: LineMatcher): Promise<GrepOutcome> {
  const filter = fileFilter(query.glob)
  const matches: GrepMatch[] = []
  const files: AsyncIterable<{ path: string; relative: string }> = query.isDirectory
    ? filesBelow(query)
    : single(query.target)
  for await (const file of files) {
    if (query.signal.aborted) break
    if (query.isDirectory && !filter(file.relative)) continue
    const text = await readSearchable(file.path, query.maxFileBytes)
    if (text === undefined) continue
    // One more than the limit is looked for, to know whether there are more.
    const found = await matchText(text, query.limit - matches.length + 1)
    if (!found.ok) {
      if (found.reason === 'canceled') break
      if (found.reason === 'failed') return { ok: false, message: found.message }
      return {
        ok: false,
        isTooSlow: true,
        message: `${found.message}: the regular expression is too slow on these files (nested repetition such as (a+)+ makes JavaScript's regex engine backtrack)`,
      }
    }
    for (const match of found.matches) {
      if (matches.length === query.limit) return { ok: true, matches, isTruncated: true }
      matches.push({ path: file.path, line: match.line, text: match.text })
    }
  }
  return { ok: true, matches, isTruncated: false }
}

function matchLines(regex: RegExp, text: string, limit: number): LineMatch[] {
  const lines = text.split(/\r?\n/)
  const found: LineMatch[] = []
  for (let index = 0; index < lines.length && found.length < limit; index++) {
    const line = lines[index]!
    if (index === lines.length - 1 && line === '') break
    if (regex.test(line)) found.push({ line: index + 1, text: line })
  }
  return found
}

async function* single(path: string): AsyncGenerator<{ path: string; relative: string }> {
  yield { path, relative: basename(path) }
}

async function* filesBelow(query: GrepQuery): AsyncGenerator<{ path: string; relative: string }> {
  for await (const entry of walk({
    start: query.target,
    ignoreRoot: query.ignoreRoot,
    signal: query.signal,
  }))
    if (entry.kind === 'file') yield entry
}

function fileFilter(glob: string | undefined): (relative: string) => boolean {
  if (glob === undefined) return () => true
  const isExcluding = glob.startsWith('!')
  const pattern = isExcluding ? glob.slice(1) : glob
  const matcher = compileGlob(pattern.replace(/^\//, ''))
  const byName = !pattern.includes('/')
  return (relative) => {
    const subject = byName ? (relative.split('/').pop() ?? relative) : relative
    return matcher.test(subject) !== isExcluding
  }
}

/** The file's text, or undefined when it is too large, binary or unreadable. */
async function readSearchable(path: string, maxBytes: number): Promise<string | undefined> {
  let handle: FileHandle | undefined
  try {
    // Not through a symlink swapped in after the walk saw a file, and never blocking on a FIFO.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    const stats = await handle.stat()
    if (!stats.isFile() || stats.size > maxBytes) return undefined
    if (looksBinary(await readHeadOf(handle))) return undefined
    return await handle.readFile('utf8')
  } catch {
    // A file that vanished or cannot be read has nothing to match; ripgrep skips these too.
    return undefined
  } finally {
    await handle?.close()
  }
}
