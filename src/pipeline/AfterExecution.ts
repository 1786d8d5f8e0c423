/**
 * The AfterExecution stage (seed 000 §4.3, C11): runs once after all phases'
 * tools and before synthesis. Observe-only — hooks get the combined results
 * and cannot change them; failures fail open.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type { ExecutionResults, StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"
import type { HookFailed } from "../domain/PipelineError.js"
import { type Detach, dependencyFailed, failedClosed, guarded, type InvocationSpec, invoke } from "../runtime/internal/invoke.js"
import { skipped } from "../runtime/internal/run.js"
import type { Participant } from "../runtime/Subscription.js"

/**
 * The stage service.
 *
 * @since 0.1.0
 */
export class AfterExecution extends Context.Tag("effect-agent-pipeline/AfterExecution")<
  AfterExecution,
  AfterExecution.Service
>() {}

/** @since 0.1.0 */
export declare namespace AfterExecution {
  /** @since 0.1.0 */
  export interface Service {
    readonly hookCount: number
    readonly run: (request: StageRequest, results: ExecutionResults) => Effect.Effect<void, HookFailed>
  }
}

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/**
 * An AfterExecution handler, its requirements provided.
 *
 * @since 0.1.0
 */
export type Handler = NonNullable<Hook.Hook<never>["afterExecution"]>

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`);
 * `detach` starts the runs of `fireAndRecord` / `background` hooks.
 *
 * @since 0.1.0
 */
export const make = (participants: ReadonlyArray<Participant<Handler>>, detach: Detach): AfterExecution.Service => ({
  hookCount: participants.length,
  run: (request, results) =>
    participants.length === 0 ? Effect.void : guarded((inflight) =>
      Effect.gen(function*() {
        // Observe-only: every hook sees the same frozen copy.
        const view = deepFreeze(structuredClone(results))
        const completed: Array<boolean> = []
        for (let sequence = 0; sequence < participants.length; sequence++) {
          const participant = participants[sequence]!
          const { handler, id: hookName } = participant
          const spec: InvocationSpec<void> = {
            point: "after_execution",
            hookName,
            spanName: participant.spanName,
            sequence,
            recorder: request.recorder,
            inflight,
            failure: participant.failure,
            execution: participant.execution,
            detach,
            call: () => handler(request.context, view),
            accept: () => ({ _tag: "Accept", value: undefined })
          }
          const skip = skipped(participant, participants, completed, spec, dependencyFailed)
          if (skip !== undefined) {
            yield* skip
            continue
          }
          const result = yield* invoke(spec)
          completed[sequence] = result._tag !== "Rejected"
          if (result._tag === "Rejected" && participant.failure === "fail_closed") {
            return yield* Effect.fail(failedClosed(spec, result))
          }
        }
      })
    )
})
