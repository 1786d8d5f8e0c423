/**
 * One hook run, the shape every point shares (seed 000 §9, seed 001): open
 * the span `pipeline.hook.<point>.<name>`, call the handler with the effect
 * reporter in scope, apply the execution policy, validate the result inside
 * the span, and record the run (status, outcome, sequence, phase, operation,
 * timing, exact failure text, decision, effects, contribution hash).
 *
 * Typed failures, wrong shapes, refused values and deadline overruns become
 * a `Rejected` result for the point to handle by its failure policy.
 * Defects (a die or a synchronous throw) are panics: recorded as
 * `propagate_panic`, then re-raised unchanged. Interruption is recorded and
 * propagates. A detached run (`fireAndRecord`, `background`) is recorded as
 * `backgrounded` at once and completed by a late update when it ends.
 */
import { Cause, Clock, Duration, Effect, Exit, FiberId, Option, type Tracer } from "effect"
import type {
  DecisionPolicy,
  HookDecision,
  HookEffect,
  HookInvocation,
  HookRunStatus
} from "../../domain/ExecutionRecord.js"
import type { HookPoint } from "../../domain/HookPoint.js"
import type { Operation } from "../../domain/Operation.js"
import type { HookFailureReason } from "../../domain/PipelineError.js"
import { currentInvocation } from "../HookEffects.js"
import { type ExecutionPolicy, type FailurePolicy, nameOf } from "../Policy.js"
import type { InvocationHandle, RequestRecorder } from "../RequestRecorder.js"
import { contributionHash } from "./hash.js"

/** A trace event added to the run's span before it ends. */
export interface SpanEvent {
  readonly name: string
  readonly attributes: Readonly<Record<string, unknown>>
}

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

/** The rejected case of {@link InvocationResult}. */
export type Rejected<A> = Extract<InvocationResult<A>, { readonly _tag: "Rejected" }>

/** Where an operation hook ran. */
export interface OperationCoordinates {
  readonly operation: Operation
  readonly callId: string
  readonly stepId?: string | undefined
}

/**
 * Starts a detached run: `fireAndRecord` at once, `background` through the
 * bounded pool. `cancelled` records a run that will not finish: interrupted
 * (running or queued) at shutdown, or refused because shutdown began.
 */
export type Detach = (
  policy: ExecutionPolicy,
  run: Effect.Effect<void>,
  cancelled: (reason: string) => Effect.Effect<void>
) => Effect.Effect<void>

export interface InvocationSpec<A> {
  readonly point: HookPoint
  readonly hookName: string
  readonly spanName: string
  readonly sequence: number
  readonly phase?: number | undefined
  readonly operation?: OperationCoordinates | undefined
  readonly recorder: RequestRecorder
  readonly failure: FailurePolicy
  readonly execution: ExecutionPolicy
  /** Calls the handler. May throw (a panic) or return a non-Effect (wrong shape). */
  readonly call: () => unknown
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
export const guarded = <A, E>(body: (inflight: Inflight) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    const inflight: Inflight = { current: undefined }
    return Effect.onExit(body(inflight), (exit) => {
      const finish = inflight.current
      return finish === undefined ? Effect.void : finish(exit)
    })
  })

/** The exact text of a failure value. */
export const failureText = (error: unknown): string => {
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null) {
    const message = (error as { readonly message?: unknown }).message
    const tag = (error as { readonly _tag?: unknown })._tag
    if (typeof message === "string" && message.length > 0) {
      return typeof tag === "string" && !message.startsWith(tag) ? `${tag}: ${message}` : message
    }
    if (typeof tag === "string") return tag
    try {
      return JSON.stringify(error)
    } catch {
      return String(error)
    }
  }
  return String(error)
}

/** The text of a panic's cause. */
export const panicText = (cause: Cause.Cause<unknown>): string => {
  const defect = Cause.dieOption(cause)
  return Option.isSome(defect) ? `panic: ${failureText(defect.value)}` : `panic: ${Cause.pretty(cause)}`
}

const WRONG_SHAPE = Symbol("wrongShape")
const TIMED_OUT = Symbol("timedOut")

