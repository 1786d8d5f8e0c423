/**
 * How a point invokes one hook (seed 000 §9, seed 001): open the run, call
 * the handler, validate the result inside the span (the point's `accept`),
 * and record the run — the stage-oriented shape every point shares. The
 * building blocks (span, record entry, attempt, panic and interruption
 * handling) are in `run.ts`.
 *
 * Typed failures, wrong shapes, refused values and deadline overruns become
 * a `Rejected` result for the point to handle by its failure policy; a
 * fail-closed hook's rejection stops the request with {@link failedClosed}.
 * Panics and interruption propagate. A detached run (`fireAndRecord`,
 * `background`) is recorded as `backgrounded` at once and completed by a
 * late update when it ends.
 */
import { Effect, Exit, Option } from "effect"
import type { HookDecision, HookEffect } from "../../domain/ExecutionRecord.js"
import { HookFailed, type HookFailureReason } from "../../domain/PipelineError.js"
import type { Capability } from "../Capability.js"
import { currentInvocation, type InvocationSlot, sharedSlot } from "../HookEffects.js"
import type { FailurePolicy } from "../Policy.js"
import { type Attempt, attempt, attemptLean, callPlain, propagateInterruption, propagatePanic } from "./attempt.js"
import { type Detach, startDetached } from "./detached.js"
import { failureDecision, failureText } from "./failures.js"
import { openRun, openRunNow, type Run, type RunSpec, type SpanEvent } from "./run.js"
import { collects } from "./spans.js"
import { clockOf } from "./timing.js"

/** What the point's validation made of a returned value. */
export type Verdict<A> =
  | {
    readonly _tag: "Accept"
    readonly value: A
    readonly decision?: HookDecision | undefined
    readonly effects?: ReadonlyArray<HookEffect> | undefined
    readonly event?: SpanEvent | undefined
    /** What the hook changed, hashed into the record (omitted: it changed nothing). */
    readonly contribution?: unknown
  }
  | {
    readonly _tag: "Reject"
    readonly error: string
    readonly decision: HookDecision
    readonly value?: A | undefined
    readonly effects?: ReadonlyArray<HookEffect> | undefined
    /** What made the value unacceptable (kept as the cause of a fail-closed error). */
    readonly cause?: unknown
    readonly event?: SpanEvent | undefined
    /** Why, for a fail-closed error (default `hook_failed`). */
    readonly reason?: HookFailureReason | undefined
  }

/** What the point gets back. */
export type InvocationResult<A> =
  | { readonly _tag: "Accepted"; readonly value: A }
  | {
    readonly _tag: "Rejected"
    readonly error: string
    readonly value?: A | undefined
    /** The hook's own failure (its typed error), or what its value failed on. */
    readonly cause?: unknown
    readonly reason: HookFailureReason
  }
  /** The run went on detached from the request; its contribution is ignored. */
  | { readonly _tag: "Detached" }

/**
 * A stage's refusal of a contribution the hook did not declare (seed 001):
 * nothing changes, and the run is a contract failure under its policy.
 */
export const undeclaredContribution = (
  failure: FailurePolicy,
  what: string,
  capability: Capability
): Verdict<never> => ({
  _tag: "Reject",
  error: `undeclared contribution: ${what} without the "${capability}" capability`,
  decision: { ...failureDecision(failure, "hook_error"), reason: "undeclared_contribution" },
  reason: "undeclared_contribution"
})

/** The rejected case of {@link InvocationResult}. */
export type Rejected<A> = Extract<InvocationResult<A>, { readonly _tag: "Rejected" }>

export type { Detach } from "./detached.js"

/** One hook run as a point invokes it: what the run is, plus how to call the handler and judge its value. */
export interface InvocationSpec<A> extends RunSpec {
  /** Calls the handler. May throw (a panic) or return a non-Effect (wrong shape). */
  readonly call: () => unknown
  /**
   * Calls the plain function of a `Hook.sync` handler with the same
   * arguments: the synchronous fast path (taken when spans are not collected).
   */
  readonly plain?: (() => unknown) | undefined
  /** Validates a returned value (runs inside the span). */
  readonly accept: (value: unknown) => Verdict<A>
  /** The point's slot for the run in flight (see {@link guarded}). */
  readonly inflight: Inflight
  /** How detached runs start; needed only when the execution policy detaches. */
  readonly detach?: Detach | undefined
}

