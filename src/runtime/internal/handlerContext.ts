/**
 * The services user handlers (hooks, tools) were registered with, captured
 * once when their Layer is built and provided to each call.
 *
 * A Layer's build context also carries the Layer's own plumbing — its
 * `Scope` and memo map — which no handler asks for; provided per call, it
 * would cost a context merge (two FiberRef writes) on every hook and tool
 * call even when the handlers need nothing. So the plumbing is dropped, and
 * services the calling fiber already has (the same instances — typically
 * the agent's stores, which the application's runtime was built with) are
 * not provided again.
 */
import { Context, Effect, Layer, Scope } from "effect"

/** The captured context without the Layer's plumbing. */
export const servicesOf = <R>(context: Context.Context<R>): Context.Context<R> =>
  Context.omit(Scope.Scope, Layer.CurrentMemoMap)(context) as Context.Context<R>

/** Whether every service of `context` is already in `current`, as the same instance. */
const alreadyIn = <R>(current: Context.Context<never>, context: Context.Context<R>): boolean => {
  for (const [key, service] of context.unsafeMap) if (current.unsafeMap.get(key) !== service) return false
  return true
}

/** Provides `context` to `effect`, unless the calling fiber already has all of it. */
export const provideServices = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  context: Context.Context<R>
): Effect.Effect<A, E> =>
  context.unsafeMap.size === 0
    ? (effect as Effect.Effect<A, E>)
    : Effect.withFiberRuntime((fiber) =>
      alreadyIn(fiber.currentContext, context) ? (effect as Effect.Effect<A, E>) : Effect.provide(effect, context)
    )
