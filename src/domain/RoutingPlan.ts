/**
 * The plan a planner produces and AfterPlanning hooks may rewrite: steps that
 * name a registered tool by namespace / agent / capability, with parameters,
 * same-phase `depends_on` and prior-phase `implicit_deps`.
 *
 * Parameters may reference another step's output with a canonical reference
 * string `{{steps.<step_id>.output}}` (optionally followed by a field path,
 * `{{steps.s1.output.price}}`). A value that is exactly one reference is
 * replaced by the referenced JSON value; a reference inside a longer string is
 * replaced by its JSON text.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Json, JsonObject } from "./Json.js"

/**
 * Step id: letters, digits, `_` and `-` only, so references parse unambiguously.
 *
 * @since 0.1.0
 */
export const StepId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,128}$/, { message: () => "step_id must match [A-Za-z0-9_-]{1,128}" })
)

/**
 * One tool call in a plan.
 *
 * @since 0.1.0
 */
export const RoutingStep = Schema.Struct({
  step_id: StepId,
  namespace: Schema.NonEmptyString,
  agent: Schema.NonEmptyString,
  capability: Schema.NonEmptyString,
  parameters: Schema.optionalWith(JsonObject, { default: () => ({}) }),
  depends_on: Schema.optionalWith(Schema.Array(StepId), { default: () => [] }),
  implicit_deps: Schema.optionalWith(Schema.Array(StepId), { default: () => [] }),
  metadata: Schema.optionalWith(JsonObject, { default: () => ({}) })
}).annotations({ identifier: "RoutingStep" })
/** @since 0.1.0 */
export type RoutingStep = typeof RoutingStep.Type

/**
 * A phase's plan. `terminal: true` (the default) means "synthesize after
 * these steps"; `false` asks for another planning phase that sees these
 * results.
 *
 * @since 0.1.0
 */
export const RoutingPlan = Schema.Struct({
  steps: Schema.Array(RoutingStep),
  terminal: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  reasoning: Schema.optional(Schema.String)
}).annotations({ identifier: "RoutingPlan" })
/** @since 0.1.0 */
export type RoutingPlan = typeof RoutingPlan.Type

/**
 * The wire form of a plan: what a model emits, what is persisted, and what a
 * hook may return (defaults may be omitted).
 *
 * @since 0.1.0
 */
export type RoutingPlanInput = typeof RoutingPlan.Encoded

/**
 * The canonical reference pattern (global).
 *
 * @since 0.1.0
 */
export const referencePattern = (): RegExp => /\{\{steps\.([A-Za-z0-9_-]{1,128})\.output((?:\.[A-Za-z0-9_-]+)*)\}\}/g

/**
 * Every step id that a step's parameters reference.
 *
 * @since 0.1.0
 */
export const referencedStepIds = (parameters: JsonObject): ReadonlySet<string> => {
  const out = new Set<string>()
  const visit = (value: Json): void => {
    if (typeof value === "string") {
      if (value.includes("{{")) for (const m of value.matchAll(referencePattern())) out.add(m[1]!)
    } else if (Array.isArray(value)) {
      for (const v of value) visit(v)
    } else if (value !== null && typeof value === "object") {
      for (const v of Object.values(value)) visit(v)
    }
  }
  for (const v of Object.values(parameters)) visit(v)
  return out
}

/**
 * Encodes a plan to its JSON wire form.
 *
 * @since 0.1.0
 */
export const encode = Schema.encodeSync(RoutingPlan)

/**
 * Builds a plan from its wire form, failing with a `ParseError`.
 *
 * @since 0.1.0
 */
export const decodeUnknown = Schema.decodeUnknown(RoutingPlan)
