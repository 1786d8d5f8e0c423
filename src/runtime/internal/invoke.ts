/**
 * One hook invocation, the shape every stage runner shares (seed 000 §9):
 * open the span `pipeline.hook.<stage>.<name>`, call the handler with the
 * effect reporter in scope, validate the result inside the span, record the
 * invocation (outcome, sequence, phase, timing, exact failure text,
 * decision, effects).
 *
 * Typed failures become a `failure` result for the stage to recover from.
 * Defects (a die or a synchronous throw) are panics: recorded as
 * `propagate_panic`, then re-raised unchanged. Interruption is recorded and
 * propagates.
 */
import { Cause, Clock, Effect, Exit, Option } from "effect"
import type { DecisionPolicy, HookDecision, HookEffect, HookStage } from "../../domain/ExecutionRecord.js"
import { currentInvocation } from "../HookEffects.js"
import type { RequestRecorder } from "../RequestRecorder.js"

/** A trace event added to the invocation's span before it ends. */
export interface SpanEvent {
  readonly name: string
  readonly attributes: Readonly<Record<string, unknown>>
}

/** What the stage's validation made of a returned value. */
export type Verdict<A> =
  | {
    readonly _tag: "Accept"
    readonly value: A
    readonly decision?: HookDecision | undefined
    readonly effects?: ReadonlyArray<HookEffect> | undefined
    readonly event?: SpanEvent | undefined
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
  }

/** What the stage gets back. */
export type InvocationResult<A> =
  | { readonly _tag: "Accepted"; readonly value: A }
  | {
    readonly _tag: "Rejected"
    readonly error: string
    readonly value?: A | undefined
    /** The hook's own failure (its typed error), or what its value failed on. */
    readonly cause?: unknown
  }

export interface InvocationSpec<A> {
  readonly stage: HookStage
  readonly hookName: string
  readonly spanName: string
  readonly sequence: number
  readonly phase?: number | undefined
  readonly recorder: RequestRecorder
  /** The boundary's policy: decides the decision recorded for a failure or panic. */
  readonly policy: DecisionPolicy
  /** Calls the handler. May throw (a panic) or return a non-Effect (wrong shape). */
  readonly call: () => unknown
  /** Validates a returned value (runs inside the span). */
  readonly accept: (value: unknown) => Verdict<A>
  /** The stage's slot for the invocation in flight (see {@link guarded}). */
  readonly inflight: Inflight
}

