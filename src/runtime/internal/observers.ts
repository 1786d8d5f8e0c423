/**
 * Around observers of an operation's runs (seed 003): they begin in order
 * before the run and finish in reverse order after it with its result
 * (outcome `completed`, `denied`, `failed` or `canceled`). An observer
 * observes and cannot change the outcome: its failures fail open. A
 * detached observer begins and finishes after the run, in the pool.
 */
import { Cause, Effect, Exit, type Fiber } from "effect"
import { keepLatest } from "../../domain/internal/liveShapes.js"
import type { Call, Operation, Result } from "../../domain/Operation.js"
import { isDetached } from "../Policy.js"
import { type Participant, skipReason } from "../Subscription.js"
import { type Attempt, attemptLean } from "./attempt.js"
import type { Detach } from "./detached.js"
import { completedOperationEntry, succeeded } from "./fastPath.js"
import {
  begin,
  type Begun,
  end,
  errorOf,
  observeDetached,
  type Observing,
  outcomeOf,
  settleBegin
} from "./observerRuns.js"
import { OnFiber } from "./onFiber.js"
import type { AnyAround, OperationRunSpec, SpecOf } from "./participants.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { openRunNow } from "./run.js"
import { metaOf } from "./runMeta.js"
import { recordSkipped } from "./skip.js"
import { elapsedMillis, millisBetween, RunTimer } from "./timing.js"

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
    keepLatest("observation", observing)
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
    keepLatest("observation", observing)
    return Effect.onExit(Effect.zipRight(observing.begins(0), body), (exit) => observing.endsNow(exit))
  })

/** The observers of one run, on the fiber that runs it. */
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
  }

  observed(i: number, observing: Observing | undefined): void {
    if (observing !== undefined) this.open.push(observing)
    else this.completed[i] = false
  }

  /** An Effect observer's begin on the lean path (`returned`: its handler's effect): that effect and one continuation. */
  leanBegin(participant: Participant<AnyAround>, i: number, returned: unknown): Effect.Effect<Observing | undefined> {
    const call = this.call
    const spec = this.specOf(participant, i, call, this.recorder)
    const run = openRunNow(spec, this.clock)
    return attemptLean(spec, run, this.slot, () => returned, (ended) => settleBegin(run, spec, ended))
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
      if (!this.fast || participant.execution._tag !== "Blocking") {
        const spec = specOf(participant, i, call, recorder)
        return Effect.zipRight(
          Effect.map(begin(participant, spec, call), (observing) => this.observed(i, observing)),
          Effect.suspend(() => this.begins(i + 1))
        )
      }
      // Synchronously: `Hook.sync` functions, and Effect handlers whose
      // effect is already a success (nothing to run).
      // Timings are for the record: none read with recording off.
      if (recording) timer ??= new RunTimer(clock)
      const startedAt = timer === undefined ? 0 : timer.startedAt()
      const t0 = timer === undefined ? 0 : timer.mark
      let ended: Attempt
      try {
        if (plain !== undefined) ended = { _tag: "Value", value: plain(call, metaOf(participant, call)) }
        else {
          const returned: unknown = participant.handler(call, metaOf(participant, call))
          if (!succeeded(returned)) {
            const begun = this.lean
              ? this.leanBegin(participant, i, returned)
              : begin(participant, specOf(participant, i, call, recorder), call, undefined, () => returned)
            return Effect.flatMap(begun, (observing) => {
              this.observed(i, observing)
              return this.begins(i + 1)
            })
          }
          ended = { _tag: "Value", value: returned.value }
        }
      } catch (defect) {
        ended = { _tag: "Panic", cause: Cause.die(defect) }
      }
      // The next observer's run starts where this one's begin ended.
      if (timer !== undefined) timer.lap()
      if (ended._tag === "Value" && ended.value === undefined) {
        // With recording off there is nothing to record at the end.
        if (recording) {
          const begun: Begun = { participant, sequence: i, startedAt, t0 }
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
          millisBetween(observing.t0, endedAt ??= elapsedMillis(clock))
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
