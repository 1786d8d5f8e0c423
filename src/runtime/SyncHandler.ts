/**
 * Synchronous hook handlers: a plain function marked with {@link sync}
 * instead of one returning an Effect.
 *
 * A handler that does no effectful work — counts, checks, rewrites a
 * string — need not build an Effect per call. Marked with `Hook.sync`, it
 * takes the hook runtime's synchronous fast path: the runner calls it
 * directly, between other synchronous handlers, without a trip through the
 * Effect interpreter. Its semantics are those of the same function wrapped
 * in `Effect.sync`: a thrown exception is a panic (a defect), its value is
 * judged by the point exactly as an Effect's value, and it gets the same
 * record entry and — when a tracer collects spans — the same span. Called
 * as an ordinary handler, a marked function returns `Effect.sync(...)`, so
 * it works wherever a handler does.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"

const SyncTypeId: unique symbol = Symbol.for("effect-agent-pipeline/SyncHandler")

/**
 * A handler marked synchronous: callable as an Effect-returning handler,
 * carrying the plain function for the fast path.
 *
 * @since 0.1.0
 * @category models
 */
export interface SyncHandler<Args extends ReadonlyArray<unknown>, A> {
  (...args: Args): Effect.Effect<A>
  readonly [SyncTypeId]: (...args: Args) => A
}

/**
 * Marks a plain function as a synchronous hook handler.
 *
 * @example
 * ```ts
 * import { Hook } from "effect-agent-pipeline"
 *
 * let calls = 0
 * const counter = Hook.make({
 *   name: "counter",
 *   beforeInference: Hook.sync((_call, prompt: string) => {
 *     calls++
 *     return prompt
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const sync = <Args extends ReadonlyArray<unknown>, A>(f: (...args: Args) => A): SyncHandler<Args, A> =>
  Object.assign((...args: Args) => Effect.sync(() => f(...args)), { [SyncTypeId]: f })

/**
 * Whether a handler is marked with {@link sync}.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSync = (handler: unknown): boolean => typeof handler === "function" && SyncTypeId in handler

/**
 * The plain function of a handler marked with {@link sync}, if it is one.
 * Call it once per handler (registration does), not per call.
 *
 * @since 0.1.0
 * @category utils
 */
export const plainOf = (handler: unknown): ((...args: ReadonlyArray<unknown>) => unknown) | undefined => {
  if (typeof handler !== "function" || !(SyncTypeId in handler)) return undefined
  const f: unknown = handler[SyncTypeId]
  // `sync` stored a function of the handler's own arguments; the runner
  // calls it with exactly those (no wrapper: it is called per hook run).
  return typeof f === "function" ? (f as (...args: ReadonlyArray<unknown>) => unknown) : undefined
}