/** Finishes the run in flight when the point's fiber is interrupted. */
export interface Inflight {
  current: ((exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>) | undefined
}

/**
 * Runs a point's hook runs with one exit hook for the whole point (cheaper
 * than one per run): on interruption, the run in flight is recorded as
 * failed ("interrupted") and its span ends.
 */
export const guarded = <A, E>(
  body: (inflight: Inflight) => Effect.Effect<A, E>,
  syncOnly = false
): Effect.Effect<A, E> =>
  syncOnly
    ? Effect.withFiberRuntime((fiber) => collects(fiber) ? withExitHook(body) : body({ current: undefined }))
    : withExitHook(body)

const withExitHook = <A, E>(body: (inflight: Inflight) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    const inflight: Inflight = { current: undefined }
    return Effect.onExit(body(inflight), (exit) => {
      const finish = inflight.current
      return finish === undefined ? Effect.void : finish(exit)
    })
  })

/**
 * Whether a point's hooks are all blocking `Hook.sync` handlers (pass it to
 * {@link guarded}): while spans are not collected they run on the
 * synchronous fast path, where no run is ever in flight when the fiber can
 * be interrupted — the point needs no exit hook then.
 */
export const syncOnly = (
  participants: ReadonlyArray<{ readonly plain?: unknown; readonly execution: { readonly _tag: string } }>
): boolean => participants.every((p) => p.plain !== undefined && p.execution._tag === "Blocking")

/**
 * The error a fail-closed hook's rejected run stops the request with
 * (seed 001): the hook's own failure, if any, stays reachable as the cause.
 */
export const failedClosed = (
  spec: Pick<RunSpec, "hookName" | "point">,
  result: Pick<Rejected<unknown>, "reason" | "error" | "cause">
): HookFailed =>
  new HookFailed({
    hookName: spec.hookName,
    point: spec.point,
    reason: result.reason,
    detail: result.error,
    ...(result.cause === undefined ? {} : { cause: result.cause })
  })

/**
 * The error a fail-closed hook that could not run stops the request with:
 * `detail` names the dependencies that did not complete (`skipped` in run.ts).
 */
export const dependencyFailed = (spec: Pick<RunSpec, "hookName" | "point">, detail: string): HookFailed =>
  new HookFailed({ hookName: spec.hookName, point: spec.point, reason: "dependency_failed", detail })

/** The run itself, inside an open run: call, validate, record. */
const runInside = <A>(spec: InvocationSpec<A>, run: Run): Effect.Effect<InvocationResult<A>> => {
  // If the fiber is interrupted inside the handler, the point's exit hook
  // (`guarded`) records through this slot.
  spec.inflight.current = (exit) => run.finish({ status: "failed", error: "interrupted" }, exit)
  return Effect.flatMap(attempt(spec, run, spec.call), (ended) => {
    spec.inflight.current = undefined
    return settle(spec, run, ended)
  })
}

/**
 * {@link settle} for the synchronous fast path: an accepted value is
 * recorded now, without building an effect for it.
 */
const settleNow = <A>(spec: InvocationSpec<A>, run: Run, ended: Attempt): Effect.Effect<InvocationResult<A>> => {
  if (ended._tag !== "Value") return settle(spec, run, ended)
  const verdict = spec.accept(ended.value)
  if (verdict._tag !== "Accept") return settleVerdict(spec, run, verdict)
  const rest = run.finishNow({
    status: "completed",
    decision: verdict.decision,
    effects: verdict.effects,
    event: verdict.event,
    contribution: verdict.contribution
  }, Exit.void)
  const result: InvocationResult<A> = { _tag: "Accepted", value: verdict.value }
  return rest === Effect.void ? Effect.succeed(result) : Effect.as(rest, result)
}

/** A run's rejected result. */
const rejected = <A>(error: string, reason: HookFailureReason, cause?: unknown): Rejected<A> =>
  cause === undefined ? { _tag: "Rejected", error, reason } : { _tag: "Rejected", error, reason, cause }

