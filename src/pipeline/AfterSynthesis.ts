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
import type { StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"
import { guarded, invoke, type Verdict } from "../runtime/internal/invoke.js"
import { participantsOf } from "./internal/participants.js"

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
    readonly run: (request: StageRequest, draft: string) => Effect.Effect<string>
  }
}

/**
 * Builds the stage from validated hooks (see `PipelineHooks.layer`).
 *
 * @since 0.1.0
 */
export const make = (hooks: ReadonlyArray<Hook.Hook<never>>): AfterSynthesis.Service => {
  const participants = participantsOf(hooks, "afterSynthesis", "after_synthesis")
  return {
    hookCount: participants.length,
    run: (request, draft) =>
      participants.length === 0 ? Effect.succeed(draft) : guarded((inflight) =>
        Effect.gen(function*() {
          let current = draft
          for (let sequence = 0; sequence < participants.length; sequence++) {
            const { handler, hook, spanName } = participants[sequence]!
            const input = current
            const result = yield* invoke<string>({
              stage: "after_synthesis",
              hookName: hook.name,
              spanName,
              sequence,
              recorder: request.recorder,
              inflight,
              policy: "fail_open",
              call: () => handler(request.context, input),
              accept: (value): Verdict<string> =>
                typeof value === "string"
                  ? { _tag: "Accept", value }
                  : {
                    _tag: "Reject",
                    error: `afterSynthesis must return a string, got ${value === null ? "null" : typeof value}`,
                    decision: { policy: "fail_open", action: "continue", reason: "hook_error" }
                  }
            })
            if (result._tag === "Accepted") current = result.value
          }
          return current
        })
      )
  }
}
