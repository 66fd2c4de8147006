import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/support/verify-agents.ts', 'test/support/property-seed.ts'],
    // Two-core CI machines: keep worker count bounded so subprocess tests are not starved.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
