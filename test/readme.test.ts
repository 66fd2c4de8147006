/**
 * The README's TypeScript examples run for real, importing `rudder` the way a user does.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SCRATCH = resolve(ROOT, '.readme-examples')
const run = promisify(execFile)

function examples(): string[] {
  const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8')
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
}

describe('README examples', () => {
  afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }))

  it('has examples', () => {
    expect(examples().length).toBeGreaterThan(0)
  })

  for (const [index, code] of examples().entries()) {
    it(`example ${index + 1} runs without error`, async () => {
      mkdirSync(SCRATCH, { recursive: true })
      const file = resolve(SCRATCH, `example-${index + 1}.mts`)
      writeFileSync(file, code)
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', file], {
        cwd: ROOT,
      })
      expect(stderr).toBe('')
      expect(stdout).not.toBe('')
      if (code.includes('createAgent')) expect(stdout).toContain("status: 'completed'")
    })
  }
})
