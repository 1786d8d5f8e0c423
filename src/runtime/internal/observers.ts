/**
 * Around observers of an operation's runs (seed 003): they begin in order
 * before the run and finish in reverse order after it with its result
 * (outcome `completed`, `denied`, `failed` or `canceled`). An observer
 * observes and cannot change the outcome: its failures fail open. A
 * detached observer begins and finishes after the run, in the pool.
 */
import { Cause, Duration, Effect, Exit, type Fiber } from "effect"
import type { Call, Operation, Outcome, Result } from "../../domain/Operation.js"
import { HookDenied } from "../../domain/PipelineError.js"
import type { Finish } from "../OperationHooks.js"
import { isDetached } from "../Policy.js"
import type { InvocationHandle, RequestRecorder } from "../RequestRecorder.js"
import { type Participant, skipReason } from "../Subscription.js"
import { type Detach, startDetached } from "./detached.js"
import { completedOperationEntry } from "./fastPath.js"
import { keepLatest } from "./liveShapes.js"
import { OnFiber } from "./onFiber.js"
import type { AnyAround, OperationRunSpec, SpecOf } from "./participants.js"
import {
  type Attempt,
  attempt,
  attemptLean,
  failureDecision,
  failureText,
  limitOf,
  openRun,
  openRunNow,
  propagateInterruption,
  propagatePanic,
  type Run
} from "./run.js"
import { recordSkipped } from "./skip.js"
import { elapsedMillis, RunTimer } from "./timing.js"

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Outcome => {
  if (Exit.isSuccess(exit)) return "completed"
  if (Cause.isInterruptedOnly(exit.cause)) return "canceled"
  const failure = Cause.failureOption(exit.cause)
  return failure._tag === "Some" && failure.value instanceof HookDenied ? "denied" : "failed"
}

const errorOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isSuccess(exit) ? undefined : Cause.squash(exit.cause)

interface Observing {
  readonly run: Run
  readonly finish: Finish | undefined
  readonly spec: OperationRunSpec
}

/** A `Hook.sync` observer begun on the fast path, with no finish callback: recorded when the run ends. */
interface Begun {
  readonly participant: Participant<AnyAround>
  readonly sequence: number
  readonly startedAt: number
  readonly t0: number
}

/** How an observer's begin ended: observing, or recorded as failed (fail open). */
const settleBegin = (run: Run, spec: OperationRunSpec, ended: Attempt): Effect.Effect<Observing | undefined> => {
  switch (ended._tag) {
    case "Value":
      if (ended.value === undefined || typeof ended.value === "function") {
        // A value of function type is the observer's finish callback.
        const finish = ended.value as Finish | undefined
        return Effect.succeed({ run, finish, spec })
      }
      return Effect.as(
        run.finish({
          status: "failed",
          error: "an Around observer must return a finish function or nothing",
          decision: failureDecision("fail_open", "hook_error")
        }, Exit.void),
        undefined
      )
    case "WrongShape":
      return Effect.as(
        run.finish({
          status: "failed",
          error: "hook handler did not return an Effect",
          decision: failureDecision("fail_open", "hook_error")
        }, Exit.void),
        undefined
      )
    case "TimedOut":
      return Effect.as(
        run.finish(
          { status: "timed_out", error: ended.error, decision: failureDecision("fail_open", "timed_out") },
          Exit.void
        ),
        undefined
      )
    case "Failed":
      return Effect.as(
        run.finish({
          status: "failed",
          error: failureText(ended.error),
          decision: failureDecision("fail_open", "hook_error")
        }, Exit.failCause(ended.cause)),
        undefined
      )
    case "Panic":
      return propagatePanic(run, "fail_open", ended.cause)
    case "Interrupted":
      return propagateInterruption(run)
  }
}

/** Begins one observer; a failing begin is recorded at once (fail open). */
const begin = (
  participant: Participant<AnyAround>,
  spec: OperationRunSpec,
  call: Call,
  handle?: InvocationHandle
): Effect.Effect<Observing | undefined> =>
  Effect.flatMap(
    openRun(spec, undefined, handle),
    (run) =>
      Effect.flatMap(attempt(spec, run, () => participant.handler(call)), (ended) => settleBegin(run, spec, ended))
  )

/**
 * The bound of a `finish` callback: its run's limit — but when the run was
 * canceled, at most the grace period (a cancellation must be prompt: the
 * observer gets that long to see it).
 */
const finishLimit = (spec: OperationRunSpec, result: Result): OperationRunSpec => {
  if (result.outcome !== "canceled") return spec
  const limit = limitOf(spec)
  return Duration.lessThanOrEqualTo(limit.timeout, limit.grace)
    ? spec
    : { ...spec, limit: { timeout: limit.grace, grace: limit.grace } }
}

