/**
 * The plan-validation gauntlet (seed 000 §4.2, C8–C10): Schema decoding,
 * unique step ids, dependency references, acyclicity, known tools, output
 * references and the `implicit_deps` rules. It runs on every planner output
 * and again after every AfterPlanning mutation.
 *
 * @since 0.1.0
 */
import { Either, ParseResult, Schema } from "effect"
import { walk } from "./internal/jsonSnapshot.js"
import { formatPath, type Json, maxDepth } from "./Json.js"
import { decodeParsed, referencedStepIds, RoutingPlan, type RoutingStep } from "./RoutingPlan.js"

/**
 * The most JSON text a plan given as a value (a hook's, or the one
 * `executePlanWithSynthesis` runs) may hold: 16 MiB. The walk that copies
 * it stops there — a plan is a list of tool calls, never a payload.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPlanBytes = 16 * 1_048_576

/**
 * Why a plan is invalid.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlanValidationReason = Schema.Literal(
  "decode",
  "duplicate_step_id",
  "unknown_dependency",
  "cycle",
  "unknown_tool",
  "unresolved_reference",
  "reference_needs_depends_on",
  "reference_needs_implicit_dep",
  "implicit_dep_missing",
  "implicit_dep_unreferenced",
  "implicit_dep_same_phase"
)
/**
 * One of the {@link PlanValidationReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type PlanValidationReason = typeof PlanValidationReason.Type

/**
 * A plan failed validation. `detail` is bounded (diagnostics must not carry
 * whole payloads).
 *
 * @since 0.1.0
 * @category errors
 */
export class PlanValidationError extends Schema.TaggedError<PlanValidationError>(
  "effect-agent-pipeline/PlanValidationError"
)("PlanValidationError", {
  reason: PlanValidationReason,
  stepId: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return `invalid plan (${this.reason})${this.stepId === undefined ? "" : ` at step ${this.stepId}`}: ${this.detail}`
  }
}

/**
 * What validation needs to know beyond the plan.
 *
 * @since 0.1.0
 * @category models
 */
export interface ValidationContext {
  /** Whether namespace / agent / capability names a registered tool. */
  readonly hasTool: (namespace: string, agent: string, capability: string) => boolean
  /** Step ids of earlier phases. */
  readonly priorStepIds: ReadonlySet<string>
}

const maxDetail = 400

const bounded = (text: string): string => (text.length > maxDetail ? `${text.slice(0, maxDetail)}…` : text)

const fail = (reason: PlanValidationReason, detail: string, stepId?: string) =>
  Either.left(
    new PlanValidationError(
      stepId === undefined ? { reason, detail: bounded(detail) } : { reason, detail: bounded(detail), stepId }
    )
  )

const decodePlan = Schema.decodeUnknownEither(RoutingPlan, { onExcessProperty: "ignore" })

/**
 * The first step found on a dependency cycle. Depth-first with its own
 * stack: a chain of thousands of steps (a model can write one) must not
 * overflow the JavaScript stack.
 */
const findCycle = (steps: ReadonlyArray<RoutingStep>): string | undefined => {
  const deps = new Map(steps.map((s) => [s.step_id, s.depends_on]))
  // 1: on the current path; 2: done (no cycle through it).
  const state = new Map<string, 1 | 2>()
  const stack: Array<{ readonly id: string; next: number }> = []
  for (const step of steps) {
    if (state.has(step.step_id)) continue
    state.set(step.step_id, 1)
    stack.push({ id: step.step_id, next: 0 })
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!
      const next = (deps.get(top.id) ?? [])[top.next++]
      if (next === undefined) {
        state.set(top.id, 2)
        stack.pop()
        continue
      }
      const seen = state.get(next)
      if (seen === 1) return next
      if (seen === undefined) {
        state.set(next, 1)
        stack.push({ id: next, next: 0 })
      }
    }
  }
  return undefined
}

/**
 * Checks an already decoded plan's graph and references.
 *
 * @since 0.1.0
 * @category utils
 */
