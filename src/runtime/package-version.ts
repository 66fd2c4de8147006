/** rudder's version from its package.json, read once (announced to MCP servers, shown by --version). */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let version: string | undefined

export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(packageJsonPath(), 'utf8')) as { version: string }).version
  return version
}

/**
 * The package.json of the package this file belongs to, found by walking up: the file runs
 * from src/runtime/, dist/runtime/ or the command line's bundle in dist/bundle/cli/
 * (docs/decisions/0147), each at its own depth.
 */
export function packageJsonPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return join(dir, 'package.json')
}
