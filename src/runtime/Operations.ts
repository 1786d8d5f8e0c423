/**
 * Runs operations through their hooks (seed 003, seed 002): each run gets
 * an immutable call snapshot; Around observers begin in order before it and
 * finish in reverse order after it with the outcome (`completed`, `denied`,
 * `failed`, `canceled`); guards wrap it, the first-ordered outermost; before
 * and after transforms chain its input and output (the operation's own code
 * calls {@link Operations.transform}, inside the guarded effect, so a retry
 * repeats them).
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
 * An operation nobody hooks costs nothing: {@link Operations.observes} says
 * so once, at construction.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Exit, FiberId, Scope, Stream } from "effect"
import { transformOperation, TransformPoint } from "../domain/HookPoint.js"
import type { Call, CallRef, Coordinates, Operation, Payloads } from "../domain/Operation.js"
import { operations } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import { defaultLimit, type RunLimit } from "./internal/bounded.js"
import { flatText } from "./internal/flatText.js"
import { makeGuarded } from "./internal/guards.js"
import type { Detach } from "./internal/invoke.js"
import { keepLatest } from "./internal/liveShapes.js"
import { makeObserve, makeObserveRun } from "./internal/observers.js"
import type { AnyAround, AnyGuard, AnyTransform, SpecOf } from "./internal/participants.js"
import { makeTransform } from "./internal/transforms.js"
import { withFirst } from "./internal/withFirst.js"
import type { TransformValues } from "./OperationHooks.js"
import type { RequestRecorder } from "./RequestRecorder.js"
import type { Participant } from "./Subscription.js"

/**
 * What a new run is about.
 *
 * @since 0.1.0
 */
export interface CallInit<Op extends Operation> {
  readonly coordinates: Coordinates
  readonly parent?: CallRef | undefined
  readonly payload: Payloads[Op]
  /** When the run began, if before now (an approval wait began at the suspension). Default: now. */
  readonly startedAt?: number | undefined
}

/**
 * The operation a transform point rewrites for.
 *
 * @since 0.1.0
 */
export type TransformOperation<P extends TransformPoint> = P extends "before_inference" | "after_inference" ?
  "inference"
  : P extends "before_tool" | "after_tool" ? "tool_call"
  : P extends "before_retrieval" | "after_retrieval" ? "retrieval"
  : P extends "before_memory_load" | "after_memory_load" ? "memory_load"
  : "memory_store"

/**
 * The operations runtime.
 *
 * @since 0.1.0
 */
export interface Operations {
  /** Whether any hook observes, guards or transforms any operation. */
  readonly active: boolean
  /** The bound of hook runs (and hook-registered request cleanups) that set none of their own. */
  readonly limit: RunLimit
  /** Whether any hook observes, guards or transforms `operation`. */
  readonly observes: (operation: Operation) => boolean
  /**
   * The immutable snapshot of a new run (its id, its start time). A run of
   * an operation no hook observes, guards or transforms gets a plain
   * (unfrozen, uncopied) call: no hook can ever see it.
   */
  readonly call: <Op extends Operation>(operation: Op, init: CallInit<Op>) => Effect.Effect<Call<Op>>
  /** Runs `body` as the run `call`: observers around it, guards wrapping it. */
  readonly run: <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    body: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied>
  /**
   * Opens the run `call` in the current scope — for a run that is a stream:
   * observers begin now and end when the scope closes (with its exit);
   * guards wrap only `start`, what happens before the stream's first
   * element (a stream cannot be retried once it began).
   */
  readonly runScoped: <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    start: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied, Scope.Scope>
  /**
   * Runs the run `call` as a stream: observers begin when the stream is
   * opened, guards wrap `start`, `stream` follows from its value, and the
   * observers end with the stream's exit — `canceled` when its consumer
   * stopped pulling before the stream's end (a stream abandoned half-way
   * did not complete, even though nothing failed).
   */
  readonly runStream: <Op extends Operation, A, E, B, E2>(
    call: Call<Op>,
    recorder: RequestRecorder,
    start: Effect.Effect<A, E>,
    stream: (started: A) => Stream.Stream<B, E2>
  ) => Stream.Stream<B, E | E2 | HookDenied>
  /** Chains `point`'s transforms over `value`. */
  readonly transform: <P extends TransformPoint>(
    point: P,
    call: Call<TransformOperation<P>>,
    value: TransformValues[P],
    recorder: RequestRecorder
  ) => Effect.Effect<TransformValues[P], HookFailed>
}

