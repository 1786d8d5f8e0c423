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
import type { CallRef } from "../domain/Operation.js"
import { currentInvocation } from "./HookEffects.js"
import { runBounded, stop } from "./internal/bounded.js"
import type { Operations } from "./Operations.js"
import type { RequestRecorder } from "./RequestRecorder.js"

/**
 * What the pipeline tells hooks about the request they run for: its scope,
 * and what operations started from inside a hook (a retrieval, a memory
 * access) need to run through the hook runtime and be recorded.
 *
 * @since 0.1.0
 */
export interface RequestHandle {
  readonly scope: Scope.Scope
  readonly requestId: string
  readonly recorder: RequestRecorder
  /** The request's own operation run (when any hook observes operations): the parent of what hooks start. */
  readonly call?: CallRef | undefined
  readonly operations: Operations
}

/**
 * The request the current fiber works for.
 *
 * @internal
 */
// A plain value, not an Option: FiberRef writes compare old and new values
// with `Equal.equals`, which hashes an Option's contents (a WeakMap lookup
// per object) on every write.
export const currentRequest: FiberRef.FiberRef<RequestHandle | undefined> = FiberRef.unsafeMake<
  RequestHandle | undefined
>(undefined)

/**
 * The current request's scope, if the fiber runs inside a request.
 *
 * @since 0.1.0
 */
export const get: Effect.Effect<Option.Option<Scope.Scope>> = Effect.map(
  FiberRef.get(currentRequest),
  (handle) => (handle === undefined ? Option.none() : Option.some(handle.scope))
)

/**
 * The current request, if the fiber runs inside one.
 *
 * @since 0.1.0
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
 */
export const fork = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(FiberRef.get(currentRequest), (handle) =>
    handle === undefined
      ? Effect.forkDaemon(effect)
      : Effect.tap(Effect.forkDaemon(effect), (fiber) =>
        Scope.addFinalizer(handle.scope, Effect.asVoid(stop(fiber, handle.operations.limit.grace)))))
