/**
 * The request's own Scope (DESIGN §3): background work and cleanups that
 * hooks start belong to the request, not to the process. The scope closes
 * when the request ends — success, failure, interruption or suspension —
 * before the execution record is finalized, so cleanups can still report
 * effects into it.
 *
 * Hooks reach it without declaring a requirement: the pipeline sets it for
 * the fiber running the request.
 *
 * @since 0.1.0
 */
import { Effect, type Exit, FiberRef, Option, Scope } from "effect"
import { currentInvocation } from "./HookEffects.js"
import { runBounded, stop } from "./internal/bounded.js"
import * as Operations from "./Operations.js"

/**
 * What the pipeline tells hooks about the request they run for (defined
 * beside the operations runtime, which records on it).
 *
 * @since 0.1.0
 * @category models
 */
export type RequestHandle = Operations.RequestHandle

/**
 * The request the current fiber works for.
 *
 * @internal
 *
 * @since 0.1.0
 * @category context
 */
export const currentRequest = Operations.currentRequest

/**
 * The current request's scope, if the fiber runs inside a request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const get: Effect.Effect<Option.Option<Scope.Scope>> = Effect.map(
  FiberRef.get(currentRequest),
  (handle) => (handle === undefined ? Option.none() : Option.some(handle.scope))
)

/**
 * The current request, if the fiber runs inside one.
 *
 * @since 0.1.0
 * @category accessors
 */
export const current: Effect.Effect<Option.Option<RequestHandle>> = Effect.map(
  FiberRef.get(currentRequest),
  Option.fromNullable
)

/**
 * Runs `finalizer` when the current request ends (with the request's exit).
 * Outside a request it runs at once with a success exit — nothing would ever
 * run it otherwise. Like every hook run, it is bounded by the hooks' timeout
 * (`PipelineOptions.hookTimeout`): one that does not end in time is
 * interrupted (and abandoned if it ignores that), so it cannot keep the
 * request from ending.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, RequestScope } from "effect-agent-pipeline"
 *
 * const lease = Hook.make({
 *   name: "lease",
 *   beforePlanning: () =>
 *     RequestScope.addFinalizer((exit) => Effect.log(`releasing lease, request ended: ${exit._tag}`))
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const addFinalizer = (
  finalizer: (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.all([FiberRef.get(currentRequest), FiberRef.get(currentInvocation)]),
    ([handle, { current: invocation }]) =>
      handle !== undefined
        // The finalizer runs in whichever fiber closes the scope; it keeps the
        // registering hook's effect reporter, so it can complete its effects.
        ? Scope.addFinalizerExit(handle.scope, (exit) =>
          Effect.asVoid(
            runBounded(Effect.suspend(() => finalizer(exit)), handle.operations.limit, invocation, () => {})
          ))
        : Effect.flatMap(Effect.exit(Effect.void), finalizer)
  )

/**
 * Forks `effect` into the current request: it is interrupted when the request
 * ends, unless it finished first — and given the hooks' grace period to stop
 * (work that ignores interruption is left behind, never waited for). Outside
 * a request it is forked as a daemon.
 *
 * @since 0.1.0
 * @category utils
 */
export const fork = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(FiberRef.get(currentRequest), (handle) =>
    handle === undefined
      ? Effect.forkDaemon(effect)
      : Effect.tap(Effect.forkDaemon(effect), (fiber) =>
        Scope.addFinalizer(handle.scope, Effect.asVoid(stop(fiber, handle.operations.limit.grace)))))
