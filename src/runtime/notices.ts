/**
 * What a runtime tells the person running it, as data: front ends decide how to show it (the
 * CLI prints `message` on stderr). Configuration notices come from `loadConfig` before
 * anything runs; refusals come during a run, through `RuntimeOptions.onNotice`.
 */
import type { ProtectedTarget } from '../tools/index.js'
import type { ConfigNotice } from './config-trust.js'

/** A change to a protected file that was refused because nobody was there to approve it. */
export type ProtectedChangeNotice = {
  readonly kind: 'protected-change-refused'
  readonly tool: string
  readonly targets: readonly ProtectedTarget[]
  /** One sentence: what was refused, why, and what the person can do. */
  readonly message: string
}

/** Everything a runtime reports to its front end. */
export type RuntimeNotice = ConfigNotice | ProtectedChangeNotice
