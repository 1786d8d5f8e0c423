/**
 * The AfterPlanning stage (seed 000 §4.2; C8–C10): runs exactly once per
 * phase on the final validated plan, before HITL, persistence and execution.
 * Copy-on-write and chained: each hook gets a private copy of the last valid
 * plan; its result is revalidated in full (the model-only normalizer does
 * not run). An ordinary hook's error, wrong type or invalid plan keeps the
 * last valid plan (`fail_open / continue / hook_error`) and never triggers
 * re-planning. The required hook — always last — fails closed with
 * `RequiredAfterPlanningError`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either } from "effect"
import type { AfterPlanningInfo, StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"
import { guarded, invoke, type Verdict } from "../runtime/internal/invoke.js"
import { participantsOf } from "./internal/participants.js"
import * as Json from "../domain/Json.js"
import { RequiredAfterPlanningError } from "../domain/PipelineError.js"
import * as PlanValidation from "../domain/PlanValidation.js"
import type { RoutingPlan } from "../domain/RoutingPlan.js"

/**
 * The stage service.
 *
 * @since 0.1.0
 */
export class AfterPlanning extends Context.Tag("effect-agent-pipeline/AfterPlanning")<
  AfterPlanning,
  AfterPlanning.Service
>() {}

/** @since 0.1.0 */
export declare namespace AfterPlanning {
  /** @since 0.1.0 */
  export interface Service {
    readonly hookCount: number
    readonly run: (
      request: StageRequest,
      plan: RoutingPlan,
      info: AfterPlanningInfo & { readonly validation: PlanValidation.ValidationContext }
    ) => Effect.Effect<RoutingPlan, RequiredAfterPlanningError>
  }
}

/** A private deep copy: a hook mutating its argument cannot corrupt the last valid plan. */
const copyPlan = (plan: RoutingPlan): RoutingPlan => ({
  ...plan,
  steps: plan.steps.map((step) => ({
    ...step,
    parameters: Json.clone(step.parameters),
    depends_on: [...step.depends_on],
    implicit_deps: [...step.implicit_deps],
    metadata: Json.clone(step.metadata)
  }))
})

/**
 * Builds the stage from validated hooks (see `PipelineHooks.layer`).
 *
 * @since 0.1.0
 */
export const make = (hooks: ReadonlyArray<Hook.Hook<never>>): AfterPlanning.Service => {
  const participants = participantsOf(hooks, "afterPlanning", "after_planning").map((p) => ({
    ...p,
    required: p.hook.required === true
  }))
  return {
    hookCount: participants.length,
    run: (request, plan, info) =>
      participants.length === 0 ? Effect.succeed(plan) : guarded((inflight) =>
        Effect.gen(function*() {
          let current = plan
          for (let sequence = 0; sequence < participants.length; sequence++) {
            const { handler, hook, required, spanName } = participants[sequence]!
            const policy = required ? "fail_closed" : "fail_open"
            const onError = required
              ? ({ policy: "fail_closed", action: "terminate", reason: "hook_error" } as const)
              : ({ policy: "fail_open", action: "continue", reason: "hook_error" } as const)
            const argument = copyPlan(current)
            const result = yield* invoke<RoutingPlan>({
              stage: "after_planning",
              hookName: hook.name,
              spanName,
              sequence,
              phase: info.phase,
              recorder: request.recorder,
              inflight,
              policy,
              call: () =>
                handler(request.context, argument, { phase: info.phase, priorStepIds: info.priorStepIds }),
              accept: (value): Verdict<RoutingPlan> => {
                if (value === undefined || value === null || typeof value !== "object") {
                  return { _tag: "Reject", error: "afterPlanning must return a routing plan", decision: onError }
                }
                const validated = PlanValidation.validate(value, info.validation)
                if (Either.isLeft(validated)) {
                  return { _tag: "Reject", error: validated.left.message, decision: onError, cause: validated.left }
                }
                return {
                  _tag: "Accept",
                  value: validated.right,
                  decision: required ? { policy: "fail_closed", action: "continue", reason: "accepted" } : undefined
                }
              }
            })
            if (result._tag === "Accepted") {
              current = result.value
            } else if (required) {
              // The hook's own failure stays reachable as the cause (seed 000 §7.4).
              return yield* Effect.fail(
                new RequiredAfterPlanningError({
                  hookName: hook.name,
                  phase: info.phase,
                  detail: result.error,
                  ...(result.cause === undefined ? {} : { cause: result.cause })
                })
              )
            } else {
              yield* Effect.logWarning(`after_planning hook ${hook.name} rejected; keeping the last valid plan`).pipe(
                Effect.annotateLogs({ error: result.error.slice(0, 400) })
              )
            }
          }
          return current
        })
      )
  }
}
