/**
 * Comments and docs cite the contract as `docs/spec.md §N`. These checks keep those citations
 * pointing at headings that exist, keep the section numbers the ones the project started with
 * (so a citation means the same thing everywhere), and keep anyone from citing the shared brief
 * that is not in the repository.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, extname, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SPEC = resolve(ROOT, 'docs/spec.md')
const THIS_FILE = fileURLToPath(import.meta.url)

/** Where citations live: code, tests, benchmarks, docs and examples. */
const SCANNED = ['src', 'test', 'bench', 'docs', 'examples', 'README.md']
const TEXT_EXTENSIONS = new Set(['.ts', '.tsx', '.js', '.mjs', '.cjs', '.md', '.json', '.html'])
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', '.git'])

/** The sections every copy of the contract has had, in order; citations across the code use them. */
// biome-ignore format: one line per top-level section reads as the table of contents
const REQUIRED_SECTIONS = [
  '1', '1.1', '1.2', '1.3', '1.4', '1.5',
  '2',
  '3', '3.1', '3.2', '3.3',
  '4',
  '5', '5.1', '5.2', '5.3', '5.4', '5.5', '5.6',
  '6', '6.1', '6.2', '6.3', '6.4', '6.5', '6.6',
  '7', '8',
  '9', '9.1', '9.2', '9.3', '9.4', '9.5',
  '10', '11', '12', '13',
]

function textFiles(path: string): string[] {
  const absolute = resolve(ROOT, path)
  let stats: ReturnType<typeof statSync>
  try {
    stats = statSync(absolute)
  } catch {
    return [] // a scanned folder this checkout does not have (examples/, say)
  }
  if (stats.isFile()) return TEXT_EXTENSIONS.has(extname(absolute)) ? [absolute] : []
  const files: string[] = []
  for (const entry of readdirSync(absolute, { withFileTypes: true })) {
    if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) continue
    files.push(...textFiles(relative(ROOT, resolve(absolute, entry.name))))
  }
  return files
}

/** The section numbers of the headings of docs/spec.md (`## 5. The agent`, `### 5.3 …`). */
function specSections(): string[] {
  const text = readFileSync(SPEC, 'utf8')
  return [...text.matchAll(/^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s/gm)].map((match) => match[1]!)
}

type Citation = { readonly file: string; readonly line: number; readonly section: string }

/** Every `§N`, `§N.M` and both ends of `§N–M`, with where it stands. */
function citations(file: string): Citation[] {
  const text = readFileSync(file, 'utf8')
  const found: Citation[] = []
  for (const match of text.matchAll(/§\s?(\d+(?:\.\d+)*)(?:\s?[–-]\s?(\d+(?:\.\d+)*))?/g)) {
    // A section sign after an RFC number cites that RFC, not our contract.
    const before = text.slice(Math.max(0, match.index - 24), match.index)
    if (/RFC\s?\d+[^§\n]*$/.test(before)) continue
    const line = text.slice(0, match.index).split('\n').length
    const where = { file: relative(ROOT, file), line }
    found.push({ ...where, section: match[1]! })
    if (match[2] !== undefined) found.push({ ...where, section: match[2] })
  }
  return found
}

describe('docs/spec.md', () => {
  it('keeps the section numbers code comments cite', () => {
    const sections = specSections()
    expect(REQUIRED_SECTIONS.filter((section) => !sections.includes(section))).toEqual([])
    // Headings appear once each and in order, so `§N` names one place.
    expect(new Set(sections).size).toBe(sections.length)
    const order = (section: string) => section.split('.').map(Number)
    const sorted = [...sections].sort((a, b) => {
      const [x, y] = [order(a), order(b)]
      for (let i = 0; i < Math.max(x.length, y.length); i++) {
        const difference = (x[i] ?? -1) - (y[i] ?? -1)
        if (difference !== 0) return difference
      }
      return 0
    })
    expect(sections).toEqual(sorted)
  })

  it('lists the conformance scenarios 1 to 30 in order under §13', () => {
    const text = readFileSync(SPEC, 'utf8')
    const scenarios = text.slice(text.indexOf('## 13.'))
    const numbers = [...scenarios.matchAll(/^(\d+)\. \*\*/gm)].map((match) => Number(match[1]))
    expect(numbers).toEqual(Array.from({ length: 30 }, (_, index) => index + 1))
  })

  it('names the issue that removes each Status line', () => {
    const text = readFileSync(SPEC, 'utf8')
    // Each Status line goes when its issue settles the question, so there may be none.
    const paragraphs = text.split(/\n\s*\n/).filter((paragraph) => paragraph.startsWith('Status:'))
    expect(paragraphs.filter((paragraph) => !/\bissues? \d+/.test(paragraph))).toEqual([])
  })
})

describe('citations of the contract', () => {
  const files = SCANNED.flatMap(textFiles)

  it('finds the files it checks', () => {
    expect(files.some((file) => file.endsWith('src/agent/agent.ts'))).toBe(true)
    expect(files).toContain(SPEC)
  })

  it('every § names a heading of docs/spec.md', () => {
    const sections = new Set(specSections())
    const all = files.flatMap(citations)
    expect(all.length).toBeGreaterThan(50)
    const dangling = all
      .filter((citation) => !sections.has(citation.section))
      .map(({ file, line, section }) => `${file}:${line} cites §${section}`)
    expect(dangling).toEqual([])
  })

  it('nothing cites the shared brief instead of docs/spec.md', () => {
    // Spelled in pieces so this file does not match itself.
    const sharedBrief = new RegExp(`\\b${'SP'}EC\\b|shared/${'SP'}EC`)
    const offenders: string[] = []
    for (const file of files) {
      if (file === THIS_FILE) continue
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((text, index) => {
          if (sharedBrief.test(text))
            offenders.push(`${relative(ROOT, file)}:${index + 1}: ${text.trim()}`)
        })
    }
    expect(offenders).toEqual([])
  })
})
