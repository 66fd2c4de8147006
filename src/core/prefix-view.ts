/**
 * Read-only views of an append-only array that share its storage: taking a view costs O(1)
 * whatever the array's length, so a step's `session.messages()` does not grow with the history
 * (docs/spec.md §4; decision 0140).
 *
 * A view is a Proxy over an empty array of its own, reading the first `length` items of the
 * shared backing array. The backing array is only ever pushed to, so what a view shows never
 * changes; every write through a view (index, `length`, `push`, `sort`, `Object.defineProperty`,
 * `Object.freeze`, …) throws a TypeError. It is still an array to its callers:
 * `Array.isArray`, iteration, array methods, spread, `JSON.stringify` and deep equality work.
 * It is not structured-cloneable (copy it with `[...view]` first).
 */

/** The state a view reads: the shared backing array and how many of its items it shows. */
export type ViewState = { readonly items: readonly unknown[]; readonly length: number }

const STATE: unique symbol = Symbol('rudder.prefixView')

type Target = unknown[] & { [STATE]: ViewState }

/**
 * The index a property key names (its canonical decimal form: no sign, no leading zero), or
 * -1 when it names none. Read digit by digit: converting the key and back allocated on every
 * indexed read of a view (bench B5+).
 */
function indexOf(key: string): number {
  const { length } = key
  // 15 digits stay below 2^53; longer keys are past any array's end anyway.
  if (length === 0 || length > 15) return -1
  let index = 0
  for (let i = 0; i < length; i++) {
    const digit = key.charCodeAt(i) - 48
    if (digit < 0 || digit > 9 || (digit === 0 && i === 0 && length > 1)) return -1
    index = index * 10 + digit
  }
  return index
}

function* iterate(state: ViewState): IterableIterator<unknown> {
  const { items, length } = state
  for (let index = 0; index < length; index++) yield items[index]
}

function copy(state: ViewState): readonly unknown[] {
  return Object.freeze(state.items.slice(0, state.length))
}

function refuse(): never {
  throw new TypeError(
    'a session messages() view is read-only; copy it first (for example [...view]) to change it',
  )
}

// One handler for every view: its state rides on the target, so taking a view allocates
// three small objects and no closures.
const handler: ProxyHandler<Target> = {
  get(target, key, receiver) {
    const state = target[STATE]
    if (typeof key === 'string') {
      if (key === 'length') return state.length
      const index = indexOf(key)
      if (index >= 0) return index < state.length ? state.items[index] : undefined
      if (key === 'values') return () => iterate(state)
      // JSON.stringify reads items through the traps otherwise, about six times slower.
      if (key === 'toJSON') return () => copy(state)
    } else if (key === Symbol.iterator) {
      // The hot path of providers (for…of, spread): no trap per item.
      return () => iterate(state)
    } else if (key === STATE) {
      // Only this module holds the symbol: `prefixOf` reads a view's state in one trap.
      return state
    }
    const value: unknown = Reflect.get(Array.prototype, key)
    if (typeof value !== 'function' || key === 'constructor' || key === 'at') return value
    // Other array methods run on a plain frozen copy of the prefix: one pointer copy (about
    // 1 ns an item) instead of two traps an item (map through the traps costs 5× more).
    // Mutating methods then throw, the copy being frozen.
    return function (this: unknown, ...args: unknown[]) {
      return Reflect.apply(value, this === receiver ? copy(state) : this, args)
    }
  },
  has(target, key) {
    if (typeof key === 'string') {
      if (key === 'length') return true
      const index = indexOf(key)
      if (index >= 0) return index < target[STATE].length
    }
    return key !== STATE && key in Array.prototype
  },
  ownKeys(target) {
    const keys: string[] = []
    for (let index = 0; index < target[STATE].length; index++) keys.push(String(index))
    keys.push('length')
    return keys
  },
  getOwnPropertyDescriptor(target, key) {
    if (typeof key !== 'string') return undefined
    const state = target[STATE]
    // `length` is non-configurable on the array target, so it must be reported so (and, the
    // target's being writable, as writable); writes are refused by `set` all the same.
    if (key === 'length')
      return { value: state.length, writable: true, enumerable: false, configurable: false }
    const index = indexOf(key)
    if (index < 0 || index >= state.length) return undefined
    return { value: state.items[index], writable: false, enumerable: true, configurable: true }
  },
  set: refuse,
  defineProperty: refuse,
  deleteProperty: refuse,
  setPrototypeOf: refuse,
  preventExtensions: refuse,
}

/**
 * A read-only view of the first `length` items of `items`, in O(1). The caller promises never
 * to change those items in `items` (pushing more is fine): that is what keeps the view fixed.
 */
export function prefixView<T>(items: readonly T[], length: number = items.length): readonly T[] {
  const target = [] as unknown as Target
  // Configurable (a plain assignment) so that the ownKeys trap may leave it out.
  target[STATE] = { items, length }
  return new Proxy(target, handler) as unknown as readonly T[]
}

/**
 * The backing array and length of a view made by `prefixView`, or undefined for any other
 * value. For code of this package that reads a view item by item: one trap instead of one an
 * item. The backing array must not be changed, and only its first `length` items belong to
 * the view.
 */
export function prefixOf(value: readonly unknown[]): ViewState | undefined {
  return (value as Partial<Target>)[STATE]
}
