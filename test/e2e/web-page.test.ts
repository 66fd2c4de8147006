/**
 * The web page in a real Chromium (Debian's `chromium`, driven by playwright-core) against a
 * real `startWebServer` on 127.0.0.1 with a scripted model that holds its stream until a file
 * appears. One browser and one page for the whole file; the cases run in order on one session.
 *
 * Run alone with `npm run test:browser`. Screenshots go to test-artifacts/web/ (not committed).
 */
import { mkdir } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appends } from '../../bench/fixtures.js'
import { checkLog } from '../../src/index.js'
import { type WebPlace, webPlace } from '../frontends/web/web-support.js'
import { launchChromium } from './chromium.js'

const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../test-artifacts/web')

const teardown: (() => Promise<void>)[] = []
let place: WebPlace
let page: Page
let sessionId: string

const transcript = () => page.getByTestId('transcript')
const editor = () => page.getByTestId('editor')
const pendingItem = (text: string) => page.locator('[data-testid=pending] li', { hasText: text })

async function checkedSession(): Promise<void> {
  const events = await place.checkedLog(sessionId)
  expect(checkLog(events)).toEqual([])
}

beforeAll(async () => {
  place = await webPlace(
    [
      { text: 'Looking at the project now.', holdUntilFile: 'go-1' },
      { text: 'Noted the steer; all done.' },
      { text: 'Follow-up handled.' },
      { toolCalls: [{ id: 't1', name: 'bash', args: { command: 'echo approved' } }] },
      { text: 'The command ran.', holdUntilFile: 'go-2' },
      { text: 'This will be canceled', holdUntilFile: 'never' },
    ],
    { cleanup: (step) => void teardown.push(step) },
  )
  const browser = await launchChromium()
  teardown.push(browser.close)
  page = await browser.context.newPage()
  await mkdir(ARTIFACTS, { recursive: true })
})

afterAll(async () => {
  for (const step of teardown.reverse()) await step()
})