/** Ends one observer with the run's result. */
const end = (observing: Observing, result: Result): Effect.Effect<void> => {
  const { finish, run, spec } = observing
  if (finish === undefined) return run.finish({ status: "completed" }, Exit.void)
  return Effect.flatMap(attempt(finishLimit(spec, result), run, () => finish(result)), (ended): Effect.Effect<void> => {
    switch (ended._tag) {
      case "Value":
        return run.finish({ status: "completed" }, Exit.void)
      case "WrongShape":
        return run.finish({
          status: "failed",
          error: "finish did not return an Effect",
          decision: failureDecision("fail_open", "hook_error")
        }, Exit.void)
      case "TimedOut":
        return run.finish({
          status: "timed_out",
          error: ended.error,
          decision: failureDecision("fail_open", "timed_out")
        }, Exit.void)
      case "Failed":
        return run.finish({
          status: "failed",
          error: failureText(ended.error),
          decision: failureDecision("fail_open", "hook_error")
        }, Exit.failCause(ended.cause))
      case "Panic":
        return propagatePanic(run, "fail_open", ended.cause)
      case "Interrupted":
        return propagateInterruption(run)
    }
  })
}

/** A detached observer runs after the operation: begin, then finish, in the pool. */
const observeDetached = (
  detach: Detach,
  participant: Participant<AnyAround>,
  spec: OperationRunSpec,
  call: Call,
  result: Result
): Effect.Effect<void> =>
  // The run completes the entry recorded as backgrounded, through the same handle.
  startDetached(spec, detach, "observer", (handle, opened) =>
    Effect.flatMap(begin(participant, spec, call, handle), (begun) => {
      if (begun === undefined) {
        return Effect.void
      }
      opened(begun.run)
      return end(begun, result)
    }))

/**
 * Builds, once, the function that begins the observers of a run and returns
 * how to end them with the run's exit. `Hook.sync` observers begin (and,
 * without a finish callback, end) in one synchronous loop while spans are
 * not collected.
 */
