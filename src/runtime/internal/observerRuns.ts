/**
 * One Around observer's run (seed 003): its begin, and its end with the
 * result of the operation's run. An observer observes and cannot change
 * the outcome: its failures fail open, and a finish of a canceled run gets
 * at most the grace period.
 */
import { Cause, Duration, Effect, Exit } from "effect"
import type { Call, Outcome, Result } from "../../domain/Operation.js"
import { HookDenied } from "../../domain/PipelineError.js"
import type { Participant } from "../Subscription.js"
import { type Attempt, attempt, limitOf, propagateInterruption, propagatePanic } from "./attempt.js"
import { type Detach, startDetached } from "./detached.js"
import { failureDecision, failureText } from "./failures.js"
import type { InvocationHandle } from "./invocationSlot.js"
import type { Finish } from "./operationHooks.js"
import type { AnyAround, OperationRunSpec } from "./participants.js"
import { openRun, type Run } from "./run.js"
import { metaOf } from "./runMeta.js"

export const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Outcome => {
  if (Exit.isSuccess(exit)) return "completed"
  if (Cause.isInterruptedOnly(exit.cause)) return "canceled"
  const failure = Cause.failureOption(exit.cause)
  return failure._tag === "Some" && failure.value instanceof HookDenied ? "denied" : "failed"
}

export const errorOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isSuccess(exit) ? undefined : Cause.squash(exit.cause)

export interface Observing {
  readonly run: Run
  readonly finish: Finish | undefined
  readonly spec: OperationRunSpec
}

/** A `Hook.sync` observer begun on the fast path, with no finish callback: recorded when the run ends. */
export interface Begun {
  readonly participant: Participant<AnyAround>
  readonly sequence: number
  readonly startedAt: number
  readonly t0: number
}

/** How an observer's begin ended: observing, or recorded as failed (fail open). */
export const settleBegin = (run: Run, spec: OperationRunSpec, ended: Attempt): Effect.Effect<Observing | undefined> => {
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
    default:
      return Effect.as(endedOpen(run, ended), undefined)
  }
}

/**
 * Records an observe-only run (an observer's begin, an `on_error` run) that
 * did not return a value: a wrong shape, a timeout or a failure fails open;
 * a panic or the handler's own interruption propagates.
 */
export const endedOpen = (run: Run, ended: Exclude<Attempt, { readonly _tag: "Value" }>): Effect.Effect<void> => {
  switch (ended._tag) {
    case "WrongShape":
      return run.finish({
        status: "failed",
        error: "hook handler did not return an Effect",
        decision: failureDecision("fail_open", "hook_error")
      }, Exit.void)
    case "TimedOut":
      return run.finish(
        { status: "timed_out", error: ended.error, decision: failureDecision("fail_open", "timed_out") },
        Exit.void
      )
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
}

/**
 * Begins one observer; a failing begin is recorded at once (fail open).
 * `handled`: its handler's call, when it was already made.
 */
export const begin = (
  participant: Participant<AnyAround>,
  spec: OperationRunSpec,
  call: Call,
  handle?: InvocationHandle,
  handled: () => unknown = () => participant.handler(call, metaOf(participant, call))
): Effect.Effect<Observing | undefined> =>
  Effect.flatMap(
    openRun(spec, undefined, handle),
    (run) => Effect.flatMap(attempt(spec, run, handled), (ended) => settleBegin(run, spec, ended))
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
export const end = (observing: Observing, result: Result): Effect.Effect<void> => {
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
export const observeDetached = (
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
