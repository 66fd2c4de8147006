/** Claude Code and Codex command hooks at rudder's extension points (docs/hooks.md). */
export {
  type BridgeNotice,
  createHookBridge,
  type HookBridge,
  type HookBridgeOptions,
} from './bridge.js'
export { type DiscoveredHooks, discoverHooks, type HookDiscoveryOptions } from './discovery.js'
export type { Dialect, HookSpec } from './hook-config.js'
