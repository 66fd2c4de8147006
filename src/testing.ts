/**
 * `rudder/testing`: the scripted provider, a documented provider for tests, demos and bug
 * reports (docs/spec.md §8).
 */

export { scriptedProviderFromFile } from './providers/scripted/script-file.js'
export {
  type ScriptEntry,
  type ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptStep,
  scriptedProvider,
} from './providers/scripted/scripted-provider.js'
