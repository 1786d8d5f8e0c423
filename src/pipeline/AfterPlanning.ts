/**
 * The AfterPlanning stage (seed 000 §4.2; C8–C10): runs exactly once per
 * phase on the final validated plan, before HITL, persistence and execution.
 * Copy-on-write and chained: each hook gets a private copy of the last valid
 * plan; its result is revalidated in full (the model-only normalizer does
 * not run) unless it is exactly the plan it was handed. An ordinary hook's
 * error, wrong type or invalid plan keeps the last valid plan
 * (`fail_open / continue / hook_error`) and never triggers re-planning.
 * The required hook (`required: true`, the only boundary: seed 000 §7.4) —
 * always last — fails closed with `RequiredAfterPlanningError`; an ordinary
 * hook declared `failure: "fail_closed"` stops the request with `HookFailed`
 * like any fail-closed stage hook.
 *
 * On a HITL resume only the required hook runs again (`runRequired`), on
 * the stored plan the human approved: whatever the checkpoint's seal says,
 * the boundary is checked once more before anything executes (its rule may
 * have changed since the suspension). It must accept that plan as it is: a
 * rejection, or a plan different from the approved one, is
 * `RequiredAfterPlanningError` — what would run is not what was approved.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either } from "effect"
import * as Json from "../domain/Json.js"
import { type HookFailed, RequiredAfterPlanningError } from "../domain/PipelineError.js"
import * as PlanValidation from "../domain/PlanValidation.js"
import type { RoutingPlan } from "../domain/RoutingPlan.js"
import { allows } from "../runtime/Capability.js"
import { failureDecision } from "../runtime/internal/failures.js"
import { undeclaredContribution, type Verdict } from "../runtime/internal/invoke.js"
import * as Stage from "../runtime/internal/stage.js"
import type { Participant } from "../runtime/Subscription.js"
import type { AfterPlanningInfo, StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"

/**
 * The stage service.
 *
 * @since 0.1.0
 * @category services
 */
export class AfterPlanning extends Context.Tag("effect-agent-pipeline/AfterPlanning")<
  AfterPlanning,
  AfterPlanning.Service
>() {}