describe('the web page in Chromium', () => {
  it('opens with the token URL and starts a session', async () => {
    await page.goto(place.server.tokenUrl)
    expect(new URL(page.url()).search).toBe('')
    await page.getByTestId('new-session').click()
    await page.waitForURL(/#\/s\//)
    sessionId = decodeURIComponent(/#\/s\/([^/]+)/.exec(page.url())![1]!)
    await page.locator('[data-testid=status][data-mode=live]').waitFor()
  })

  it('steers the running turn (the steer joins turn 1) and watches a queued follow-up move', async () => {
    await editor().fill('Please check the project')
    await editor().press('Enter')
    await transcript().getByText('Looking at the project now.').waitFor()
    await page.locator('[data-testid=status][data-agent=running]').waitFor()
    await expect.poll(() => page.getByTestId('primary').textContent()).toBe('Steer')

    await editor().fill('Also check the README')
    await editor().press('Enter')
    await pendingItem('Also check the README').and(page.locator('[data-status=staged]')).waitFor()
    await editor().fill('Then summarize')
    await page.getByTestId('queue').click()
    await pendingItem('Then summarize').and(page.locator('[data-status=queued]')).waitFor()
    // Record every state the follow-up's receipt shows from here on.
    // (In-page scripts are strings: this file is type-checked without the DOM library.)
    await page.evaluate(`(() => {
      const seen = []
      window.seen = seen
      const note = () => {
        for (const item of document.querySelectorAll('[data-testid=pending] li'))
          if (item.textContent.includes('Then summarize')) {
            const status = item.getAttribute('data-status')
            if (seen.at(-1) !== status) seen.push(status)
          }
      }
      note()
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true })
    })()`)

    await place.release('go-1')
    const steer = transcript().locator('[data-kind=steering]')
    await steer.waitFor()
    expect(await steer.getAttribute('data-turn')).toBe('1')
    expect(await steer.textContent()).toContain('before step 2')
    await pendingItem('Then summarize').and(page.locator('[data-status=completed]')).waitFor()
    const seen = (await page.evaluate('window.seen')) as string[]
    expect(seen[0]).toBe('queued')
    expect(seen.at(-1)).toBe('completed')
    // The steer stands inside turn 1, before its end; the follow-up is turn 2.
    const order = await transcript()
      .locator('[data-kind]')
      .evaluateAll((nodes) =>
        nodes.map(
          (node) => `${node.getAttribute('data-kind')}${node.getAttribute('data-turn') ?? ''}`,
        ),
      )
    expect(order.indexOf('steering1')).toBeGreaterThan(order.indexOf('turn-start1'))
    expect(order.indexOf('steering1')).toBeLessThan(order.indexOf('turn-end1'))
    expect(order.indexOf('turn-start2')).toBeGreaterThan(order.indexOf('turn-end1'))
    await transcript().getByText('Follow-up handled.').waitFor()
    await checkedSession()
  })

  it('shows injected context folded and labelled by its source', async () => {
    await page.getByTestId('context-toggle').check()
    await page.getByTestId('context-name').fill('ci-status')
    await editor().fill('build 812 passed')
    await editor().press('Enter')
    await page.getByTestId('context-toggle').uncheck()
    await place.json(`/api/sessions/${sessionId}/inject`, {
      json: {
        text: '<system-reminder>Tabs, not spaces.</system-reminder>',
        source: { kind: 'hook', hook: 'prompt-submit', name: 'guard.sh' },
      },
    })
    for (const label of ['plugin:ci-status', 'hook:prompt-submit:guard.sh']) {
      const context = transcript().locator(`details[data-kind=context][data-label="${label}"]`)
      await context.waitFor()
      expect(await context.evaluate((node) => (node as unknown as { open: boolean }).open)).toBe(
        false,
      )
      expect(await context.locator('summary').textContent()).toContain(label)
    }
    const folded = transcript().locator('details[data-label="hook:prompt-submit:guard.sh"]')
    await folded.locator('summary').click()
    await folded.getByText('<system-reminder>Tabs, not spaces.</system-reminder>').waitFor()
    await checkedSession()
  })

  it('asks before running a tool and runs it once approved', async () => {
    await editor().fill('run the command')
    await editor().press('Enter')
    const question = page.getByTestId('approval')
    await question.locator('code', { hasText: 'echo approved' }).waitFor()
    await question.getByRole('button', { name: 'Allow once' }).click()
    const card = transcript().locator('[data-kind=tool][data-status=ok]')
    await card.waitFor()
    await card.locator('summary').click()
    await card.locator('pre.output', { hasText: 'approved' }).waitFor()
    await expect.poll(() => question.count()).toBe(0)
  })

  it('shows the same transcript after a reload mid-turn', async () => {
    const streaming = transcript().locator('[data-kind=assistant][data-streaming=true]', {
      hasText: 'The command ran.',
    })
    await streaming.waitFor()
    await page.screenshot({ path: join(ARTIFACTS, 'main-view.png') })
    const before = await transcript().textContent()
    await page.reload()
    await page.locator('[data-testid=session][data-connection=live]').waitFor()
    await streaming.waitFor()
    expect(await transcript().textContent()).toBe(before)
    await page.locator('[data-testid=status][data-agent=running]').waitFor()
    await place.release('go-2')
    await transcript().locator('[data-kind=turn-end][data-turn="3"]').waitFor()
    await checkedSession()
  })

  it('cancels a running turn and puts discarded input back in the editor', async () => {
    await editor().fill('a long task')
    await editor().press('Enter')
    await transcript().getByText('This will be canceled').waitFor()
    await editor().fill('put me back')
    await page.getByTestId('queue').click()
    await pendingItem('put me back').and(page.locator('[data-status=queued]')).waitFor()
    await page.getByTestId('cancel').click()
    const end = transcript().locator('[data-kind=turn-end][data-turn="4"]')
    await end.waitFor()
    expect(await end.textContent()).toContain('canceled')
    await transcript().locator('[data-kind=assistant]', { hasText: 'interrupted' }).waitFor()
    await pendingItem('put me back').and(page.locator('[data-status=discarded]')).waitFor()
    expect(await editor().inputValue()).toBe('put me back')
    await page.locator('[data-testid=status][data-agent=idle]').waitFor()
    await checkedSession()
  })

  it('shows the raw log with seq, type and source, and fits a phone-sized screen', async () => {
    await page.getByTestId('log-tab').click()
    const rows = page.locator('[data-testid=raw-log] tbody tr')
    const log = await place.checkedLog(sessionId)
    await expect.poll(() => rows.count()).toBe(log.length)
    const context = rows.filter({ hasText: 'plugin:ci-status' })
    expect(await context.locator('.type').textContent()).toBe('user/message')
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await page.getByTestId('session-list').isVisible()).toBe(false)
    expect(await editor().isVisible()).toBe(true)
    const overflow = (await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    )) as number
    expect(overflow).toBeLessThanOrEqual(0)
    await page.goto(`${place.base}#/s/${sessionId}`)
    await page.locator('[data-testid=session][data-connection=live]').waitFor()
    await page.screenshot({ path: join(ARTIFACTS, 'phone-view.png') })
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  it('paints a 10k-event session from the log', async () => {
    const session = await place.host.store.create({ title: 'large' })
    for (const [type, data] of appends(10_000)) session.append(type, data as never)
    await session.close()
    const started = Date.now()
    await page.goto(`${place.base}#/s/${session.header.id}`)
    await page.locator('[data-testid=session][data-connection=live]').waitFor()
    const lastSeq = session.nextSeq - 1
    await page.locator(`[data-testid=status]`, { hasText: `seq ${lastSeq}` }).waitFor()
    await transcript().locator('button.earlier').waitFor()
    const paintMs = Date.now() - started
    console.log(`first transcript paint of a ${lastSeq + 1}-event session: ${paintMs} ms`)
    expect(checkLog(session.residentEvents)).toEqual([])
  })
})
