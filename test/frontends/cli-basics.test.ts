import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const BIN = resolve(ROOT, 'bin/rudder.js')
const run = promisify(execFile)
const version = (
  JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string }
).version

async function rudder(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args])
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

describe('the rudder bin', () => {
  it('prints its version', async () => {
    expect(await rudder('--version')).toEqual({
      code: 0,
      stdout: `rudder ${version}\n`,
      stderr: '',
    })
  })

  it('prints help', async () => {
    const result = await rudder('--help')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Usage:')
    expect(result.stderr).toBe('')
  })

  it('exits 2 with usage on stderr when there is no task and no terminal', async () => {
    const result = await rudder()
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('Usage: rudder [options] "task"')
  })

  it('rejects an unknown flag with exit 2 and says how to get help', async () => {
    const result = await rudder('--no-such-flag')
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('rudder --help')
  })
})