/**
 * The participants of each operation point (from the subscription
 * registry).
 *
 * @since 0.1.0
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
export type { AnyAround, AnyGuard, AnyTransform } from "./internal/participants.js"

let counter = 0
const nextCallId = (operation: Operation): string => flatText(`${operation}-${(++counter).toString(36)}`)

/**
 * The runtime's own frozen copy of a payload: hooks cannot change it, and
 * freezing it never freezes the caller's objects (payloads are JSON-like
 * data: plain objects, arrays, primitives).
 */
const snapshotOf = <A>(value: A): A => {
  if (typeof value !== "object" || value === null) return value
  let copy: Record<string, unknown> | Array<unknown>
  if (Array.isArray(value)) {
    copy = value.map(snapshotOf)
  } else {
    // A plain loop: no entry arrays per key (this runs on every observed call).
    const record: Record<string, unknown> = {}
    for (const key of Object.keys(value)) record[key] = snapshotOf((value as Record<string, unknown>)[key])
    copy = record
  }
  // A copy of the value's own data, frozen.
  return Object.freeze(copy) as A
}

/**
 * A frozen copy of a run's coordinates. One literal per shape (a spread
 * clone then frozen takes V8's slow path: about 0.3 µs, on every observed
 * call).
 */
const coordinatesOf = (given: Coordinates): Coordinates => {
  const { phase, requestId, stepId } = given
  if (phase === undefined) {
    if (stepId !== undefined) return Object.freeze({ requestId, stepId })
    const coordinates = Object.freeze({ requestId })
    keepLatest("requestCoordinates", coordinates)
    return coordinates
  }
  const coordinates = Object.freeze(stepId === undefined ? { requestId, phase } : { requestId, phase, stepId })
  keepLatest(stepId === undefined ? "phaseCoordinates" : "stepCoordinates", coordinates)
  return coordinates
}

/** A call's snapshot, once the clock is known. */
const snapshotCall = <Op extends Operation>(
  request: { readonly operation: Op; readonly init: CallInit<Op>; readonly observed: boolean },
  clock: Clock.Clock
): Effect.Effect<Call<Op>> =>
  Effect.succeed(
    request.observed
      ? callOf(request.operation, request.init, clock)
      : internalCallOf(request.operation, request.init, clock)
  )

/** A call's frozen snapshot: what hooks of the operation get. */
const callOf = <Op extends Operation>(operation: Op, init: CallInit<Op>, clock: Clock.Clock): Call<Op> => {
  const callId = nextCallId(operation)
  const startedAt = init.startedAt ?? clock.unsafeCurrentTimeMillis()
  const coordinates = coordinatesOf(init.coordinates)
  const payload = snapshotOf(init.payload)
  const parent = init.parent
  if (parent === undefined) {
    const call = Object.freeze({ operation, callId, startedAt, coordinates, payload })
    keepLatest("call", call)
    return call
  }
  const call = Object.freeze({
    operation,
    callId,
    startedAt,
    coordinates,
    // A reference to the parent run, not its snapshot.
    parent: Object.freeze({ operation: parent.operation, callId: parent.callId }),
    payload
  })
  keepLatest("childCall", call)
  return call
}

/**
 * The call of a run no hook observes, guards or transforms: nothing outside
 * the runtime ever holds it (its children keep only a reference to it), so
 * it is neither copied nor frozen.
 */
