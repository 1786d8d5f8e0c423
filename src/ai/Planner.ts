/**
 * Planning over `@effect/ai`: the language model returns a plan as
 * structured output decoded by the `RoutingPlan` Schema, then the model-only
 * normalizer and the validation gauntlet run. Anything else is a typed
 * `PlanningError` — nothing of that phase executes.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@effect/ai"
import { Effect, Either } from "effect"
import { PlanningError } from "../domain/PipelineError.js"
import * as PlanValidation from "../domain/PlanValidation.js"
import { RoutingPlan } from "../domain/RoutingPlan.js"

/**
 * Asks the model for a plan and validates it.
 *
 * @since 0.1.0
 */
export const plan = Effect.fn("Planner.plan", { captureStackTrace: false })(function*(
  model: LanguageModel.Service,
  prompt: string,
  phase: number,
  validation: PlanValidation.ValidationContext
) {
  const response = yield* model.generateObject({ prompt, schema: RoutingPlan, objectName: "routing_plan" }).pipe(
    Effect.mapError((error) =>
      new PlanningError({
        reason: error._tag === "MalformedOutput" ? "invalid_plan" : "model_failed",
        phase,
        detail: error.message.slice(0, 400),
        cause: error
      })
    )
  )
  const normalized = PlanValidation.normalizeTerminal(
    PlanValidation.normalizeModelPlan(response.value, validation.priorStepIds)
  )
  const checked = PlanValidation.checkPlan(normalized, validation)
  if (Either.isLeft(checked)) {
    return yield* Effect.fail(
      new PlanningError({ reason: "invalid_plan", phase, detail: checked.left.message, cause: checked.left })
    )
  }
  return checked.right
})
