/** Runs after every test: verifies the agent harnesses the test created (scenario 28). */
import { afterEach } from 'vitest'
import { verifyHarnesses } from './agent-harness.js'

afterEach(async () => {
  await verifyHarnesses()
})
