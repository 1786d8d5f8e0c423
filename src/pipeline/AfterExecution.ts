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
import { guarded, invoke } from "../runtime/internal/invoke.js"
import { participantsOf } from "./internal/participants.js"

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
    readonly run: (request: StageRequest, results: ExecutionResults) => Effect.Effect<void>
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
 * Builds the stage from validated hooks (see `PipelineHooks.layer`).
 *
 * @since 0.1.0
 */
export const make = (hooks: ReadonlyArray<Hook.Hook<never>>): AfterExecution.Service => {
  const participants = participantsOf(hooks, "afterExecution", "after_execution")
  return {
    hookCount: participants.length,
    run: (request, results) =>
      participants.length === 0 ? Effect.void : guarded((inflight) =>
        Effect.gen(function*() {
          // Observe-only: every hook sees the same frozen copy.
          const view = deepFreeze(structuredClone(results))
          for (let sequence = 0; sequence < participants.length; sequence++) {
            const { handler, hook, spanName } = participants[sequence]!
            yield* invoke<void>({
              stage: "after_execution",
              hookName: hook.name,
              spanName,
              sequence,
              recorder: request.recorder,
              inflight,
              policy: "fail_open",
              call: () => handler(request.context, view),
              accept: () => ({ _tag: "Accept", value: undefined })
            })
          }
        })
      )
  }
}
