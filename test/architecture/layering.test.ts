/**
 * Encodes the allowed dependency arrows of STYLE.md: core ← providers, tools, stores ← agent
 * ← bridges, frontends. Front ends use only the public entry points.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

/** The layer of a file: its top folder under src/, or the file name for top-level modules. */
function layerOf(file: string): string {
  const [top] = relative(SRC, file).split(/[\\/]/)
  return top!.replace(/\.(ts|js)$/, '')
}

const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  providers: ['core', 'providers'],
  tools: ['core', 'tools'],
  mcp: ['core', 'tools', 'mcp'],
  stores: ['core', 'stores'],
  agent: ['core', 'providers', 'tools', 'stores', 'agent'],
  bridges: ['core', 'providers', 'tools', 'mcp', 'stores', 'agent', 'bridges'],
  // Front ends see rudder only through its public entry points and the composition root.
  frontends: ['frontends', 'index', 'testing', 'runtime'],
  runtime: ['core', 'providers', 'tools', 'mcp', 'stores', 'agent', 'bridges', 'runtime'],
  index: ['core', 'providers', 'tools', 'mcp', 'stores', 'agent', 'bridges', 'runtime', 'index'],
  testing: ['core', 'providers', 'tools', 'stores', 'agent', 'testing'],
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers: string[] = []
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/g,
  ))
    specifiers.push(match[1]!)
  for (const match of text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g))
    specifiers.push(match[1]!)
  for (const match of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g))
    specifiers.push(match[1]!)
  return specifiers
}

describe('layering', () => {
  const files = sourceFiles(SRC)

  it('finds the source files', () => {
    expect(files.some((file) => file.endsWith('core/session.ts'))).toBe(true)
  })

  it('every import points along an allowed arrow', () => {
    const violations: string[] = []
    for (const file of files) {
      const layer = layerOf(file)
      const allowed = ALLOWED[layer]
      if (!allowed) {
        violations.push(
          `${relative(SRC, file)}: folder "${layer}" has no place in the layering of STYLE.md`,
        )
        continue
      }
      for (const specifier of importsOf(file)) {
        if (!specifier.startsWith('.')) continue
        const target = layerOf(resolve(dirname(file), specifier))
        if (!allowed.includes(target))
          violations.push(`${relative(SRC, file)} imports ${specifier} (${layer} → ${target})`)
      }
    }
    expect(violations).toEqual([])
  })

  it('core imports nothing from Node and no package', () => {
    const violations = files
      .filter((file) => layerOf(file) === 'core')
      .flatMap((file) =>
        importsOf(file)
          .filter((s) => !s.startsWith('.'))
          .map((s) => `${relative(SRC, file)} imports ${s}`),
      )
    expect(violations).toEqual([])
  })

  it('core uses no Node globals (process, Buffer, require)', () => {
    const violations = files
      .filter((file) => layerOf(file) === 'core')
      .filter((file) =>
        /\b(process|Buffer|require|__dirname)\s*[.(]/.test(readFileSync(file, 'utf8')),
      )
      .map((file) => relative(SRC, file))
    expect(violations).toEqual([])
  })
})
