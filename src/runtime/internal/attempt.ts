/**
 * Calling a hook's handler as a run (seed 001): what the call returned —
 * a value, the wrong shape, a typed failure, a panic, a self-interruption
 * or a timeout — bounded by the run's limit on a fiber of its own
 * (`bounded.ts`), before anything is recorded. Panics and interruptions are
 * recorded here, then propagate.
 */
import { Cause, Duration, Effect, Exit, FiberId, Option } from "effect"
import type { InvocationSlot } from "../HookEffects.js"
import type { FailurePolicy } from "../Policy.js"
import { defaultLimit, type Ending as Bounded, type Pause, runBounded, type RunLimit } from "./bounded.js"
import { panicText } from "./failures.js"
import type { Run, RunSpec } from "./run.js"

const wrongShape = Symbol("wrongShape")

/**
 * Calls a `Hook.sync` handler's plain function: its value, or the panic its
 * exception is (as `Effect.sync` would make it).
 */
export const callPlain = (call: () => unknown): Attempt => {
  try {
    return { _tag: "Value", value: call() }
  } catch (defect) {
    return { _tag: "Panic", cause: Cause.die(defect) }
  }
}

/**
 * How a handler call ended, before any recording. A panic is returned (not
 * raised) so the caller records it first; an interruption propagates.
 */
export type Attempt =
  | { readonly _tag: "Value"; readonly value: unknown }
  | { readonly _tag: "WrongShape" }
  | { readonly _tag: "TimedOut"; readonly error: string; readonly abandoned: boolean }
  | { readonly _tag: "Failed"; readonly error: unknown; readonly cause: Cause.Cause<unknown> }
  | { readonly _tag: "Panic"; readonly cause: Cause.Cause<unknown> }
  /** The handler interrupted itself (an outside interruption does not come back here). */
  | { readonly _tag: "Interrupted" }

const wrongShapeAttempt: Attempt = { _tag: "WrongShape" }
const interruptedAttempt: Attempt = { _tag: "Interrupted" }

/** The bounds of a run of `spec`. */
export const limitOf = (spec: Pick<RunSpec, "execution" | "limit">): RunLimit => {
  const limit = spec.limit ?? defaultLimit
  return spec.execution._tag === "Deadline" && spec.limit === undefined
    ? { timeout: spec.execution.timeout, grace: limit.grace }
    : limit
}

/** The text of a timed-out run. */
const timedOutText = (limit: RunLimit): string => `timed out after ${Duration.format(limit.timeout)}`

/** How a run that has ended ended (its handler's effect was already an exit, or its fiber ended). */
const attemptOf = (exit: Exit.Exit<unknown, unknown>): Attempt =>
  Exit.isSuccess(exit)
    ? exit.value === wrongShape ? wrongShapeAttempt : { _tag: "Value", value: exit.value }
    : failedAttempt(exit.cause)

/** How a bounded run of `run` ended (an abandoned run is marked so: its record entry says it). */
const attemptOfEnding = (run: Run, limit: RunLimit, ended: Bounded<unknown, unknown>): Attempt => {
  if (ended._tag === "Done") return attemptOf(ended.exit)
  if (ended.abandoned) run.abandoned = true
  return { _tag: "TimedOut", error: timedOutText(limit), abandoned: ended.abandoned }
}

/**
 * Calls a handler as a run of `spec`: inside the run's span, with the
 * effect reporter pointed at the run (unless recording is off), bounded by
 * the run's limit on a fiber of its own (`bounded.ts`). Never fails: the
 * caller decides what each ending means. `pause`, for a guard, stops its
 * deadline while the operation runs inside it.
 */
export const attempt = (
  spec: Pick<RunSpec, "execution" | "recorder" | "limit">,
  run: Run,
  call: () => unknown,
  pause?: Pause | undefined
): Effect.Effect<Attempt> => {
  const limit = limitOf(spec)
  const handler = Effect.suspend(() => {
    const returned = call()
    // Handlers' requirements were provided at registration (PipelineHooks.layer).
    return Effect.isEffect(returned) ? (returned as Effect.Effect<unknown, unknown>) : Effect.succeed(wrongShape)
  })
  const spanned = run.span === undefined ? handler : Effect.withParentSpan(handler, run.span)
  // With recording off the request already runs with reporting disabled.
  const report = spec.recorder.enabled ? run.handle : null
  return Effect.map(
    runBounded(spanned, limit, report, () => void (run.abandoned = true), pause),
    (ended) => attemptOfEnding(run, limit, ended)
  )
}

/**
 * Runs a blocking Effect handler on the lean path (no span is collected):
 * calls it now; a handler whose effect is already an exit (`Effect.succeed`,
 * `Effect.fail`) has ended — nothing to run or bound; any other runs bounded
 * on a fiber of its own (reporting into `run` when recording: `slot` is the
 * caller's). Hands how it ended to `ended`.
 */
export const attemptLean = <B, E>(
  spec: Pick<RunSpec, "execution" | "limit">,
  run: Run,
  slot: InvocationSlot | undefined,
  call: () => unknown,
  ended: (attempt: Attempt) => Effect.Effect<B, E>
): Effect.Effect<B, E> => {
  let returned: unknown
  try {
    returned = call()
  } catch (defect) {
    return ended({ _tag: "Panic", cause: Cause.die(defect) })
  }
  if (!Effect.isEffect(returned)) return ended(wrongShapeAttempt)
  // Handlers' requirements were provided at registration (PipelineHooks.layer).
  const effect = returned as Effect.Effect<unknown, unknown>
  if (Exit.isExit(effect)) return ended(attemptOf(effect))
  const limit = limitOf(spec)
  return Effect.flatMap(
    runBounded(effect, limit, slot === undefined ? null : run.handle, () => void (run.abandoned = true)),
    (bounded) => ended(attemptOfEnding(run, limit, bounded))
  )
}

/** How a handler that failed with `cause` ended: its self-interruption, its typed failure, or a panic. */
const failedAttempt = (cause: Cause.Cause<unknown>): Attempt => {
  if (Cause.isInterruptedOnly(cause)) return interruptedAttempt
  const failure = Cause.failureOption(cause)
  // The handler's own error value: Effect may have wrapped it to carry the span.
  return Option.isSome(failure) && !Cause.isDie(cause)
    ? { _tag: "Failed", error: Cause.originalError(failure.value), cause }
    : { _tag: "Panic", cause }
}

/** Records a panic, then re-raises it as the defect it is (C13). */
export const propagatePanic = (run: Run, failure: FailurePolicy, cause: Cause.Cause<unknown>): Effect.Effect<never> =>
  Effect.zipRight(
    run.finish(
      {
        status: "failed",
        error: panicText(cause),
        decision: { policy: failure, action: "propagate_panic", reason: "panic" }
      },
      Exit.failCause(cause)
    ),
    // The original cause, unchanged; a typed failure mixed into it becomes a
    // defect too, so the panic stays out of the typed error channel.
    Effect.catchAll(Effect.failCause(cause), (mixed) => Effect.die(mixed))
  )

/** Records a handler's self-interruption, then interrupts. */
export const propagateInterruption = (run: Run): Effect.Effect<never> =>
  Effect.zipRight(
    run.finish({ status: "failed", error: "interrupted" }, Exit.interrupt(FiberId.none)),
    Effect.interrupt
  )