/** The decision recorded when a hook fails (or overruns) under `policy`. */
export const failureDecision = (policy: DecisionPolicy, reason: "hook_error" | "timed_out"): HookDecision =>
  policy === "fail_open"
    ? { policy, action: "continue", reason }
    : { policy, action: "terminate", reason }

const outcomeOf = (status: HookRunStatus): HookInvocation["outcome"] => {
  switch (status) {
    case "completed":
      return "succeeded"
    case "started":
    case "backgrounded":
      return "pending"
    case "skipped":
      return "skipped"
    default:
      return "failed"
  }
}

/** What a finished run records. */
interface Ending {
  readonly status: HookRunStatus
  readonly error?: string | undefined
  readonly decision?: HookDecision | undefined
  readonly effects?: ReadonlyArray<HookEffect> | undefined
  readonly event?: SpanEvent | undefined
  readonly contribution?: unknown
  readonly attempts?: number | undefined
}

/** The parts of a record entry every run of this spec shares. */
const entryOf = (
  spec: Pick<InvocationSpec<unknown>, "hookName" | "point" | "sequence" | "phase" | "operation" | "execution">,
  status: HookRunStatus,
  startedAt: number,
  duration: number
): Omit<HookInvocation, "effects"> => {
  const entry: { -readonly [K in keyof Omit<HookInvocation, "effects">]: Omit<HookInvocation, "effects">[K] } = {
    name: spec.hookName,
    stage: spec.point,
    outcome: outcomeOf(status),
    status,
    sequence: spec.sequence,
    startedAt,
    duration
  }
  if (spec.phase !== undefined) entry.phase = spec.phase
  if (spec.operation !== undefined) {
    entry.operation = spec.operation.operation
    entry.callId = spec.operation.callId
    if (spec.operation.stepId !== undefined) entry.stepId = spec.operation.stepId
  }
  if (spec.execution._tag !== "Blocking") entry.execution = nameOf(spec.execution)
  return entry
}

/**
 * An open run: its span, its start, its record handle. {@link Run.finish}
 * ends the span and records the run exactly once.
 */
