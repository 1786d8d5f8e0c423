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
import { failureDecision } from "../runtime/internal/failures.js"
import { undeclaredContribution, type Verdict } from "../runtime/internal/invoke.js"
import * as Stage from "../runtime/internal/stage.js"
import type { Participant } from "../runtime/Subscription.js"
import type { StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"

/**
 * The stage service.
 *
 * @since 0.1.0
 * @category services
 */
export class AfterSynthesis extends Context.Tag("effect-agent-pipeline/AfterSynthesis")<
  AfterSynthesis,
  AfterSynthesis.Service
>() {}

/**
 * The types of the {@link AfterSynthesis} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace AfterSynthesis {
  /**
   * The AfterSynthesis stage: how many hooks it runs, and a run over the draft response.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly hookCount: number
    readonly run: (request: StageRequest, draft: string) => Effect.Effect<string, HookFailed>
  }
}

/**
 * An AfterSynthesis handler, its requirements provided.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = NonNullable<Hook.Hook<never>["afterSynthesis"]>

/** One request's pass: the response so far, the next run's input. */
interface State {
  readonly context: StageRequest["context"]
  current: string
}

/** Chained strings: a run's string becomes the next one's input; a rewrite needs `response_rewrite`. */
const rule: Stage.Rule<Parameters<Handler>, State, string, never> = {
  point: "after_synthesis",
  args: (state) => [state.context, state.current],
  accept: (value, state, { failure, grant }): Verdict<string> => {
    if (typeof value !== "string") {
      return {
        _tag: "Reject",
        error: `afterSynthesis must return a string, got ${value === null ? "null" : typeof value}`,
        decision: failureDecision(failure, "hook_error"),
        reason: "wrong_shape"
      }
    }
    const changed = value !== state.current
    if (changed && !allows(grant, "response_rewrite")) {
      return undeclaredContribution(failure, "rewrote the response", "response_rewrite")
    }
    return { _tag: "Accept", value, contribution: changed ? value : undefined }
  },
  accepted: (value, state) => {
    state.current = value
    return false
  }
}

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (participants: ReadonlyArray<Participant<Handler>>): AfterSynthesis.Service => {
  const stage = Stage.make(rule, participants)
  return {
    hookCount: participants.length,
    run: (request, draft) =>
      participants.length === 0
        ? Effect.succeed(draft)
        : Effect.map(stage(Stage.whole, { context: request.context, current: draft }), (state) => state.current)
  }
}
