/**
 * Chromium for browser tests: Debian's package (`apt-get install -y chromium`) driven by
 * playwright-core, headless, with a fresh profile and the background services off.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/**
 * Launches Chromium with a fresh profile and the background services off. Throws, naming the
 * install command, when it is missing.
 */
export async function launchChromium(): Promise<{
  context: BrowserContext
  close: () => Promise<void>
}> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (see README, "Browser tests")`,
    )
  const profile = await mkdtemp(join(tmpdir(), 'rudder-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    context,
    close: async () => {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    },
  }
}
