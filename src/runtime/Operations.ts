/**
 * Runs operations through their hooks (seed 003, seed 002): each run gets
 * an immutable call snapshot; Around observers begin in order before it and
 * finish in reverse order after it with the outcome (`completed`, `denied`,
 * `failed`, `canceled`); guards wrap it, the first-ordered outermost; before
 * and after transforms chain its input and output inside the guarded
 * effect, so a retry repeats them.
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
import { Effect, FiberRef, type Scope, type Stream } from "effect"
import type { RuntimeFiber } from "effect/Fiber"
import { TransformPoint } from "../domain/HookPoint.js"
import type { Call, CallRef, Operation } from "../domain/Operation.js"
import { operations } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import { defaultLimit, type RunLimit } from "./internal/bounded.js"
import * as Calls from "./internal/calls.js"
import { makeGuarded } from "./internal/guards.js"
import type { Detach } from "./internal/invoke.js"
import { makeObserve, makeObserveRun } from "./internal/observers.js"
import type { Transformed, TransformedOperation, TransformValues } from "./internal/operationHooks.js"
import type { AnyAround, AnyGuard, AnyTransform } from "./internal/participants.js"
import type { RequestRecorder } from "./internal/requestRecorder.js"
import * as Policy from "./internal/runPolicy.js"
import * as Streams from "./internal/streams.js"
import { clockOf } from "./internal/timing.js"
import { makeTransform } from "./internal/transforms.js"
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
 * it has it.
 *
 * @since 0.1.0
 * @category models
 */
export type WithOperationStream = <Op extends TransformedOperation>(options: RunOptions<Op>) => <B, E>(
  body: (
    input: Transformed[Op]["input"],
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
  AnyTransform
} from "./internal/participants.js"

/** Where a run on `fiber` is recorded. */
const recorderOf = (operation: Operation, fiber: RuntimeFiber<unknown, unknown>): RequestRecorder =>
  Policy.unrecorded.has(operation)
    ? Policy.noRecorder
    : fiber.getFiberRef(currentRequest)?.recorder ?? Policy.noRecorder

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
  // Which operations and transform points any hook takes part in: computed
  // once, so an operation nobody hooks runs its body directly.
  const observed = new Set<Operation>()
  for (const operation of operations) {
    if (participants.around(operation).length > 0 || participants.guard(operation).length > 0) observed.add(operation)
  }
  const transformed = new Set<TransformPoint>()
  for (const point of TransformPoint.literals) {
    if (participants.transform(point).length > 0) transformed.add(point)
  }
  for (const [operation, points] of Object.entries(Policy.transformsOf)) {
    if (transformed.has(points.before) || transformed.has(points.after)) observed.add(operation as Operation)
  }
  const active = observed.size > 0
  const snapshotted = new Set<Operation>()
  for (const operation of operations) {
    const children = Policy.childrenOf[operation] ?? []
    if (observed.has(operation) || children.some((child) => observed.has(child))) snapshotted.add(operation)
  }

  // Each part of the engine is built once, here: a run only looks up its participants.
  const observe = makeObserve(participants, detach, Calls.specOf)
  const observeRun = makeObserveRun(participants, detach, Calls.specOf)
  const guarded = makeGuarded(participants, Calls.specOf)
  const transformWith = makeTransform(participants, Calls.specOf)

  /** Observers around `body`, guards wrapping it. */
  const runWith = <A, E>(call: Call, recorder: RequestRecorder, body: Effect.Effect<A, E>) => {
    if (!observed.has(call.operation)) return body
    if (participants.around(call.operation).length === 0) return guarded(call, recorder, body)
    return observeRun(call, recorder, guarded(call, recorder, body))
  }

  /** `point`'s transforms over `value` (none registered: the value as is). */
  const transform = <V>(point: TransformPoint, call: Call, value: V, recorder: RequestRecorder) =>
    transformed.has(point)
      ? transformWith(point, call, value as TransformValues[TransformPoint], recorder) as Effect.Effect<V, HookFailed>
      : Effect.succeed(value)

  const call = <Op extends Operation>(operation: Op, init: CallInit<Op>): Effect.Effect<Call<Op>> =>
    Effect.clockWith((clock) => Effect.succeed(Calls.callOf(operation, init, clock, observed.has(operation))))

  const run = <Op extends Operation, A, E>(call: Call<Op>, body: Effect.Effect<A, E>) =>
    observed.has(call.operation)
      ? Effect.withFiberRuntime<A, E | HookDenied>((fiber) => runWith(call, recorderOf(call.operation, fiber), body))
      : body

  const { runStream, withOperationStream } = Streams.make({
    observed: (operation) => observed.has(operation),
    call,
    observe: (call, fiber) => observe(call, recorderOf(call.operation, fiber)),
    guarded: (call, fiber, start) => guarded(call, recorderOf(call.operation, fiber), start),
    transform: (point, call, value, fiber) => transform(point, call, value, recorderOf(call.operation, fiber))
  })

  type AnyBody = (...args: Array<any>) => Effect.Effect<unknown, unknown>
  type AnyAndThen = ((output: unknown) => Effect.Effect<unknown, unknown>) | undefined

  const withOperation = ((options: RunOptions<Operation>) => (body: AnyBody, andThen: AnyAndThen) => {
    const { operation } = options
    const points = Policy.pointsOf(operation)
    const input = points?.input(options.payload)
    if (!snapshotted.has(operation)) {
      // No hook sees this run, or any run it starts.
      const ran = points === undefined ? body(undefined) : body(input, undefined)
      return andThen === undefined ? ran : Effect.flatMap(ran, andThen)
    }
    return Effect.withFiberRuntime<unknown, unknown>((fiber) => {
      const recorder = recorderOf(operation, fiber)
      const call = Calls.callOf(operation, options, clockOf(fiber), observed.has(operation))
      const self: CallRef = { operation, callId: call.callId }
      if (points === undefined) return runWith(call, recorder, body(self))
      const output = Effect.flatMap(
        Effect.flatMap(transform(points.before, call, input, recorder), (input) => body(input, self)),
        (output) => transform(points.after, call, output, recorder)
      )
      return runWith(call, recorder, andThen === undefined ? output : Effect.flatMap(output, andThen))
    })
  }) as WithOperation

  return {
    active,
    limit,
    observes: (operation) => observed.has(operation),
    call,
    run,
    runStream,
    withOperation,
    withOperationStream
  }
}