export interface Run {
  readonly span: Tracer.Span
  readonly handle: InvocationHandle
  readonly finish: (ending: Ending, exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
}

/** Opens a run: a span (under `parent` when given) and a record handle. */
export const openRun = (
  spec: Pick<
    InvocationSpec<unknown>,
    "hookName" | "point" | "spanName" | "sequence" | "phase" | "operation" | "execution" | "recorder"
  >,
  parent?: Tracer.AnySpan | undefined,
  handle: InvocationHandle = spec.recorder.startInvocation()
): Effect.Effect<Run> => {
  const attributes: Record<string, unknown> = {
    "pipeline.hook.name": spec.hookName,
    "pipeline.hook.stage": spec.point,
    "pipeline.hook.sequence": spec.sequence
  }
  if (spec.phase !== undefined) attributes["pipeline.phase"] = spec.phase
  if (spec.operation !== undefined) attributes["pipeline.operation"] = spec.operation.operation
  return Effect.flatMap(
    Effect.makeSpan(spec.spanName, parent === undefined ? { captureStackTrace: false, attributes } : {
      captureStackTrace: false,
      attributes,
      parent
    }),
    (span) =>
      Clock.clockWith((clock) => {
        const startedAt = clock.unsafeCurrentTimeMillis()
        const t0 = clock.unsafeCurrentTimeNanos()
        let finished = false
        return Effect.succeed<Run>({
          span,
          handle,
          finish: (ending, exit) =>
            Effect.suspend(() => {
              if (finished) return Effect.void
              finished = true
              const outcome = outcomeOf(ending.status)
              span.attribute("pipeline.hook.outcome", outcome)
              span.attribute("pipeline.hook.status", ending.status)
              const decision = ending.decision
              if (decision !== undefined) {
                span.attribute("pipeline.hook.decision.policy", decision.policy)
                span.attribute("pipeline.hook.decision.action", decision.action)
                span.attribute("pipeline.hook.decision.reason", decision.reason)
              }
              if (ending.error !== undefined) span.attribute("pipeline.hook.error", ending.error)
              if (ending.event !== undefined) {
                span.event(ending.event.name, clock.unsafeCurrentTimeNanos(), ending.event.attributes)
              }
              span.end(clock.unsafeCurrentTimeNanos(), exit)
              const entry: { -readonly [K in keyof Omit<HookInvocation, "effects">]: Omit<HookInvocation, "effects">[K] } =
                entryOf(spec, ending.status, startedAt, Number(clock.unsafeCurrentTimeNanos() - t0) / 1e6)
              if (ending.error !== undefined) entry.error = ending.error
              if (decision !== undefined) entry.decision = decision
              if (ending.attempts !== undefined) entry.attempts = ending.attempts
              if (ending.contribution !== undefined) entry.contributionHash = contributionHash(ending.contribution)
              return handle.complete(entry, ending.effects)
            })
        })
      })
  )
}

/**
 * Records a run that did not happen: `skipped`, because the hook is
 * disabled or a dependency of it did not complete at this point.
 */
export const recordSkipped = (
  spec: Pick<InvocationSpec<unknown>, "hookName" | "point" | "sequence" | "phase" | "operation" | "execution" | "recorder">,
  reason: "disabled" | "dependency_failed"
): Effect.Effect<void> =>
  Clock.clockWith((clock) =>
    spec.recorder.startInvocation().complete({
      ...entryOf(spec, "skipped", clock.unsafeCurrentTimeMillis(), 0),
      skipReason: reason
    })
  )

/**
 * How a handler call ended, before any recording. A panic is returned (not
 * raised) so the caller records it first; an interruption propagates.
 */
export type Attempt =
  | { readonly _tag: "Value"; readonly value: unknown }
  | { readonly _tag: "WrongShape" }
  | { readonly _tag: "TimedOut"; readonly error: string }
  | { readonly _tag: "Failed"; readonly error: unknown; readonly cause: Cause.Cause<unknown> }
  | { readonly _tag: "Panic"; readonly cause: Cause.Cause<unknown> }
  /** The handler interrupted itself (an outside interruption does not come back here). */
  | { readonly _tag: "Interrupted" }

const WRONG_SHAPE_ATTEMPT: Attempt = { _tag: "WrongShape" }
const INTERRUPTED_ATTEMPT: Attempt = { _tag: "Interrupted" }

/**
 * Calls a handler as a run of `spec`: inside the run's span, with the
 * effect reporter in scope (unless recording is off), under the policy's
 * deadline. Never fails: the caller decides what each ending means.
 */
export const attempt = (
  spec: Pick<InvocationSpec<unknown>, "execution" | "recorder">,
  run: Run,
  call: () => unknown
): Effect.Effect<Attempt> => {
  const handler = Effect.suspend(() => {
    const returned = call()
    // Handlers' requirements were provided at registration (PipelineHooks.layer).
    return Effect.isEffect(returned) ? (returned as Effect.Effect<unknown, unknown>) : Effect.succeed(WRONG_SHAPE)
  })
  const bounded = spec.execution._tag === "Deadline"
    ? Effect.map(Effect.timeoutOption(handler, spec.execution.timeout), Option.getOrElse(() => TIMED_OUT))
    : handler
  // With recording off the request already runs with reporting disabled.
  const scoped = spec.recorder.enabled ? Effect.locally(bounded, currentInvocation, run.handle) : bounded
  return Effect.matchCause(Effect.withParentSpan(scoped, run.span), {
    onSuccess: (value): Attempt =>
      value === WRONG_SHAPE
        ? WRONG_SHAPE_ATTEMPT
        : value === TIMED_OUT
        ? {
          _tag: "TimedOut",
          error: spec.execution._tag === "Deadline"
            ? `timed out after ${Duration.format(spec.execution.timeout)}`
            : "timed out"
        }
        : { _tag: "Value", value },
    onFailure: (cause): Attempt => {
      if (Cause.isInterruptedOnly(cause)) return INTERRUPTED_ATTEMPT
      const failure = Cause.failureOption(cause)
      // The handler's own error value: Effect may have wrapped it to carry the span.
      return Option.isSome(failure) && !Cause.isDie(cause)
        ? { _tag: "Failed", error: Cause.originalError(failure.value), cause }
        : { _tag: "Panic", cause }
    }
  })
}

/** Records a panic, then re-raises it as the defect it is (C13). */
export const propagatePanic = (run: Run, failure: FailurePolicy, cause: Cause.Cause<unknown>): Effect.Effect<never> =>
  Effect.zipRight(
    run.finish(
      { status: "failed", error: panicText(cause), decision: { policy: failure, action: "propagate_panic", reason: "panic" } },
      Exit.failCause(cause)
    ),
    // The original cause, unchanged; a typed failure mixed into it becomes a
    // defect too, so the panic stays out of the typed error channel.
    Effect.catchAll(Effect.failCause(cause), (mixed) => Effect.die(mixed))
  )

/** Records a handler's self-interruption, then interrupts. */
export const propagateInterruption = (run: Run): Effect.Effect<never> =>
  Effect.zipRight(run.finish({ status: "failed", error: "interrupted" }, Exit.interrupt(FiberId.none)), Effect.interrupt)

/** The run itself, inside an open run: call, validate, record. */
const runInside = <A>(spec: InvocationSpec<A>, run: Run): Effect.Effect<InvocationResult<A>> => {
  const rejected = (error: string, reason: HookFailureReason, cause?: unknown): Rejected<A> =>
    cause === undefined ? { _tag: "Rejected", error, reason } : { _tag: "Rejected", error, reason, cause }
  // If the fiber is interrupted inside the handler, the point's exit hook
  // (`guarded`) records through this slot.
  spec.inflight.current = (exit) => run.finish({ status: "failed", error: "interrupted" }, exit)
  return Effect.flatMap(attempt(spec, run, spec.call), (ended): Effect.Effect<InvocationResult<A>> => {
    spec.inflight.current = undefined
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
        const result = rejected(verdict.error, verdict.reason ?? "hook_failed", verdict.cause)
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
    }
  })
}

