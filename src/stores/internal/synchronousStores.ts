/**
 * Stores whose writes complete as they run — never waiting on I/O or on
 * another fiber — as this library builds them (the memory store). The
 * pipeline writes a record's create inline for these instead of on a fiber
 * of its own (a request does not wait for its create on a store that
 * batches writes; on one that never waits there is nothing to wait for, and
 * a fiber per request costs 5–7 µs). A store someone wraps is not one of
 * these: it gets the general path.
 */
const known = new WeakSet<object>()

/** Marks `store` as one whose writes complete as they run; returns it. */
export const markSynchronous = <S extends object>(store: S): S => {
  known.add(store)
  return store
}

/** Whether `store` completes its writes as they run. */
export const isSynchronous = (store: object): boolean => known.has(store)