/** How the run ended: validated and recorded; what the point gets back. */
const settle = <A>(spec: InvocationSpec<A>, run: Run, ended: Attempt): Effect.Effect<InvocationResult<A>> => {
  {
    switch (ended._tag) {
      case "WrongShape": {
        const error = "hook handler did not return an Effect"
        return Effect.as(
          run.finish({ status: "failed", error, decision: failureDecision(spec.failure, "hook_error") }, Exit.void),
          rejected(error, "wrong_shape")
        )
      }
      case "TimedOut":
        return Effect.as(
          run.finish(
            { status: "timed_out", error: ended.error, decision: failureDecision(spec.failure, "timed_out") },
            Exit.void
          ),
          rejected(ended.error, "timed_out")
        )
      case "Failed": {
        const error = failureText(ended.error)
        return Effect.as(
          run.finish(
            { status: "failed", error, decision: failureDecision(spec.failure, "hook_error") },
            Exit.failCause(ended.cause)
          ),
          rejected(error, "hook_failed", ended.error)
        )
      }
      case "Panic":
        return propagatePanic(run, spec.failure, ended.cause)
      case "Interrupted":
        return propagateInterruption(run)
      case "Value": {
        const verdict = spec.accept(ended.value)
        if (verdict._tag === "Accept") {
          return Effect.as(
            run.finish({
              status: "completed",
              decision: verdict.decision,
              effects: verdict.effects,
              event: verdict.event,
              contribution: verdict.contribution
            }, Exit.void),
            { _tag: "Accepted", value: verdict.value } as const
          )
        }
        return settleVerdict(spec, run, verdict)
      }
    }
  }
}

/** A refused value: recorded as failed; the point gets it back as `Rejected`. */
const settleVerdict = <A>(
  _spec: InvocationSpec<A>,
  run: Run,
  verdict: Extract<Verdict<A>, { readonly _tag: "Reject" }>
): Effect.Effect<InvocationResult<A>> => {
  const result = rejected<A>(verdict.error, verdict.reason ?? "hook_failed", verdict.cause)
  return Effect.as(
    run.finish({
      status: "failed",
      error: verdict.error,
      decision: verdict.decision,
      effects: verdict.effects,
      event: verdict.event
    }, Exit.fail(verdict.error)),
    verdict.value === undefined ? result : { ...result, value: verdict.value }
  )
}

// Hot path: one span, at most one FiberRef scope and synchronous clock reads
// per run; everything else is plain code.
export const invoke = <A>(spec: InvocationSpec<A>): Effect.Effect<InvocationResult<A>> => {
  if (spec.detach !== undefined && (spec.execution._tag === "FireAndRecord" || spec.execution._tag === "Background")) {
    return detached(spec, spec.detach)
  }
  const plain = spec.plain
  if (plain !== undefined && spec.execution._tag === "Blocking") {
    // A Hook.sync handler: called directly while spans are not collected.
    return Effect.withFiberRuntime((fiber) =>
      collects(fiber)
        ? Effect.flatMap(openRun(spec), (run) => runInside(spec, run))
        : settleNow(spec, openRunNow(spec, clockOf(fiber)), callPlain(plain))
    )
  }
  if (spec.execution._tag === "Blocking") {
    return Effect.withFiberRuntime((fiber) => {
      if (collects(fiber)) return Effect.flatMap(openRun(spec), (run) => runInside(spec, run))
      const slot = spec.recorder.enabled ? fiber.getFiberRef(currentInvocation) : undefined
      return slot === sharedSlot
        ? Effect.flatMap(openRun(spec), (run) => runInside(spec, run))
        : lean(spec, openRunNow(spec, clockOf(fiber)), slot)
    })
  }
  return Effect.flatMap(openRun(spec), (run) => runInside(spec, run))
}

/**
 * A blocking Effect handler while spans are not collected: its effect and
 * one continuation, reporting into `run` through the fiber's own slot.
 */
const lean = <A>(
  spec: InvocationSpec<A>,
  run: Run,
  slot: InvocationSlot | undefined
): Effect.Effect<InvocationResult<A>> => {
  // If the fiber is interrupted inside the handler, the point's exit hook
  // (`guarded`) records through this slot.
  spec.inflight.current = (exit) => run.finish({ status: "failed", error: "interrupted" }, exit)
  return attemptLean(spec, run, slot, spec.call, (ended) => {
    spec.inflight.current = undefined
    return settleNow(spec, run, ended)
  })
}

/**
 * A detached run: recorded `backgrounded` now and handed to the runtime's
 * pool; its span (under the request's current span) covers the run itself,
 * and a late update records how it ended — interrupted when the agent shut
 * down before it finished. Its panic stays in its own fiber: recorded,
 * logged, never the request's.
 */
const detached = <A>(spec: InvocationSpec<A>, detach: Detach): Effect.Effect<InvocationResult<A>> =>
  Effect.flatMap(
    Effect.option(Effect.currentSpan),
    (parent) =>
      startDetached(spec, detach, "hook", (handle, opened) =>
        Effect.flatMap(openRun(spec, Option.getOrUndefined(parent), handle), (run) => {
          opened(run)
          return Effect.asVoid(runInside({ ...spec, inflight: { current: undefined } }, run))
        })).pipe(Effect.as({ _tag: "Detached" } as const))
  )
