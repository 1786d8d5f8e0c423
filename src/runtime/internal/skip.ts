/**
 * Runs that do not happen (seed 001 "skipped"): a disabled hook, or one
 * whose dependency did not complete at this point, is recorded `skipped` —
 * and a fail-closed one whose dependency failed stops the point.
 */
import { Clock, Effect } from "effect"
import { type Participant, skipReason, unmetDependencies } from "../Subscription.js"
import { entryOf, type RunSpec } from "./run.js"

/** What recording a run that did not happen needs. */
type SkipSpec = Pick<RunSpec, "hookName" | "point" | "sequence" | "phase" | "operation" | "execution" | "recorder">

/**
 * Records a run that did not happen: `skipped`, because the hook is
 * disabled or a dependency of it did not complete at this point.
 */
export const recordSkipped = (
  spec: SkipSpec,
  reason: "disabled" | "dependency_failed"
): Effect.Effect<void> =>
  Clock.clockWith((clock) =>
    spec.recorder.startInvocation().complete({
      ...entryOf(spec, "skipped", clock.unsafeCurrentTimeMillis(), 0),
      skipReason: reason
    })
  )

/**
 * Skips `participant` (at position `spec.sequence` of its point's
 * `participants`) if it cannot run: disabled, or a dependency of it did not
 * complete. Returns `undefined` when it runs — nothing is allocated on that
 * path; otherwise marks it not completed and returns the effect that records
 * it `skipped`. A fail-closed participant whose dependency failed is never
 * silently skipped: that effect then fails with `stop(spec, detail)`.
 */
export const skipped = <S extends SkipSpec, E>(
  participant: Participant<unknown>,
  participants: ReadonlyArray<{ readonly id: string }>,
  completed: Array<boolean>,
  spec: S,
  stop: (spec: S, detail: string) => E
): Effect.Effect<void, E> | undefined => {
  const reason = skipReason(participant, completed)
  if (reason === undefined) return undefined
  completed[spec.sequence] = false
  return reason === "dependency_failed" && participant.failure === "fail_closed"
    ? Effect.zipRight(
      recordSkipped(spec, reason),
      Effect.fail(stop(spec, unmetDependencies(participant, participants, completed)))
    )
    : recordSkipped(spec, reason)
}