export const checkPlan = (
  plan: RoutingPlan,
  context: ValidationContext
): Either.Either<RoutingPlan, PlanValidationError> => {
  const ids = new Set<string>()
  for (const step of plan.steps) {
    if (ids.has(step.step_id) || context.priorStepIds.has(step.step_id)) {
      return fail("duplicate_step_id", `step id ${step.step_id} is used twice`, step.step_id)
    }
    ids.add(step.step_id)
  }
  for (const step of plan.steps) {
    for (const dep of step.depends_on) {
      if (!ids.has(dep)) {
        return fail(
          "unknown_dependency",
          context.priorStepIds.has(dep)
            ? `depends_on ${dep} names an earlier phase's step; use implicit_deps`
            : `depends_on ${dep} is not a step of this plan`,
          step.step_id
        )
      }
    }
  }
  const cycle = findCycle(plan.steps)
  if (cycle !== undefined) return fail("cycle", `dependency cycle through ${cycle}`, cycle)
  for (const step of plan.steps) {
    if (!context.hasTool(step.namespace, step.agent, step.capability)) {
      return fail(
        "unknown_tool",
        `no registered tool ${step.namespace}/${step.agent}/${step.capability}`,
        step.step_id
      )
    }
    const referenced = referencedStepIds(step.parameters)
    const dependsOn = new Set(step.depends_on)
    const implicit = new Set(step.implicit_deps)
    for (const ref of referenced) {
      if (ids.has(ref)) {
        if (!dependsOn.has(ref)) {
          return fail(
            "reference_needs_depends_on",
            `references same-phase step ${ref} without depends_on`,
            step.step_id
          )
        }
      } else if (context.priorStepIds.has(ref)) {
        if (!implicit.has(ref)) {
          return fail(
            "reference_needs_implicit_dep",
            `references earlier step ${ref} without implicit_deps`,
            step.step_id
          )
        }
      } else {
        return fail("unresolved_reference", `references unknown step ${ref}`, step.step_id)
      }
    }
    for (const dep of step.implicit_deps) {
      if (ids.has(dep)) {
        return fail(
          "implicit_dep_same_phase",
          `implicit_deps ${dep} is a same-phase step; use depends_on`,
          step.step_id
        )
      }
      if (!context.priorStepIds.has(dep)) {
        return fail("implicit_dep_missing", `implicit_deps ${dep} is not an earlier phase's step`, step.step_id)
      }
      if (!referenced.has(dep)) {
        return fail("implicit_dep_unreferenced", `implicit_deps ${dep} is not referenced by parameters`, step.step_id)
      }
    }
  }
  return Either.right(plan)
}

/**
 * Terminal-synthesis normalization: a plan without steps can only be
 * terminal.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizeTerminal = (plan: RoutingPlan): RoutingPlan =>
  plan.steps.length === 0 && !plan.terminal ? { ...plan, terminal: true } : plan

/**
 * The whole gauntlet on an unknown value (a model output, a hook's return,
 * the plan `executePlanWithSynthesis` is given).
 *
 * The value is read once, into a copy, before anything judges it: every
 * property is read exactly once (a getter or Proxy cannot show validation
 * one plan and execution another; one that throws is a `decode` failure,
 * never a defect), nesting deeper than `Json.maxDepth` (256) levels or
 * JSON text over {@link maxPlanBytes} is refused without recursing, and
 * the accepted plan shares nothing with what the caller still holds.
 *
 * @since 0.1.0
 * @category utils
 */
export const validate = (
  raw: unknown,
  context: ValidationContext
): Either.Either<RoutingPlan, PlanValidationError> => {
  const copied = walk(raw, {
    maxDepth,
    maxBytes: maxPlanBytes,
    undefinedProperties: "keep",
    lenient: true
  })
  if (copied._tag === "Refused") {
    const { kind, path, reason } = copied.refusal
    const where = formatPath("plan", path)
    return fail(
      "decode",
      kind === "too_deep"
        ? `the plan nests deeper than ${maxDepth} levels (at ${where})`
        : kind === "too_large"
        ? `the plan is over ${maxPlanBytes} bytes of JSON`
        : `the plan could not be read (at ${where}: ${reason})`
    )
  }
  // Plain JSON (what hooks return) is built directly; anything else — an
  // undefined field, a function in the parameters — gets the Schema's word.
  const decoded = copied.json ? decodeParsed(copied.value as Json) : decodePlan(copied.value)
  if (Either.isLeft(decoded)) return fail("decode", decodeDetail(decoded.left))
  return checkPlan(normalizeTerminal(decoded.right), context)
}

/**
 * A decode failure in one line that leads with where and why
 * (`plan.steps[0].parameters.n: a bigint is not a JSON value`): the
 * Schema's tree would spend the bounded detail on its own structure.
 */
const decodeDetail = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = issues[0]
  if (first === undefined) return error.message
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""
  return `${formatPath("plan", first.path)}: ${first.message.replace(/\s+/g, " ")}${more}`
}

/**
 * The model-only normalizer: adds the `depends_on` / `implicit_deps` that a
 * model's output references imply, and drops `implicit_deps` it does not
 * use. Hooks never get this: they must supply exact dependencies.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizeModelPlan = (plan: RoutingPlan, priorStepIds: ReadonlySet<string>): RoutingPlan => {
  const ids = new Set(plan.steps.map((s) => s.step_id))
  return {
    ...plan,
    steps: plan.steps.map((step) => {
      const refs = referencedStepIds(step.parameters)
      const dependsOn = new Set(step.depends_on)
      const implicit: Array<string> = []
      for (const ref of refs) {
        if (ids.has(ref) && ref !== step.step_id) dependsOn.add(ref)
        else if (priorStepIds.has(ref)) implicit.push(ref)
      }
      return { ...step, depends_on: [...dependsOn], implicit_deps: implicit }
    })
  }
}
