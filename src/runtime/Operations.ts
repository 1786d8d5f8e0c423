/**
 * Runs operations through their hooks (seed 003, seed 002): each run gets
 * an immutable call snapshot; Around observers begin in order before it and
 * finish in reverse order after it with the outcome (`completed`, `denied`,
 * `failed`, `canceled`); guards wrap it, the first-ordered outermost; before
 * and after transforms chain its input and output inside the guarded
 * effect, so a retry repeats them; `on_error` hooks see each run that ends
 * `failed` or `denied`, after its observers. Every hook call gets the
 * run's `RunMeta` last.
 *
 * A guard's ending decides the run:
 * - it succeeds → the operation's value;
 * - it fails with what `proceed` failed with → that failure (the operation
 *   failed; the guard let it through);
 * - it refuses (`Hook.deny`) → `denied`, `HookDenied` with reason `refused`
 *   (a guard that did not declare `deny` has its refusal refused: recorded
 *   as a contract failure, and the operation runs as if it were absent);
 * - it fails otherwise, or overruns its deadline → its failure policy: fail
 *   closed (the default) → `denied` (`hook_failed` / `timed_out`); fail
 *   open → recorded, and the operation runs as if the guard were absent.
 *
 * The operation combinator, {@link Operations.withOperation}, is the one
 * place these hooks wrap a body: tool calls, inference, retrieval, memory
 * and phases call it. Hook runs are recorded on the request the fiber works
 * for ({@link currentRequest}, set by the pipeline), not on an argument. An
 * operation nobody hooks costs nothing: which operations are hooked is
 * computed once, at construction.
 *
 * @since 0.1.0
 */
import { type Effect, FiberRef, type Scope, type Stream } from "effect"
import type { TransformPoint } from "../domain/HookPoint.js"
import type { Call, CallRef, Operation } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import { defaultLimit, type RunLimit } from "./internal/bounded.js"
import type * as Calls from "./internal/calls.js"
import * as Engine from "./internal/engine.js"
import type { Detach } from "./internal/invoke.js"
import type { Transformed, TransformedOperation } from "./internal/operationHooks.js"
import type { AnyAround, AnyGuard, AnyOnError, AnyTransform } from "./internal/participants.js"
import type { RequestRecorder } from "./internal/requestRecorder.js"
import type { Participant } from "./Subscription.js"

/**
 * What the pipeline tells hooks about the request they run for: its scope,
 * and what operations started from inside a hook (a retrieval, a memory
 * access) need to run through the hook runtime and be recorded.
 *
 * @since 0.1.0
 * @category models
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
 * The request the current fiber works for (set by the pipeline around a
 * request; `RequestScope` reads it too).
 *
 * @since 0.1.0
 * @category context
 */
// A plain value, not an Option: FiberRef writes compare old and new values
// with `Equal.equals`, which hashes an Option's contents on every write.
export const currentRequest: FiberRef.FiberRef<RequestHandle | undefined> = FiberRef.unsafeMake<
  RequestHandle | undefined
>(undefined)

/**
 * What a new run is about.
 *
 * @since 0.1.0
 * @category models
 */
export type CallInit<Op extends Operation> = Calls.CallInit<Op>

/**
 * A run for the operation combinator: the operation and what the run is about.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<Op extends Operation> extends CallInit<Op> {
  readonly operation: Op
}

/**
 * The operation combinator: `options` names the run, and the function it
 * returns wraps a body in the run's hooks.
 *
 * - For an operation with transforms, the body gets the input as the
 *   before transforms rewrote it, and its output goes through the after
 *   transforms; `andThen`, when given, reads the result from that output
 *   inside the run (a result it cannot read fails the run, and a guard
 *   sees that failure).
 * - For any other operation, the body runs as the run.
 *
 * The body also gets a reference to its run, the parent of the runs it
 * starts (`undefined` when no hook sees the run or any run it starts).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HookRuntime, Retriever } from "effect-agent-pipeline"
 *
 * // A retrieval as one run of the `retrieval` operation: guards, observers,
 * // before/after_retrieval transforms, recorded on the current request.
 * const search = (requestId: string, query: string) =>
 *   Effect.gen(function*() {
 *     const { operations } = yield* HookRuntime.HookRuntime
 *     const retriever = yield* Retriever.Retriever
 *     return yield* operations.withOperation({
 *       operation: "retrieval",
 *       coordinates: { requestId },
 *       payload: { retriever: retriever.name, query, limit: 5 }
 *     })((query) => retriever.retrieve(query, 5))
 *   })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface WithOperation {
  <Op extends TransformedOperation>(options: RunOptions<Op>): <E, A = Transformed[Op]["output"], E2 = never>(
    body: (input: Transformed[Op]["input"], self: CallRef | undefined) => Effect.Effect<Transformed[Op]["output"], E>,
    andThen?: (output: Transformed[Op]["output"]) => Effect.Effect<A, E2>
  ) => Effect.Effect<A, E | E2 | HookDenied | HookFailed>
  <Op extends Exclude<Operation, TransformedOperation>>(options: RunOptions<Op>): <A, E>(
    body: (self: CallRef | undefined) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied>
}

/**
 * The operation combinator for a run that is a stream: observers begin
 * when the stream is opened and end with it (`canceled` when its consumer
 * stopped pulling before its end); guards wrap the decision to start it (a
 * stream cannot be retried once it began); then the before transforms
 * rewrite the input, and the body calls `after` with its whole output once
 * it has it. When a `before_inference` transform served the response
 * (`Hook.respond`), `served` makes the stream of it instead of the body
 * (without `served`, the run fails with `HookFailed`).
 *
 * @since 0.1.0
 * @category models
 */
