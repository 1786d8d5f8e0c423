/**
 * The AfterSynthesis stage (seed 000 §4.4, C12): hooks chain strings — the
 * output of one is the input of the next. A failing hook (or one returning
 * something other than a string) keeps the previous string. On the streaming
 * path this runs after the tokens were sent: the result becomes the final
 * response, the model's raw draft is kept separately.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type { HookFailed } from "../domain/PipelineError.js"
import { allows } from "../runtime/Capability.js"
import {
  dependencyFailed,
  failedClosed,
  guarded,
  type Inflight,
  type InvocationSpec,
  invoke,
  syncOnly,
  undeclaredContribution,
  type Verdict
} from "../runtime/internal/invoke.js"
import { failureDecision } from "../runtime/internal/run.js"
import { skipped } from "../runtime/internal/skip.js"
import type { Participant } from "../runtime/Subscription.js"
import type { StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"

/**
 * The stage service.
 *
 * @since 0.1.0
 */
export class AfterSynthesis extends Context.Tag("effect-agent-pipeline/AfterSynthesis")<
  AfterSynthesis,
  AfterSynthesis.Service
>() {}

/** @since 0.1.0 */
export declare namespace AfterSynthesis {
  /** @since 0.1.0 */
  export interface Service {
    readonly hookCount: number
    readonly run: (request: StageRequest, draft: string) => Effect.Effect<string, HookFailed>
  }
}

/**
 * An AfterSynthesis handler, its requirements provided.
 *
 * @since 0.1.0
 */
export type Handler = NonNullable<Hook.Hook<never>["afterSynthesis"]>

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`).
 *
 * @since 0.1.0
 */
export const make = (participants: ReadonlyArray<Participant<Handler>>): AfterSynthesis.Service => {
  // Defined once per stage, not per request: a generator created per call
  // loses its optimized code whenever a full GC finds none in flight.
  const body = Effect.fnUntraced(function*(request: StageRequest, draft: string, inflight: Inflight) {
    let current = draft
    const completed: Array<boolean> = []
    for (let sequence = 0; sequence < participants.length; sequence++) {
      const participant = participants[sequence]!
      const { grant, handler, id: hookName, plain } = participant
      const onError = failureDecision(participant.failure, "hook_error")
      const input = current
      const spec: InvocationSpec<string> = {
        point: "after_synthesis",
        hookName,
        spanName: participant.spanName,
        metricLabels: participant.metricLabels,
        sequence,
        recorder: request.recorder,
        inflight,
        failure: participant.failure,
        execution: participant.execution,
        limit: participant.limit,
        call: () => handler(request.context, input),
        plain: plain === undefined ? undefined : () => plain(request.context, input),
        accept: (value): Verdict<string> => {
          if (typeof value !== "string") {
            return {
              _tag: "Reject",
              error: `afterSynthesis must return a string, got ${value === null ? "null" : typeof value}`,
              decision: onError,
              reason: "wrong_shape"
            }
          }
          const changed = value !== input
          if (changed && !allows(grant, "response_rewrite")) {
            return undeclaredContribution(participant.failure, "rewrote the response", "response_rewrite")
          }
          return { _tag: "Accept", value, contribution: changed ? value : undefined }
        }
      }
      const skip = skipped(participant, participants, completed, spec, dependencyFailed)
      if (skip !== undefined) {
        yield* skip
        continue
      }
      const result = yield* invoke(spec)
      completed[sequence] = result._tag !== "Rejected"
      if (result._tag === "Accepted") {
        current = result.value
      } else if (result._tag === "Rejected" && participant.failure === "fail_closed") {
        return yield* Effect.fail(failedClosed(spec, result))
      }
    }
    return current
  })
  // Sync-only points run without an exit hook while spans are not collected.
  const sync = syncOnly(participants)
  return {
    hookCount: participants.length,
    run: (request, draft) =>
      participants.length === 0 ? Effect.succeed(draft) : guarded((inflight) => body(request, draft, inflight), sync)
  }
}