const internalCallOf = <Op extends Operation>(operation: Op, init: CallInit<Op>, clock: Clock.Clock): Call<Op> => {
  const callId = nextCallId(operation)
  const startedAt = init.startedAt ?? clock.unsafeCurrentTimeMillis()
  const { coordinates, parent, payload } = init
  return parent === undefined
    ? { operation, callId, startedAt, coordinates, payload }
    : {
      operation,
      callId,
      startedAt,
      coordinates,
      parent: { operation: parent.operation, callId: parent.callId },
      payload
    }
}

/**
 * Builds the runtime over the registry's operation participants.
 *
 * @since 0.1.0
 */
export const make = (
  participants: OperationParticipants,
  detach: Detach,
  limit: RunLimit = defaultLimit
): Operations => {
  // Which operations any hook observes, guards or transforms: computed once,
  // so an operation nobody hooks runs its body directly.
  const observed = new Set<Operation>()
  for (const operation of operations) {
    if (participants.around(operation).length > 0 || participants.guard(operation).length > 0) observed.add(operation)
  }
  for (const point of TransformPoint.literals) {
    if (participants.transform(point).length > 0) observed.add(transformOperation[point])
  }

  const specOf: SpecOf = (participant, sequence, call, recorder) => ({
    hookName: participant.id,
    point: participant.point,
    spanName: participant.spanName,
    metricLabels: participant.metricLabels,
    sequence,
    phase: call.coordinates.phase,
    operation: { operation: call.operation, callId: call.callId, stepId: call.coordinates.stepId },
    execution: participant.execution,
    limit: participant.limit,
    failure: participant.failure,
    recorder
  })

  // Each part of the engine is built once, here: a run only looks up its participants.
  const observe = makeObserve(participants, detach, specOf)
  const observeRun = makeObserveRun(participants, detach, specOf)
  const guarded = makeGuarded(participants, specOf)
  const transform = makeTransform(participants, specOf)

  const run = <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    body: Effect.Effect<A, E>
  ): Effect.Effect<A, E | HookDenied> => {
    if (!observed.has(call.operation)) return body
    if (participants.around(call.operation).length === 0) return guarded(call, recorder, body)
    return observeRun(call, recorder, guarded(call, recorder, body))
  }

  const runScoped = <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    start: Effect.Effect<A, E>
  ): Effect.Effect<A, E | HookDenied, Scope.Scope> => {
    if (!observed.has(call.operation)) return start
    return Effect.flatMap(
      observe(call, recorder),
      (ends) => Effect.zipRight(Effect.addFinalizer(ends), guarded(call, recorder, start))
    )
  }

  const runStream = <Op extends Operation, A, E, B, E2>(
    call: Call<Op>,
    recorder: RequestRecorder,
    start: Effect.Effect<A, E>,
    stream: (started: A) => Stream.Stream<B, E2>
  ): Stream.Stream<B, E | E2 | HookDenied> =>
    Stream.suspend(() => {
      let ended = false
      const whole = Stream.concat(
        Stream.unwrap(Effect.map(runScoped(call, recorder, start), stream)),
        Stream.execute(Effect.sync(() => void (ended = true)))
      )
      return Stream.flatMap(
        // The run's scope, closed with the stream's exit — or as canceled
        // when the consumer stopped before the end.
        Stream.acquireRelease(
          Scope.make(),
          (scope, exit) => Scope.close(scope, Exit.isSuccess(exit) && !ended ? Exit.interrupt(FiberId.none) : exit)
        ),
        (scope) => Stream.provideService(whole, Scope.Scope, scope)
      )
    })

  return {
    active: observed.size > 0,
    limit,
    observes: (operation) => observed.has(operation),
    call: (operation, init) =>
      Clock.clockWith(withFirst(snapshotCall, { operation, init, observed: observed.has(operation) })),
    run,
    runScoped,
    runStream,
    transform
  }
}
