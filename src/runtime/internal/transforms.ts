/**
 * Before and after transforms of an operation (seed 002): a point's
 * transforms chain its value in order, each getting the previous one's
 * result. A value of the wrong shape, or a rewrite the hook did not declare
 * the capability for, is a failure; a failing transform fails closed by
 * default (the operation stops with `HookFailed`), or fails open and the
 * chain goes on with the value it was given.
 */
import { Effect, Exit } from "effect"
import type { HookDecision } from "../../domain/ExecutionRecord.js"
import type { TransformPoint } from "../../domain/HookPoint.js"
import * as Json from "../../domain/Json.js"
import type { Call } from "../../domain/Operation.js"
import type { HookFailed } from "../../domain/PipelineError.js"
import { allows, rewriteCapability } from "../Capability.js"
import type { TransformValues } from "../OperationHooks.js"
import type { RequestRecorder } from "../RequestRecorder.js"
import type { Participant } from "../Subscription.js"
import { dependencyFailed, failedClosed } from "./invoke.js"
import type { AnyTransform, SpecOf } from "./participants.js"
import { attempt, failureText, openRun, propagateInterruption, propagatePanic, type Run, skipped } from "./run.js"

/** Does a transform's value have the point's shape? */
const validValue = (point: TransformPoint, value: unknown): string | undefined => {
  switch (point) {
    case "before_inference":
    case "after_inference":
    case "before_retrieval":
    case "before_memory_load":
    case "after_memory_store":
      return typeof value === "string" ? undefined : `${point} must return a string`
    case "before_tool":
      return typeof value === "object" && value !== null && !Array.isArray(value) && Json.isJson(value)
        ? undefined
        : "before_tool must return a JSON object of arguments"
    case "after_tool":
      return typeof value === "object" && value !== null &&
          (("output" in value && Json.isJson(value.output)) || ("error" in value && typeof value.error === "string"))
        ? undefined
        : "after_tool must return { output } (JSON) or { error } (a string)"
    case "after_retrieval":
      return Array.isArray(value) && value.every((d) => typeof d === "object" && d !== null && typeof d.id === "string" && typeof d.content === "string")
        ? undefined
        : "after_retrieval must return documents ({ id, content })"
    case "after_memory_load":
      return Array.isArray(value) && value.every((r) => typeof r === "object" && r !== null && typeof r.content === "string")
        ? undefined
        : "after_memory_load must return memory records ({ content })"
    case "before_memory_store":
      return typeof value === "object" && value !== null && typeof (value as { content?: unknown }).content === "string"
        ? undefined
        : "before_memory_store must return a memory record ({ content })"
  }
}

const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (Json.isJson(a) && Json.isJson(b) && Json.equals(a, b))

/**
 * Builds, once, the function that chains a point's transforms over a value
 * (`call` is a run of the operation the point rewrites for).
 */
export const makeTransform = (
  participants: { readonly transform: (point: TransformPoint) => ReadonlyArray<Participant<AnyTransform>> },
  specOf: SpecOf
) =>
<P extends TransformPoint>(
  point: P,
  call: Call,
  value: TransformValues[P],
  recorder: RequestRecorder
): Effect.Effect<TransformValues[P], HookFailed> => {
  const chain = participants.transform(point)
  if (chain.length === 0) return Effect.succeed(value)
  const capability = rewriteCapability[point]
  return Effect.suspend(() => {
    let current = value
    const completed: Array<boolean> = []
    const step = (i: number): Effect.Effect<TransformValues[P], HookFailed> => {
      if (i === chain.length) return Effect.succeed(current)
      const participant = chain[i]!
      const spec = specOf(participant, i, call, recorder)
      const skip = skipped(participant, chain, completed, spec, dependencyFailed)
      if (skip !== undefined) return Effect.zipRight(skip, step(i + 1))
      const input = current
      const failed = (
        status: "failed" | "timed_out",
        error: string,
        why: HookFailed["reason"],
        decisionReason: HookDecision["reason"],
        cause?: unknown,
        exit: Exit.Exit<unknown, unknown> = Exit.void
      ): Effect.Effect<TransformValues[P], HookFailed> => {
        completed[i] = false
        const decision: HookDecision = participant.failure === "fail_open"
          ? { policy: "fail_open", action: "continue", reason: decisionReason }
          : { policy: "fail_closed", action: "terminate", reason: decisionReason }
        const recorded = run.finish({ status, error, decision }, exit)
        return participant.failure === "fail_open"
          ? Effect.zipRight(recorded, step(i + 1))
          : Effect.zipRight(recorded, Effect.fail(failedClosed(spec, { reason: why, error, cause })))
      }
      let run: Run
      return Effect.flatMap(openRun(spec), (opened) => {
        run = opened
        return Effect.flatMap(
          attempt(spec, opened, () => participant.handler(call, input)),
          (ended): Effect.Effect<TransformValues[P], HookFailed> => {
            switch (ended._tag) {
              case "Value": {
                const invalid = validValue(point, ended.value)
                if (invalid !== undefined) return failed("failed", invalid, "wrong_shape", "hook_error")
                const next = ended.value as TransformValues[P]
                const changed = !sameValue(next, input)
                if (changed && capability !== undefined && !allows(participant.grant, capability)) {
                  return failed(
                    "failed",
                    `undeclared contribution: rewrote ${point} without the "${capability}" capability`,
                    "undeclared_contribution",
                    "undeclared_contribution"
                  )
                }
                completed[i] = true
                current = next
                return Effect.zipRight(
                  opened.finish(changed ? { status: "completed", contribution: next } : { status: "completed" }, Exit.void),
                  step(i + 1)
                )
              }
              case "WrongShape":
                return failed("failed", "hook handler did not return an Effect", "wrong_shape", "hook_error")
              case "TimedOut":
                return failed("timed_out", ended.error, "timed_out", "timed_out")
              case "Failed":
                return failed("failed", failureText(ended.error), "hook_failed", "hook_error", ended.error, Exit.failCause(ended.cause))
              case "Panic":
                return propagatePanic(opened, participant.failure, ended.cause)
              case "Interrupted":
                return propagateInterruption(opened)
            }
          }
        )
      })
    }
    return step(0)
  })
}
