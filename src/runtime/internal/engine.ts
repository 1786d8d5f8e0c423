/**
 * The operations engine (`Operations.make`): which operations any hook
 * takes part in, computed once (an operation nobody hooks runs its body
 * directly), and the parts each run goes through — observers, guards,
 * transforms, `on_error` hooks — each built once.
 */
import { Effect, type Exit, type Fiber } from "effect"
import { TransformPoint } from "../../domain/HookPoint.js"
import type { Call, Operation } from "../../domain/Operation.js"
import { operations } from "../../domain/Operation.js"
import type { HookDenied, HookFailed } from "../../domain/PipelineError.js"
import type { Participant } from "../Subscription.js"
import type { RunLimit } from "./bounded.js"
import * as Calls from "./calls.js"
import { makeGuarded } from "./guards.js"
import type { Detach } from "./invoke.js"
import { makeObserve, makeObserveRun } from "./observers.js"
import { makeOnError } from "./onError.js"
import type { TransformValues } from "./operationHooks.js"
import type { AnyAround, AnyGuard, AnyOnError, AnyTransform } from "./participants.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { notePhase, noteRound } from "./runMeta.js"
import * as Policy from "./runPolicy.js"
import type { Served } from "./served.js"
import * as Streams from "./streams.js"
import { clockOf } from "./timing.js"
import { makeTransform } from "./transforms.js"
import * as WithOperations from "./withOperation.js"

type AnyFiber = Fiber.RuntimeFiber<unknown, unknown>

/** The participants of each operation point (`Operations.OperationParticipants`). */
export interface Participants {
  readonly around: (operation: Operation) => ReadonlyArray<Participant<AnyAround>>
  readonly guard: (operation: Operation) => ReadonlyArray<Participant<AnyGuard>>
  readonly transform: (point: TransformPoint) => ReadonlyArray<Participant<AnyTransform>>
  readonly onError?: (() => ReadonlyArray<Participant<AnyOnError>>) | undefined
}

/** What the engine reads of the request a fiber works for (`Operations.RequestHandle`). */
export interface Request {
  readonly recorder: RequestRecorder
  readonly scope: object
}

/**
 * Builds the runtime; `requestOf` reads the request a fiber works for
 * (`Operations.currentRequest`). `Operations.make` gives it its public type.
 */
export const make = (
  participants: Participants,
  detach: Detach,
  limit: RunLimit,
  requestOf: (fiber: AnyFiber) => Request | undefined
) => {
  /** Where a run on `fiber` is recorded. */
  const recorderOf = (operation: Operation, fiber: AnyFiber): RequestRecorder =>
    Policy.unrecorded.has(operation) ? Policy.noRecorder : requestOf(fiber)?.recorder ?? Policy.noRecorder

  // Which operations and transform points any hook takes part in: computed
  // once, so an operation nobody hooks runs its body directly.
  const failing = participants.onError?.() ?? []
  const observed = new Set<Operation>()
  for (const operation of operations) {
    // on_error hooks see every operation's failures.
    if (
      failing.length > 0 || participants.around(operation).length > 0 || participants.guard(operation).length > 0
    ) observed.add(operation)
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
  const onError = makeOnError(failing, detach, Calls.specOf)

  /** Observers around `body`, guards wrapping it, `on_error` hooks after it failed. */
  const runWith = <A, E>(call: Call, recorder: RequestRecorder, body: Effect.Effect<A, E>) => {
    if (!observed.has(call.operation)) return body
    const run = participants.around(call.operation).length === 0
      ? guarded(call, recorder, body)
      : observeRun(call, recorder, guarded(call, recorder, body))
    return failing.length === 0 ? run : Effect.onExit(run, (exit) => onError(call, recorder, exit))
  }

  /** `point`'s transforms over `value` (none registered: the value as is). */
  const transform = <V>(point: TransformPoint, call: Call, value: V, recorder: RequestRecorder, servedBy?: string) =>
    transformed.has(point)
      ? transformWith(point, call, value as TransformValues[TransformPoint], recorder, servedBy) as Effect.Effect<
        V,
        HookFailed | Served
      >
      : Effect.succeed(value)

  /** A new call's round of the model loop, for its hooks' `RunMeta` (see `runMeta.ts`). */
  const note = (call: Call, fiber: AnyFiber) => {
    const phase = call.coordinates.phase
    if (call.operation === "phase" && phase !== undefined) notePhase(requestOf(fiber)?.scope, phase)
    else if (phase === undefined && observed.has(call.operation)) noteRound(call, requestOf(fiber)?.scope)
  }

  const call = <Op extends Operation>(operation: Op, init: Calls.CallInit<Op>): Effect.Effect<Call<Op>> =>
    Effect.withFiberRuntime((fiber) => {
      const made = Calls.callOf(operation, init, clockOf(fiber), observed.has(operation))
      note(made, fiber)
      return Effect.succeed(made)
    })

  const run = <Op extends Operation, A, E>(call: Call<Op>, body: Effect.Effect<A, E>) =>
    observed.has(call.operation)
      ? Effect.withFiberRuntime<A, E | HookDenied>((fiber) => runWith(call, recorderOf(call.operation, fiber), body))
      : body

  const { runStream, withOperationStream } = Streams.make({
    observed: (operation) => observed.has(operation),
    call,
    observe: (call, fiber) => {
      const recorder = recorderOf(call.operation, fiber)
      const begun = observe(call, recorder)
      return failing.length === 0 ? begun : Effect.map(
        begun,
        (ends) => (exit: Exit.Exit<unknown, unknown>) => Effect.zipRight(ends(exit), onError(call, recorder, exit))
      )
    },
    guarded: (call, fiber, start) => guarded(call, recorderOf(call.operation, fiber), start),
    transform: (point, call, value, fiber, servedBy) =>
      transform(point, call, value, recorderOf(call.operation, fiber), servedBy)
  })

  const withOperation = WithOperations.make({
    snapshotted: (operation) => snapshotted.has(operation),
    observed: (operation) => observed.has(operation),
    transformed: (point) => transformed.has(point),
    recorderOf,
    note,
    runWith,
    transform
  })

  return {
    active,
    limit,
    observes: (operation: Operation) => observed.has(operation),
    call,
    run,
    runStream,
    withOperation,
    withOperationStream
  }
}
