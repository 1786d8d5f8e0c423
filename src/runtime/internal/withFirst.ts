/**
 * `f` with its first argument fixed — a continuation for `Effect.flatMap`,
 * `Effect.withFiberRuntime` and the like that runs `f`'s own code.
 *
 * Why not an arrow: an arrow written inside a function called per request is
 * a new closure per call, and V8 keeps a closure's optimized code only while
 * some closure from that place is alive. A full garbage collection between
 * bursts of requests (V8 runs them when a process idles) finds none, so the
 * next burst recompiles each such arrow, with what it inlined, while running
 * it unoptimized. A bound `f` is compiled once, for the process's life.
 * Used on the per-call paths of the operation runtime only.
 */
export const withFirst = <A, B extends Array<unknown>, R>(f: (a: A, ...rest: B) => R, a: A): (...rest: B) => R =>
  f.bind(undefined, a)
