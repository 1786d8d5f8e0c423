/**
 * The newest object of each kind the request path makes, kept alive (one
 * each, replaced by the next), and one fiber parked for the process's life.
 *
 * Why: V8's optimized code embeds the hidden classes ("maps") of the objects
 * it was compiled for, holding them weakly, and throws that code away once a
 * full garbage collection finds no object of such a map alive. Between
 * bursts of requests none is — and idle processes do run full collections
 * (V8's memory reducer starts them; a benchmark forces them). Measured
 * 2026-12-02 at 16 hooks, 500 requests after two full collections: about
 * 145 optimized functions thrown away per burst (the fiber runtime's own
 * among them), against 7 with these kept; the burst's median request took
 * 1.3–1.5× as long and its throughput fell by a third to a half
 * (docs/performance.md, "Bursts after an idle collection"). The record
 * encoder's and the contribution hash's working objects, a request's start,
 * its parsed plan and its enrichments followed (2026-12-03): their functions were still
 * thrown away at every burst. Whatever is kept here is bounded: one
 * finished request's recorder and fiber, the newest sixteen calls, one
 * record's encoding, a few small objects. Nothing here is read back, except
 * by the test that checks it.
 *
 * It lives with the domain's internals so that every layer can keep its own.
 */
import { Effect, type Fiber } from "effect"

/** The kept objects, by kind. */
interface Kept {
  /** The newest finished request's recorder (and so its record). */
  recorder: unknown
  /** The fiber it ran on. */
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  runTimer: unknown
  hookRun: unknown
  observation: unknown
  transformChain: unknown
  operationEntry: unknown
  /** The newest request's start: its decoded request and its state. */
  requestStart: unknown
  /** A fiber status the request path was handed (Effect makes one per `withFiberRuntime`). */
  fiberStatus: unknown
  /** The newest plan as `JSON.parse` read it from a model's text, before it was decoded. */
  parsedPlan: unknown
  /** The record encoder's working objects for the newest record it encoded (its tables, its body). */
  encoding: unknown
  /** The newest contribution hash's state. */
  hash: unknown
  /** The newest request's enrichments as its BeforePlanning hooks changed them. */
  enrichments: unknown
}

const kept: Kept = {
  recorder: undefined,
  fiber: undefined,
  runTimer: undefined,
  hookRun: undefined,
  observation: undefined,
  transformChain: undefined,
  operationEntry: undefined,
  requestStart: undefined,
  fiberStatus: undefined,
  parsedPlan: undefined,
  encoding: undefined,
  hash: undefined,
  enrichments: undefined
}

// The calls of the newest runs: a request makes calls of several shapes
// (with and without a parent, a phase, a step; frozen or not), each with its
// coordinates and payload copies, so the last few are kept, not the last one.
const recentCalls: Array<unknown> = []
const keptCalls = 16
let nextCall = 0

/**
 * Keeps `call` among the newest calls; returns it.
 *
 * @since 0.1.0
 * @category internals
 */
export const keepCall = <C>(call: C): C => {
  recentCalls[nextCall] = call
  nextCall = (nextCall + 1) % keptCalls
  return call
}

/**
 * Keeps `value` as the newest object of its kind; returns it.
 *
 * @since 0.1.0
 * @category internals
 */
export const keepLatest = <K extends keyof Kept, V extends Kept[K]>(kind: K, value: V): V => {
  kept[kind] = value
  return value
}

// The fiber runtime's own per-step objects — a fiber, the marker it pushes
// when it enters an uninterruptible region, a generator's one-shot iterator
// over the effect it yields — are kept by one fiber parked inside such a
// region, in a generator. It waits on nothing the event loop knows of, so it
// never keeps the process alive.
let parked: Fiber.RuntimeFiber<never> | undefined

/**
 * Parks the keeper fiber, once per process (called when a pipeline is built).
 *
 * @since 0.1.0
 * @category internals
 */
export const parkOnce = (): void => {
  parked ??= Effect.runFork(Effect.uninterruptible(Effect.gen(function*() {
    yield* Effect.void
    // Not `Effect.never`: its interval timer would keep the process alive.
    return yield* Effect.async<never>(() => {})
  })))
}

/**
 * For tests: what is kept now.
 *
 * @since 0.1.0
 * @category internals
 */
export const keptNow = (): Readonly<Kept> & {
  readonly parked: Fiber.RuntimeFiber<never> | undefined
  readonly calls: ReadonlyArray<unknown>
} => ({
  ...kept,
  parked,
  calls: recentCalls.slice()
})