/** Finishes the invocation in flight when the stage's fiber is interrupted. */
export interface Inflight {
  current: ((exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>) | undefined
}

/**
 * Runs a stage's invocations with one exit hook for the whole stage (cheaper
 * than one per invocation): on interruption, the invocation in flight is
 * recorded as failed ("interrupted") and its span ends.
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

const panicText = (cause: Cause.Cause<unknown>): string => {
  const defect = Cause.dieOption(cause)
  return Option.isSome(defect) ? `panic: ${failureText(defect.value)}` : `panic: ${Cause.pretty(cause)}`
}

const WRONG_SHAPE = Symbol("wrongShape")

const failureDecision = (policy: DecisionPolicy): HookDecision =>
  policy === "fail_open"
    ? { policy, action: "continue", reason: "hook_error" }
    : { policy, action: "terminate", reason: "hook_error" }

const rejected = (error: string, cause?: unknown): InvocationResult<never> =>
  cause === undefined ? { _tag: "Rejected", error } : { _tag: "Rejected", error, cause }

// Hot path: one span, one FiberRef scope and synchronous clock reads per
// invocation; everything else is plain code.
export const invoke = <A>(spec: InvocationSpec<A>): Effect.Effect<InvocationResult<A>> => {
  const handle = spec.recorder.startInvocation()
  const attributes: Record<string, unknown> = {
    "pipeline.hook.name": spec.hookName,
    "pipeline.hook.stage": spec.stage,
    "pipeline.hook.sequence": spec.sequence
  }
  if (spec.phase !== undefined) attributes["pipeline.phase"] = spec.phase
  return Effect.flatMap(Effect.makeSpan(spec.spanName, { captureStackTrace: false, attributes }), (span) =>
    Clock.clockWith((clock) => {
      const startedAt = clock.unsafeCurrentTimeMillis()
      const t0 = clock.unsafeCurrentTimeNanos()
      const record = (
        outcome: "succeeded" | "failed",
        error: string | undefined,
        decision: HookDecision | undefined,
        effects: ReadonlyArray<HookEffect> | undefined,
        exit: Exit.Exit<unknown, unknown>,
        event?: SpanEvent
      ): Effect.Effect<void> => {
        spec.inflight.current = undefined
        if (event !== undefined) span.event(event.name, clock.unsafeCurrentTimeNanos(), event.attributes)
        span.attribute("pipeline.hook.outcome", outcome)
        if (decision !== undefined) {
          span.attribute("pipeline.hook.decision.policy", decision.policy)
          span.attribute("pipeline.hook.decision.action", decision.action)
          span.attribute("pipeline.hook.decision.reason", decision.reason)
        }
        if (error !== undefined) span.attribute("pipeline.hook.error", error)
        span.end(clock.unsafeCurrentTimeNanos(), exit)
        return handle.complete(
          {
            name: spec.hookName,
            stage: spec.stage,
            outcome,
            sequence: spec.sequence,
            ...(spec.phase === undefined ? {} : { phase: spec.phase }),
            startedAt,
            duration: Number(clock.unsafeCurrentTimeNanos() - t0) / 1e6,
            ...(error === undefined ? {} : { error }),
            ...(decision === undefined ? {} : { decision })
          },
          effects
        )
      }
      // If the fiber is interrupted inside the handler, failure handlers are
      // skipped: the stage's exit hook (`guarded`) records through this slot.
      spec.inflight.current = (exit) => record("failed", "interrupted", undefined, undefined, exit)
      const call = Effect.suspend(() => {
        const returned = spec.call()
        // Handlers' requirements were provided at registration (PipelineHooks.layer).
        return Effect.isEffect(returned)
          ? (returned as Effect.Effect<unknown, unknown>)
          : Effect.succeed(WRONG_SHAPE)
      })
      return Effect.matchCauseEffect(
        // With recording off the request already runs with reporting disabled.
        Effect.withParentSpan(spec.recorder.enabled ? Effect.locally(call, currentInvocation, handle) : call, span),
        {
          onSuccess: (value): Effect.Effect<InvocationResult<A>> => {
            if (value === WRONG_SHAPE) {
              const error = "hook handler did not return an Effect"
              return Effect.as(record("failed", error, failureDecision(spec.policy), undefined, Exit.void), rejected(error))
            }
            const verdict = spec.accept(value)
            if (verdict._tag === "Accept") {
              return Effect.as(
                record("succeeded", undefined, verdict.decision, verdict.effects, Exit.void, verdict.event),
                { _tag: "Accepted", value: verdict.value } as const
              )
            }
            return Effect.as(
              record("failed", verdict.error, verdict.decision, verdict.effects, Exit.fail(verdict.error), verdict.event),
              { _tag: "Rejected", error: verdict.error, value: verdict.value, cause: verdict.cause } as const
            )
          },
          onFailure: (cause): Effect.Effect<InvocationResult<A>, unknown> => {
            if (Cause.isInterruptedOnly(cause)) {
              // Self-interruption: record it now (an external interruption is
              // recorded by `guarded`).
              return Effect.zipRight(
                record("failed", "interrupted", undefined, undefined, Exit.failCause(cause)),
                Effect.failCause(cause)
              )
            }
            const failure = Cause.failureOption(cause)
            if (Option.isSome(failure) && !Cause.isDie(cause)) {
              const error = failureText(failure.value)
              return Effect.as(
                record("failed", error, failureDecision(spec.policy), undefined, Exit.failCause(cause)),
                rejected(error, failure.value)
              )
            }
            // A panic: record it, then re-raise the original cause unchanged.
            return Effect.zipRight(
              record(
                "failed",
                panicText(cause),
                { policy: spec.policy, action: "propagate_panic", reason: "panic" },
                undefined,
                Exit.failCause(cause)
              ),
              Effect.failCause(cause)
            )
          }
        }
      ).pipe(
        // The handler's typed failures were all turned into results above; what
        // can still escape is a defect or an interruption, which must propagate.
        Effect.catchAll((never) => Effect.die(never))
      )
    }))
}
