/**
 * The latest object of each kind the request path makes per request, kept
 * alive (one each, overwritten by the next).
 *
 * Why: V8's optimized code embeds the hidden classes ("maps") of the objects
 * it was compiled for, and deoptimizes that code once a full garbage
 * collection finds no object of such a map alive. Between bursts of requests
 * none is — and idle processes do run full collections (V8's memory reducer
 * starts them). The request path's code was then thrown away: measured on
 * 500 requests at 16 hooks after two full collections, about 40 functions
 * deoptimized, the first requests ran unoptimized while they recompiled on
 * another core, and the burst cost about 20 % more per request. One live
 * object per kind keeps those maps, and so the code. What is kept is bounded:
 * one request's state, one fiber, a few small objects.
 */
import { Effect, type Fiber } from "effect"

/** The kept objects, by kind. */
interface Kept {
  request: unknown
  decodedRequest: unknown
  either: unknown
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  fiberStatus: unknown
  transformChain: unknown
  observation: unknown
  modelAttempt: unknown
  hookRun: unknown
  runTimer: unknown
  begunObserver: unknown
  /** A `Hook.sync` operation run's entry, one per shape (see `fastPath.ts`). */
  operationEntry: unknown
  phaseEntry: unknown
  stepEntry: unknown
  /** Frozen calls of hooked runs, with and without a parent, and their coordinates, one per shape. */
  call: unknown
  childCall: unknown
  requestCoordinates: unknown
  phaseCoordinates: unknown
  stepCoordinates: unknown
}

const kept: Kept = {
  request: undefined,
  decodedRequest: undefined,
  either: undefined,
  fiber: undefined,
  fiberStatus: undefined,
  transformChain: undefined,
  observation: undefined,
  modelAttempt: undefined,
  hookRun: undefined,
  runTimer: undefined,
  begunObserver: undefined,
  operationEntry: undefined,
  phaseEntry: undefined,
  stepEntry: undefined,
  call: undefined,
  childCall: undefined,
  requestCoordinates: undefined,
  phaseCoordinates: undefined,
  stepCoordinates: undefined
}

/** Keeps `value` as the latest object of its kind. */
export const keepLatest = <K extends keyof Kept>(kind: K, value: Kept[K]): void => {
  kept[kind] = value
}

// Effect.gen's `yield*` goes through these per-yield objects (a one-shot
// iterator over a wrapped effect); one pair stays alive for the same reason.
const generatorProtocol: Iterator<unknown> = Effect.void[Symbol.iterator]()

// The fiber runtime's own per-step objects (a fiber, the marker it pushes on
// entering an uninterruptible region) are kept by one fiber parked for the
// process's life inside such a region. It waits on nothing the event loop
// knows of, so it never keeps the process alive.
let parked: Fiber.RuntimeFiber<never> | undefined

/** Parks the keeper fiber, once per process (called when a pipeline is built). */
export const parkOnce = (): void => {
  parked ??= Effect.runFork(Effect.uninterruptible(Effect.zipRight(Effect.void, Effect.async<never>(() => {}))))
}

/** For tests: what is kept. */
export const keptNow = (): Readonly<Kept> & {
  readonly generatorProtocol: Iterator<unknown>
  readonly parked: Fiber.RuntimeFiber<never> | undefined
} => ({
  ...kept,
  generatorProtocol,
  parked
})
