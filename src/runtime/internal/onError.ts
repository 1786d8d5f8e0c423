/**
 * `on_error` runs (seed 004 "OnError"): each operation run that ends
 * `failed` or `denied` is shown to the `on_error` hooks, in order, with its
 * call, its result (outcome, error) and its `Cause`. They observe: what
 * they return is ignored; their failures and overruns are recorded (fail
 * open) and never change the operation's failure. A panic is recorded and
 * propagates (C13) behind the operation's failure, which stays first in
 * the cause. A detached one (`fireAndRecord`, `background`) runs in the
 * pool. A run that completed or was canceled is not shown.
 */
import { Clock, Effect, Exit } from "effect"
import type { Call, Result } from "../../domain/Operation.js"
import { isDetached } from "../Policy.js"
import { type Participant, skipReason } from "../Subscription.js"
import { type Attempt, attempt } from "./attempt.js"
import { type Detach, startDetached } from "./detached.js"
import { endedOpen, errorOf, outcomeOf } from "./observerRuns.js"
import type { AnyOnError, OperationRunSpec, SpecOf } from "./participants.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { openRun, type Run } from "./run.js"
import { metaOf } from "./runMeta.js"
import { recordSkipped } from "./skip.js"

/** How one `on_error` run ended, recorded; whether it completed. */
const settle = (run: Run, ended: Attempt): Effect.Effect<boolean> =>
  ended._tag === "Value"
    ? Effect.as(run.finish({ status: "completed" }, Exit.void), true)
    : Effect.as(endedOpen(run, ended), false)

/** One `on_error` run of `participant` (at `spec.sequence`). */
const onErrorRun = (
  participant: Participant<AnyOnError>,
  spec: OperationRunSpec,
  detach: Detach,
  handled: () => unknown
): Effect.Effect<boolean> => {
  if (isDetached(participant.execution)) {
    return Effect.as(
      startDetached(
        spec,
        detach,
        "on_error hook",
        (handle, opened) =>
          Effect.flatMap(openRun(spec, undefined, handle), (run) => {
            opened(run)
            return Effect.asVoid(Effect.flatMap(attempt(spec, run, handled), (ended) => settle(run, ended)))
          })
      ),
      true
    )
  }
  return Effect.flatMap(
    openRun(spec),
    (run) => Effect.flatMap(attempt(spec, run, handled), (ended) => settle(run, ended))
  )
}

/**
 * Builds, once, the function that shows a run's exit to the `on_error`
 * hooks (nothing to do when it succeeded, was canceled, or none is
 * registered).
 */
export const makeOnError = (
  participants: ReadonlyArray<Participant<AnyOnError>>,
  detach: Detach,
  specOf: SpecOf
) =>
(call: Call, recorder: RequestRecorder, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> => {
  if (participants.length === 0 || Exit.isSuccess(exit)) return Effect.void
  const outcome = outcomeOf(exit)
  if (outcome !== "failed" && outcome !== "denied") return Effect.void
  const cause = exit.cause
  return Clock.clockWith((clock) => {
    const error = errorOf(exit)
    const endedAt = clock.unsafeCurrentTimeMillis()
    const result: Result = Object.freeze(error === undefined ? { outcome, endedAt } : { outcome, endedAt, error })
    const completed: Array<boolean> = []
    const from = (i: number): Effect.Effect<void> => {
      if (i === participants.length) return Effect.void
      const participant = participants[i]!
      const spec = specOf(participant, i, call, recorder)
      const reason = skipReason(participant, completed)
      if (reason !== undefined) {
        completed[i] = false
        return Effect.zipRight(recordSkipped(spec, reason), Effect.suspend(() => from(i + 1)))
      }
      const meta = metaOf(participant, call)
      return Effect.flatMap(
        onErrorRun(participant, spec, detach, () => participant.handler(call, result, cause, meta)),
        (done) => {
          completed[i] = done
          return from(i + 1)
        }
      )
    }
    return from(0)
  })
}
