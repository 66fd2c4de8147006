/**
 * Durable sessions (docs/spec.md §9): `openStore(url)` and the store types.
 */
export { openStore } from './open-store.js'
export type {
  CreateOptions,
  FollowOptions,
  JsonlSource,
  ListOptions,
  Repair,
  SalvageResult,
  SearchHit,
  SessionListing,
  SessionSnapshot,
  SessionStat,
  SessionStore,
  StoreCounters,
  StoredSession,
  StoreOptions,
} from './store.js'
export { chooseStoreUrl, defaultStoreUrl, redactUrl, rudderHome } from './store-url.js'
