/**
 * Planning: the model returns a plan as structured output (through the
 * `Inference` seam, so inference hooks see the call), decoded by the
 * `RoutingPlan` Schema; then the model-only normalizer and the validation
 * gauntlet run. Anything else is a typed `PlanningError` — nothing of that
 * phase executes.
 *
 * @since 0.1.0
 */
import { Effect, Either } from "effect"
import { type HookDenied, type HookFailed, PlanningError } from "../domain/PipelineError.js"
import * as PlanValidation from "../domain/PlanValidation.js"
import type { RoutingPlan } from "../domain/RoutingPlan.js"
import { withSpan } from "../runtime/internal/spans.js"
import type { Inference, InferenceRequest } from "./Inference.js"

/**
 * Asks the model for a plan and validates it.
 *
 * @since 0.1.0
 * @category utils
 */
export const plan = (
  inference: Inference.Service,
  request: InferenceRequest,
  phase: number,
  validation: PlanValidation.ValidationContext
): Effect.Effect<RoutingPlan, PlanningError | HookDenied | HookFailed> =>
  withSpan(planUnspanned(inference, request, phase, validation), "Planner.plan", spanOptions)

const spanOptions = { captureStackTrace: false } as const

const planUnspanned = Effect.fnUntraced(function*(
  inference: Inference.Service,
  request: InferenceRequest,
  phase: number,
  validation: PlanValidation.ValidationContext
) {
  const decoded = yield* inference.plan(request)
  const normalized = PlanValidation.normalizeTerminal(
    PlanValidation.normalizeModelPlan(decoded, validation.priorStepIds)
  )
  const checked = PlanValidation.checkPlan(normalized, validation)
  if (Either.isLeft(checked)) {
    return yield* Effect.fail(
      new PlanningError({ reason: "invalid_plan", phase, detail: checked.left.message, cause: checked.left })
    )
  }
  return checked.right
})
