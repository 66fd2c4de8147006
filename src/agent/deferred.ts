/** A promise with its settle functions, settled at most once. */
export type Deferred<T> = {
  readonly promise: Promise<T>
  resolve(value: T): void
  readonly isSettled: boolean
}

export function defer<T>(): Deferred<T> {
  let settle!: (value: T) => void
  let isSettled = false
  const promise = new Promise<T>((resolve) => {
    settle = resolve
  })
  return {
    promise,
    resolve(value) {
      if (isSettled) return
      isSettled = true
      settle(value)
    },
    get isSettled() {
      return isSettled
    },
  }
}

/** Settles with `promise`, or with `onAbort()` as soon as `signal` aborts (the promise is left running). */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  onAbort: () => T,
): Promise<T> {
  if (signal.aborted) return Promise.resolve(onAbort())
  return new Promise<T>((resolve, reject) => {
    const abort = () => resolve(onAbort())
    signal.addEventListener('abort', abort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort)
        reject(error)
      },
    )
  })
}