// Hot path: one span, at most one FiberRef scope and synchronous clock reads
// per run; everything else is plain code.
export const invoke = <A>(spec: InvocationSpec<A>): Effect.Effect<InvocationResult<A>> => {
  if (spec.detach !== undefined && (spec.execution._tag === "FireAndRecord" || spec.execution._tag === "Background")) {
    return detached(spec, spec.detach)
  }
  return Effect.flatMap(openRun(spec), (run) => runInside(spec, run))
}

/**
 * A detached run: recorded `backgrounded` now and handed to the runtime's
 * pool; its span (under the request's current span) covers the run itself,
 * and a late update records how it ended — interrupted when the agent shut
 * down before it finished. Its panic stays in its own fiber: recorded,
 * logged, never the request's.
 */
const detached = <A>(spec: InvocationSpec<A>, detach: Detach): Effect.Effect<InvocationResult<A>> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (parent) =>
    Clock.clockWith((clock) => {
      const handle = spec.recorder.startInvocation()
      const queuedAt = clock.unsafeCurrentTimeMillis()
      let run: Run | undefined
      const inflight: Inflight = { current: undefined }
      const body = Effect.flatMap(openRun(spec, Option.getOrUndefined(parent), handle), (opened) => {
        run = opened
        return runInside({ ...spec, inflight }, opened)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logWarning(`detached hook ${spec.hookName} panicked`, Cause.pretty(cause))
        ),
        Effect.asVoid
      )
      const cancelled = (reason: string) =>
        run !== undefined
          ? run.finish({ status: "failed", error: reason }, Exit.interrupt(FiberId.none))
          : handle.complete({ ...entryOf(spec, "failed", queuedAt, 0), error: reason })
      return handle.begin(entryOf(spec, "backgrounded", queuedAt, 0)).pipe(
        Effect.zipRight(detach(spec.execution, body, cancelled)),
        Effect.as({ _tag: "Detached" } as const)
      )
    }))