export const makeObserve = (
  participants: { readonly around: (operation: Operation) => ReadonlyArray<Participant<AnyAround>> },
  detach: Detach,
  specOf: SpecOf
) =>
(call: Call, recorder: RequestRecorder): Effect.Effect<(exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>> =>
  Effect.withFiberRuntime((fiber) => {
    const observing = new Observation(participants.around(call.operation), detach, specOf, call, recorder, fiber)
    const ends = (exit: Exit.Exit<unknown, unknown>) => observing.ends(exit)
    // A begin that panics still ends the observers begun before it (C13).
    return Effect.as(Effect.onError(observing.begins(0), (cause) => observing.ends(Exit.failCause(cause))), ends)
  })

/**
 * Builds, once, the function that runs `body` inside its observers: they
 * begin, `body` runs, and they end with its exit — or with the failure of a
 * begin that panicked, ending the observers begun before it (C13). One exit
 * region for both (the streamed path's {@link makeObserve} needs two).
 */
export const makeObserveRun = (
  participants: { readonly around: (operation: Operation) => ReadonlyArray<Participant<AnyAround>> },
  detach: Detach,
  specOf: SpecOf
) =>
<A, E>(call: Call, recorder: RequestRecorder, body: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.withFiberRuntime((fiber) => {
    const observing = new Observation(participants.around(call.operation), detach, specOf, call, recorder, fiber)
    return Effect.onExit(Effect.zipRight(observing.begins(0), body), observing.endsBound)
  })

/**
 * The observers of one run. Its steps are methods (one function each for the
 * process's life), not closures made per run: a closure made per call loses
 * its optimized code whenever a full GC finds none alive.
 */
class Observation extends OnFiber {
  readonly open: Array<Observing | Begun> = []
  readonly later: Array<readonly [Participant<AnyAround>, OperationRunSpec]> = []

  constructor(
    readonly observers: ReadonlyArray<Participant<AnyAround>>,
    readonly detach: Detach,
    readonly specOf: SpecOf,
    readonly call: Call,
    readonly recorder: RequestRecorder,
    fiber: Fiber.RuntimeFiber<unknown, unknown>
  ) {
    super(recorder, fiber)
    keepLatest("observation", this)
  }

  observed(i: number, observing: Observing | undefined): void {
    if (observing !== undefined) this.open.push(observing)
    else this.completed[i] = false
  }

  /** An Effect observer's begin on the lean path: its effect and one continuation. */
  leanBegin(participant: Participant<AnyAround>, i: number): Effect.Effect<Observing | undefined> {
    const call = this.call
    const spec = this.specOf(participant, i, call, this.recorder)
    const run = openRunNow(spec, this.clock)
    return attemptLean(spec, run, this.slot, () => participant.handler(call), (ended) => settleBegin(run, spec, ended))
  }

  /** Begins the observers from `start`. */
  begins(start: number): Effect.Effect<void> {
    const { call, clock, completed, observers, recorder, specOf } = this
    const recording = recorder.enabled
    let timer: RunTimer | undefined
    for (let i = start; i < observers.length; i++) {
      const participant = observers[i]!
      const reason = skipReason(participant, completed)
      if (reason !== undefined) {
        completed[i] = false
        return Effect.zipRight(
          recordSkipped(specOf(participant, i, call, recorder), reason),
          Effect.suspend(() => this.begins(i + 1))
        )
      }
      completed[i] = true
      if (isDetached(participant.execution)) {
        this.later.push([participant, specOf(participant, i, call, recorder)])
        continue
      }
      const plain = participant.plain
      if (plain === undefined && this.lean && participant.execution._tag === "Blocking") {
        return Effect.flatMap(this.leanBegin(participant, i), (observing) => {
          this.observed(i, observing)
          return this.begins(i + 1)
        })
      }
      if (!this.fast || plain === undefined || participant.execution._tag !== "Blocking") {
        const spec = specOf(participant, i, call, recorder)
        return Effect.zipRight(
          Effect.map(begin(participant, spec, call), (observing) => this.observed(i, observing)),
          Effect.suspend(() => this.begins(i + 1))
        )
      }
      // Timings are for the record: none read with recording off.
      if (recording) timer ??= new RunTimer(clock)
      const startedAt = timer === undefined ? 0 : timer.startedAt()
      const t0 = timer === undefined ? 0 : timer.mark
      let ended: Attempt
      try {
        ended = { _tag: "Value", value: plain(call) }
      } catch (defect) {
        ended = { _tag: "Panic", cause: Cause.die(defect) }
      }
      // The next observer's run starts where this one's begin ended.
      if (timer !== undefined) timer.lap()
      if (ended._tag === "Value" && ended.value === undefined) {
        // With recording off there is nothing to record at the end.
        if (recording) {
          const begun: Begun = { participant, sequence: i, startedAt, t0 }
          keepLatest("begunObserver", begun)
          this.open.push(begun)
        }
        continue
      }
      const spec = specOf(participant, i, call, recorder)
      const run = openRunNow(spec, clock)
      return Effect.zipRight(
        Effect.map(settleBegin(run, spec, ended), (observing) => this.observed(i, observing)),
        Effect.suspend(() => this.begins(i + 1))
      )
    }
    return Effect.void
  }

  /** Ends the begun observers with the run's exit. */
  ends(exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
    return Effect.suspend(() => this.endsNow(exit))
  }

  /** {@link endsNow} as a function of the exit (an exit region's finalizer). */
  get endsBound(): (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void> {
    return this.endsNow.bind(this)
  }

  endsNow(exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
    const { call, clock, open, recorder } = this
    // What finish callbacks get: built only if one needs it.
    let ended: Result | undefined
    const resultOf = (): Result => {
      if (ended !== undefined) return ended
      const endedAt = clock.unsafeCurrentTimeMillis()
      const error = errorOf(exit)
      ended = error === undefined
        ? { outcome: outcomeOf(exit), endedAt }
        : { outcome: outcomeOf(exit), endedAt, error }
      return ended
    }
    // Last begun, first ended. Observers without a finish callback end
    // at once, until one has a callback: from there on, in order.
    const pending: Array<Effect.Effect<void>> = []
    // Observers without a finish callback all end now: one reading for them.
    let endedAt: number | undefined
    for (let i = open.length - 1; i >= 0; i--) {
      const observing = open[i]!
      if ("participant" in observing) {
        const entry = completedOperationEntry(
          observing.participant,
          observing.sequence,
          call,
          observing.startedAt,
          (endedAt ??= elapsedMillis(clock)) - observing.t0
        )
        if (pending.length > 0) pending.push(Effect.suspend(() => recorder.appendNow(entry)))
        else {
          const rest = recorder.appendNow(entry)
          if (rest !== Effect.void) pending.push(rest)
        }
      } else if (pending.length === 0 && observing.finish === undefined) {
        const rest = observing.run.finishNow({ status: "completed" }, Exit.void)
        if (rest !== Effect.void) pending.push(rest)
      } else {
        pending.push(end(observing, resultOf()))
      }
    }
    for (const [participant, spec] of this.later) {
      pending.push(observeDetached(this.detach, participant, spec, call, resultOf()))
    }
    return pending.length === 0 ? Effect.void : Effect.all(pending, { discard: true })
  }
}