/**
 * The types of the {@link AfterPlanning} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace AfterPlanning {
  /**
   * The AfterPlanning stage: how many hooks it runs, a run over a plan, and a run of the required hook alone.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly hookCount: number
    readonly run: (
      request: StageRequest,
      plan: RoutingPlan,
      info: AfterPlanningInfo & { readonly validation: PlanValidation.ValidationContext }
    ) => Effect.Effect<RoutingPlan, RequiredAfterPlanningError | HookFailed>
    /**
     * Runs only the required hook (if one is registered) on an approved
     * plan — a HITL resume (DESIGN §7). Its dependencies ran when the plan
     * was made, so they count as completed. Recorded like any after-planning
     * run (`fail_closed / continue / accepted`). A rejection, or a plan
     * other than `plan`, fails with `RequiredAfterPlanningError`; with no
     * required hook, `plan` is returned as is.
     */
    readonly runRequired: (
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
 * An AfterPlanning handler, its requirements provided.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = NonNullable<Hook.Hook<never>["afterPlanning"]>

const sameIds = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((id, i) => id === b[i])

/** Whether a hook's plan is the plan it was given (a change is a contribution). */
const samePlan = (a: RoutingPlan, b: RoutingPlan): boolean =>
  a === b || (
    a.terminal === b.terminal && a.reasoning === b.reasoning && a.steps.length === b.steps.length &&
    a.steps.every((s, i) => {
      const t = b.steps[i]!
      return s.step_id === t.step_id && s.namespace === t.namespace && s.agent === t.agent &&
        s.capability === t.capability && sameIds(s.depends_on, t.depends_on) &&
        sameIds(s.implicit_deps, t.implicit_deps) && Json.equals(s.parameters, t.parameters) &&
        Json.equals(s.metadata, t.metadata)
    })
  )

const isPlain = (u: object): u is { readonly [key: string]: unknown } => {
  const proto: unknown = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const isEnumerable = Object.prototype.propertyIsEnumerable

/**
 * Whether a hook returned exactly the plan it was handed: plain objects and
 * arrays with the same enumerable keys at every level and `Object.is`
 * leaves. Deliberately stricter than `samePlan`: anything validation could
 * judge differently (a class instance, a hole, a hidden or extra key, an
 * omitted default, -0) counts as a change and takes the full path. `last`
 * is always a validated plan (the planner's, or one this stage accepted),
 * so a plan identical to it would revalidate to itself unchanged.
 */
const identical = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!identical(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false
  const keys = Object.keys(b)
  if (Object.keys(a).length !== keys.length) return false
  for (const key of keys) {
    if (!isEnumerable.call(a, key) || !identical(a[key], b[key])) return false
  }
  return true
}

/** {@link identical}, where a value that throws when read is not identical. */
const isIdentical = (value: unknown, last: RoutingPlan): boolean => {
  try {
    return identical(value, last)
  } catch {
    return false
  }
}

/** What the stage is told about the phase it runs in. */
type Info = AfterPlanningInfo & { readonly validation: PlanValidation.ValidationContext }

/** One request's pass: the last valid plan, and whether it is one a human approved (a resume). */
interface State {
  readonly context: StageRequest["context"]
  readonly info: Info
  readonly approved: boolean
  current: RoutingPlan
}

/**
 * The stage's rule: copy-on-write and chained; `requiredId` names the
 * required hook, whose acceptance is recorded as the boundary's verdict and
 * whose rejection (or unmet dependency) is `RequiredAfterPlanningError`.
 */
const ruleFor = (
  requiredId: string | undefined
): Stage.Rule<Parameters<Handler>, State, RoutingPlan, RequiredAfterPlanningError> => {
  const accepted = (value: RoutingPlan, changed: boolean, hookName: string): Verdict<RoutingPlan> => ({
    _tag: "Accept",
    value,
    decision: hookName === requiredId ? { policy: "fail_closed", action: "continue", reason: "accepted" } : undefined,
    contribution: changed ? value : undefined
  })
  return {
    point: "after_planning",
    // Each hook gets its private copy of the last valid plan.
    args: (
      { context, current, info }
    ) => [context, copyPlan(current), { phase: info.phase, priorStepIds: info.priorStepIds }],
    accept: (value, { approved, current: last, info }, { failure, grant, id }): Verdict<RoutingPlan> => {
      // The common case — the plan handed back as it was given — needs no
      // decoding or revalidation; it is recorded exactly as an unchanged
      // revalidated plan is below (no contribution). It goes on as `last`,
      // not the copy the hook may still hold. A hostile value (a Proxy
      // whose traps throw) is simply not identical: validation below reads
      // it once, safely.
      if (isIdentical(value, last)) return accepted(last, false, id)
      const onError = failureDecision(failure, "hook_error")
      if (value === undefined || value === null || typeof value !== "object") {
        return {
          _tag: "Reject",
          error: "afterPlanning must return a routing plan",
          decision: onError,
          reason: "wrong_shape"
        }
      }
      const validated = PlanValidation.validate(value, info.validation)
      if (Either.isLeft(validated)) {
        return { _tag: "Reject", error: validated.left.message, decision: onError, cause: validated.left }
      }
      const changed = !samePlan(validated.right, last)
      if (changed && approved) {
        // Not what the human approved: the boundary may only accept it as it is.
        return {
          _tag: "Reject",
          error: "changed the approved plan: a resume runs only the plan the human approved",
          decision: onError
        }
      }
      if (changed && !allows(grant, "plan_rewrite")) {
        return undeclaredContribution(failure, "changed the plan", "plan_rewrite")
      }
      return accepted(validated.right, changed, id)
    },
    accepted: (value, state) => {
      state.current = value
      return false
    },
    rejected: (result, { info }, { failure, id }) =>
      id === requiredId
        // The hook's own failure stays reachable as the cause (seed 000 §7.4).
        ? Effect.fail(
          new RequiredAfterPlanningError({
            hookName: id,
            phase: info.phase,
            detail: result.error,
            ...(result.cause === undefined ? {} : { cause: result.cause })
          })
        )
        : failure === "fail_closed"
        ? undefined
        : Effect.logWarning(`after_planning hook ${id} rejected; keeping the last valid plan`).pipe(
          Effect.annotateLogs({ error: result.error.slice(0, 400) })
        ),
    // The required hook could not run: a hook it depends on did not complete.
    unmet: ({ id }, detail, { info }) =>
      id === requiredId ? new RequiredAfterPlanningError({ hookName: id, phase: info.phase, detail }) : undefined
  }
}

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`).
 * `requiredId` names the required hook (marked `required: true`), if any;
 * registration made sure it sorts last.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  participants: ReadonlyArray<Participant<Handler>>,
  requiredId?: string | undefined
): AfterPlanning.Service => {
  const stage = Stage.make(ruleFor(requiredId), participants)
  const requiredAt = requiredId === undefined ? -1 : participants.findIndex((p) => p.id === requiredId)
  const pass = (request: StageRequest, plan: RoutingPlan, info: Info, only: number | undefined) =>
    Effect.map(
      stage(
        { phase: info.phase, only },
        { context: request.context, info, approved: only !== undefined, current: plan }
      ),
      (state) => state.current
    )
  return {
    hookCount: participants.length,
    run: (request, plan, info) =>
      participants.length === 0 ? Effect.succeed(plan) : pass(request, plan, info, undefined),
    runRequired: (request, plan, info) =>
      requiredAt < 0
        ? Effect.succeed(plan)
        : pass(request, plan, info, requiredAt).pipe(
          // Only the required hook ran, and it fails closed with its own
          // error: a `HookFailed` cannot come out of it.
          Effect.catchTag("HookFailed", (error) =>
            Effect.fail(
              new RequiredAfterPlanningError({
                hookName: error.hookName,
                phase: info.phase,
                detail: error.message,
                cause: error
              })
            ))
        )
  }
}
