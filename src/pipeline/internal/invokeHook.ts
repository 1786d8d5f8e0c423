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
import type { DecisionPolicy, HookDecision, HookEffect, HookStage } from "../../record/ExecutionRecord.js"
import { currentInvocation } from "../../record/HookEffects.js"
import type { RequestRecorder } from "../../record/RequestRecorder.js"

/** What the stage's validation made of a returned value. */
export type Verdict<A> =
  | {
    readonly _tag: "Accept"
    readonly value: A
    readonly decision?: HookDecision | undefined
    readonly effects?: ReadonlyArray<HookEffect> | undefined
  }
  | {
    readonly _tag: "Reject"
    readonly error: string
    readonly decision: HookDecision
    readonly value?: A | undefined
    readonly effects?: ReadonlyArray<HookEffect> | undefined
  }

/** What the stage gets back. */
export type InvocationResult<A> =
  | { readonly _tag: "Accepted"; readonly value: A }
  | { readonly _tag: "Rejected"; readonly error: string; readonly value?: A | undefined }

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
}

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

export const invoke = <A>(spec: InvocationSpec<A>): Effect.Effect<InvocationResult<A>> => {
  const handle = spec.recorder.startInvocation()
  const reporter = spec.recorder.enabled ? handle : "disabled"
  return Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const t0 = yield* Clock.currentTimeNanos
    const record = (
      outcome: "succeeded" | "failed",
      error: string | undefined,
      decision: HookDecision | undefined,
      effects: ReadonlyArray<HookEffect> | undefined
    ) =>
      Effect.flatMap(Clock.currentTimeNanos, (t1) => {
        const attributes: Record<string, unknown> = { "pipeline.hook.outcome": outcome }
        if (decision !== undefined) {
          attributes["pipeline.hook.decision.policy"] = decision.policy
          attributes["pipeline.hook.decision.action"] = decision.action
          attributes["pipeline.hook.decision.reason"] = decision.reason
        }
        if (error !== undefined) attributes["pipeline.hook.error"] = error
        return Effect.zipRight(
          Effect.annotateCurrentSpan(attributes),
          handle.complete(
            {
              name: spec.hookName,
              stage: spec.stage,
              outcome,
              sequence: spec.sequence,
              ...(spec.phase === undefined ? {} : { phase: spec.phase }),
              startedAt,
              duration: Number(t1 - t0) / 1e6,
              ...(error === undefined ? {} : { error }),
              ...(decision === undefined ? {} : { decision })
            },
            effects
          )
        )
      })

    const exit = yield* Effect.exit(
      Effect.locally(
        Effect.suspend(() => {
          const returned = spec.call()
          // Handlers' requirements were provided at registration (PipelineHooks.layer).
          return Effect.isEffect(returned)
            ? (returned as Effect.Effect<unknown, unknown>)
            : Effect.succeed(WRONG_SHAPE)
        }),
        currentInvocation,
        reporter
      )
    )

    if (Exit.isSuccess(exit)) {
      if (exit.value === WRONG_SHAPE) {
        const error = "hook handler did not return an Effect"
        yield* record("failed", error, failureDecision(spec.policy), undefined)
        return { _tag: "Rejected", error } as const
      }
      const verdict = spec.accept(exit.value)
      if (verdict._tag === "Accept") {
        yield* record("succeeded", undefined, verdict.decision, verdict.effects)
        return { _tag: "Accepted", value: verdict.value } as const
      }
      yield* record("failed", verdict.error, verdict.decision, verdict.effects)
      return { _tag: "Rejected", error: verdict.error, value: verdict.value } as const
    }

    const cause = exit.cause
    if (Cause.isInterruptedOnly(cause)) {
      yield* record("failed", "interrupted", undefined, undefined)
      return yield* Effect.failCause(cause)
    }
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && !Cause.isDie(cause)) {
      const error = failureText(failure.value)
      yield* record("failed", error, failureDecision(spec.policy), undefined)
      return { _tag: "Rejected", error } as const
    }
    yield* record("failed", panicText(cause), { policy: spec.policy, action: "propagate_panic", reason: "panic" }, undefined)
    return yield* Effect.failCause(cause)
  }).pipe(
    Effect.withSpan(spec.spanName, {
      attributes: {
        "pipeline.hook.name": spec.hookName,
        "pipeline.hook.stage": spec.stage,
        "pipeline.hook.sequence": spec.sequence,
        ...(spec.phase === undefined ? {} : { "pipeline.phase": spec.phase })
      }
    }),
    // The handler's typed failures were all turned into results above; what
    // can still escape is a defect or an interruption, which must propagate.
    Effect.catchAll((never) => Effect.die(never))
  )
}
