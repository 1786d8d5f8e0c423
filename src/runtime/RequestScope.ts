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

/**
 * The scope of the request the current fiber works for.
 *
 * @internal
 */
export const currentRequestScope: FiberRef.FiberRef<Option.Option<Scope.Scope>> = FiberRef.unsafeMake<
  Option.Option<Scope.Scope>
>(Option.none())

/**
 * The current request's scope, if the fiber runs inside a request.
 *
 * @since 0.1.0
 */
export const get: Effect.Effect<Option.Option<Scope.Scope>> = FiberRef.get(currentRequestScope)

/**
 * Runs `finalizer` when the current request ends (with the request's exit).
 * Outside a request it runs at once with a success exit — nothing would ever
 * run it otherwise.
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
 */
export const addFinalizer = (
  finalizer: (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.flatMap(Effect.all([get, FiberRef.get(currentInvocation)]), ([scope, invocation]) =>
    Option.isSome(scope)
      // The finalizer runs in whichever fiber closes the scope; it keeps the
      // registering hook's effect reporter, so it can complete its effects.
      ? Scope.addFinalizerExit(scope.value, (exit) => Effect.locally(finalizer(exit), currentInvocation, invocation))
      : Effect.flatMap(Effect.exit(Effect.void), finalizer))

/**
 * Forks `effect` into the current request: it is interrupted when the request
 * ends, unless it finished first. Outside a request it is forked as a daemon.
 *
 * @since 0.1.0
 */
export const fork = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(get, (scope) =>
    Option.isSome(scope) ? Effect.forkIn(effect, scope.value) : Effect.forkDaemon(effect))
