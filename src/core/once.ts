/**
 * A value loaded on the first call and the same one ever after: the lazily loaded, then immutable, module behind a
 * module constant (`const load = once(...)`: a WebAssembly hasher, a grammar) instead of a mutable module variable.
 * Concurrent first calls share one load; a failed load is not remembered, so a later call tries again.
 */
export interface Once<T> {
  (): Promise<T>;
  /** The value once a call has resolved it; undefined before. */
  readonly value: T | undefined;
}

export function once<T>(load: () => Promise<T>): Once<T> {
  let pending: Promise<T> | undefined;
  let value: T | undefined;
  const get = () =>
    (pending ??= load().then(
      (v) => (value = v),
      (e: unknown) => {
        pending = undefined;
        throw e;
      },
    ));
  return Object.defineProperty(get, "value", { get: () => value }) as Once<T>;
}