export type WithOperationStream = <Op extends TransformedOperation>(options: RunOptions<Op>) => <B, E>(
  body: (
    input: Transformed[Op]["input"],
    after: (output: Transformed[Op]["output"]) => Effect.Effect<Transformed[Op]["output"], HookFailed>
  ) => Stream.Stream<B, E>,
  served?: (
    output: Transformed[Op]["output"],
    after: (output: Transformed[Op]["output"]) => Effect.Effect<Transformed[Op]["output"], HookFailed>
  ) => Stream.Stream<B, E>
) => Stream.Stream<B, E | HookDenied | HookFailed>

/**
 * The operations runtime.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operations {
  /** Whether any hook observes, guards or transforms any operation. */
  readonly active: boolean
  /** The bound of hook runs (and hook-registered request cleanups) that set none of their own. */
  readonly limit: RunLimit
  /** Whether any hook observes, guards or transforms `operation`. */
  readonly observes: (operation: Operation) => boolean
  /**
   * The immutable snapshot of a new run (its id, its start time), for a
   * run whose reference is needed before it starts (the request's). A run
   * no hook observes, guards or transforms gets a plain (unfrozen,
   * uncopied) call: no hook can ever see it.
   */
  readonly call: <Op extends Operation>(operation: Op, init: CallInit<Op>) => Effect.Effect<Call<Op>>
  /** Runs `body` as the run `call`: observers around it, guards wrapping it. */
  readonly run: <Op extends Operation, A, E>(
    call: Call<Op>,
    body: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied>
  /**
   * Runs the run `call` as a stream: observers begin when the stream is
   * opened, guards wrap `start`, `stream` follows from its value, and the
   * observers end with the stream's exit — `canceled` when its consumer
   * stopped pulling before the stream's end (a stream abandoned half-way
   * did not complete, even though nothing failed).
   */
  readonly runStream: <Op extends Operation, A, E, B, E2>(
    call: Call<Op>,
    start: Effect.Effect<A, E>,
    stream: (started: A) => Stream.Stream<B, E2>
  ) => Stream.Stream<B, E | E2 | HookDenied>
  /** The operation combinator (see {@link WithOperation}). */
  readonly withOperation: WithOperation
  /** The operation combinator for streams (see {@link WithOperationStream}). */
  readonly withOperationStream: WithOperationStream
}

/**
 * The participants of each operation point (from the subscription
 * registry).
 *
 * @since 0.1.0
 * @category models
 */
export interface OperationParticipants {
  readonly around: (operation: Operation) => ReadonlyArray<Participant<AnyAround>>
  /** Empty for an operation guards cannot target. */
  readonly guard: (operation: Operation) => ReadonlyArray<Participant<AnyGuard>>
  readonly transform: (point: TransformPoint) => ReadonlyArray<Participant<AnyTransform>>
  /** The `on_error` hooks (omitted: none). */
  readonly onError?: (() => ReadonlyArray<Participant<AnyOnError>>) | undefined
}

// The handler shapes the engine holds, their operation erased: defined in
// internal/participants.ts, beside the engine's parts (which cannot import
// this module without a cycle).
export type {
  /**
   * @since 0.1.0
   * @category models
   */
  AnyAround,
  /**
   * @since 0.1.0
   * @category models
   */
  AnyGuard,
  /**
   * @since 0.1.0
   * @category models
   */
  AnyOnError,
  /**
   * @since 0.1.0
   * @category models
   */
  AnyTransform
} from "./internal/participants.js"

/**
 * Builds the runtime over the registry's operation participants.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  participants: OperationParticipants,
  detach: Detach,
  limit: RunLimit = defaultLimit
): Operations => {
  const engine = Engine.make(participants, detach, limit, (fiber) => fiber.getFiberRef(currentRequest))
  // The combinator is untyped inside the engine; its public type is `WithOperation`.
  return { ...engine, withOperation: engine.withOperation as WithOperation }
}
