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
import { Effect, Either, ParseResult, Schema } from "effect"
import { deeperThan } from "./internal/jsonDepth.js"
import { keepLatest } from "./internal/liveShapes.js"
import { fromInput, isWireShaped, PlanWire, toInput } from "./internal/planWire.js"
import { formatPath, Json, JsonObject, maxDepth } from "./Json.js"

/**
 * Step id: letters, digits, `_` and `-` only, so references parse unambiguously.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StepId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,128}$/, { message: () => "step_id must match [A-Za-z0-9_-]{1,128}" })
)

/**
 * One tool call in a plan.
 *
 * @since 0.1.0
 * @category schemas
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
/**
 * The type of {@link RoutingStep}.
 *
 * @since 0.1.0
 * @category models
 */
export type RoutingStep = typeof RoutingStep.Type

/**
 * A phase's plan. `terminal: true` (the default) means "synthesize after
 * these steps"; `false` asks for another planning phase that sees these
 * results.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RoutingPlan = Schema.Struct({
  steps: Schema.Array(RoutingStep),
  terminal: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  reasoning: Schema.optional(Schema.String)
}).annotations({ identifier: "RoutingPlan" })
/**
 * The type of {@link RoutingPlan}.
 *
 * @since 0.1.0
 * @category models
 */
export type RoutingPlan = typeof RoutingPlan.Type

/**
 * The wire form of a plan: what a model emits, what is persisted, and what a
 * hook may return (defaults may be omitted).
 *
 * @since 0.1.0
 * @category models
 */
export type RoutingPlanInput = typeof RoutingPlan.Encoded

/**
 * A plan's wire form (`PlanWire`: what a model writes for structured output,
 * every field required, the open objects as JSON text) ⇄ `RoutingPlan`:
 * decoding parses the JSON text fields, then validates as `RoutingPlan`
 * does; encoding writes every field.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { RoutingPlan } from "effect-agent-pipeline"
 *
 * const wire = Schema.encodeSync(RoutingPlan.PlanFromWire)({ steps: [], terminal: true })
 * // { reasoning: null, steps: [], terminal: true }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlanFromWire: Schema.Schema<RoutingPlan, typeof PlanWire.Encoded> = Schema.transformOrFail(
  PlanWire,
  RoutingPlan,
  {
    strict: true,
    decode: (wire, _options, ast) => toInput(wire, ast),
    encode: (plan) => ParseResult.succeed(fromInput(plan))
  }
).annotations({ identifier: "PlanFromWire" })

/**
 * The canonical reference pattern (global).
 *
 * @since 0.1.0
 * @category utils
 */
export const referencePattern = (): RegExp => /\{\{steps\.([A-Za-z0-9_-]{1,128})\.output((?:\.[A-Za-z0-9_-]+)*)\}\}/g

/**
 * Every step id that a step's parameters reference.
 *
 * @since 0.1.0
 * @category utils
 */
export const referencedStepIds = (parameters: JsonObject): ReadonlySet<string> => {
  const out = new Set<string>()
  // Its own stack, not recursion: checkPlan is public, and a plan built by
  // hand has no depth limit.
  const pending: Array<Json> = Object.values(parameters)
  while (pending.length > 0) {
    const value = pending.pop()!
    if (typeof value === "string") {
      if (value.includes("{{")) { for (const m of value.matchAll(referencePattern())) out.add(m[1]!) }
    } else if (Array.isArray(value)) {
      for (const v of value) pending.push(v)
    } else if (value !== null && typeof value === "object") {
      for (const v of Object.values(value)) pending.push(v)
    }
  }
  return out
}

/**
 * Encodes a plan to its JSON wire form.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = Schema.encodeSync(RoutingPlan)

/**
 * Builds a plan from its wire form, failing with a `ParseError`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknown = Schema.decodeUnknown(RoutingPlan)

// ---------------------------------------------------------------------------
// Decoding a model's plan text
// ---------------------------------------------------------------------------

const STEP_ID = /^[A-Za-z0-9_-]{1,128}$/

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const nonEmpty = (u: unknown): u is string => typeof u === "string" && u.length > 0

const stepIds = (u: unknown): ReadonlyArray<string> | undefined => {
  if (u === undefined) return []
  if (!Array.isArray(u)) return undefined
  for (const id of u) if (typeof id !== "string" || !STEP_ID.test(id)) return undefined
  return u.slice()
}

// Parsed JSON is JSON: an object in it is a JSON object, no walk needed.
const parsedObject = (u: unknown): JsonObject | undefined => {
  if (u === undefined) return {}
  return isRecord(u) ? (u as JsonObject) : undefined
}

/**
 * A step exactly as the Schema decodes it, or `undefined` when only the
 * Schema can say what is wrong. The value is parsed JSON (see {@link decodeParsed}).
 */
const directStep = (u: unknown): RoutingStep | undefined => {
  if (!isRecord(u)) return undefined
  const { agent, capability, namespace, step_id } = u
  if (typeof step_id !== "string" || !STEP_ID.test(step_id)) return undefined
  if (!nonEmpty(namespace) || !nonEmpty(agent) || !nonEmpty(capability)) return undefined
  const parameters = parsedObject(u.parameters)
  const depends_on = stepIds(u.depends_on)
  const implicit_deps = stepIds(u.implicit_deps)
  const metadata = parsedObject(u.metadata)
  if (parameters === undefined || depends_on === undefined || implicit_deps === undefined || metadata === undefined) {
    return undefined
  }
  // The Schema's output: its fields in its order, excess keys dropped.
  return { step_id, namespace, agent, capability, parameters, depends_on, implicit_deps, metadata }
}

/** A plan exactly as the Schema decodes it, or `undefined` (see {@link directStep}). */
const directPlan = (u: unknown): RoutingPlan | undefined => {
  if (!isRecord(u) || !Array.isArray(u.steps)) return undefined
  const terminal = u.terminal === undefined ? true : u.terminal
  if (typeof terminal !== "boolean") return undefined
  if (u.reasoning !== undefined && typeof u.reasoning !== "string") return undefined
  const steps: Array<RoutingStep> = []
  for (const raw of u.steps) {
    const step = directStep(raw)
    if (step === undefined) return undefined
    steps.push(step)
  }
  return "reasoning" in u && typeof u.reasoning === "string"
    ? { steps, terminal, reasoning: u.reasoning }
    : { steps, terminal }
}

const decodeTextBySchema = Schema.decodeEither(Schema.parseJson(RoutingPlan))
const decodeParsedBySchema = Schema.decodeUnknownEither(RoutingPlan)

/**
 * A plan nested deeper than {@link Json.maxDepth}: said without handing it
 * to the Schema (whose error would print it, recursively).
 */
const tooDeep = (path: ReadonlyArray<string | number>, actual: unknown): ParseResult.ParseError =>
  new ParseResult.ParseError({
    issue: new ParseResult.Type(
      RoutingPlan.ast,
      actual,
      `the plan nests deeper than ${maxDepth} levels (at ${formatPath("plan", path)})`
    )
  })

/**
 * Decodes a plan from a parsed JSON value — what `JSON.parse` returns, or a
 * copy `Json.snapshot` made: plain data, nested at most
 * {@link Json.maxDepth} levels (deeper fails with a one-line error,
 * without the Schema) — exactly as the `RoutingPlan` Schema does (keys a
 * plan does not have are dropped). A well-formed plan is built directly.
 *
 * @example
 * ```ts
 * import { RoutingPlan } from "effect-agent-pipeline"
 *
 * RoutingPlan.decodeParsed(JSON.parse('{"steps":[]}')) // Right({ steps: [], terminal: true })
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeParsed = (value: Json): Either.Either<RoutingPlan, ParseResult.ParseError> => {
  const deep = deeperThan(value, maxDepth)
  if (deep !== undefined) return Either.left(tooDeep(deep, value))
  const plan = directPlan(value)
  return plan === undefined ? decodeParsedBySchema(value) : Either.right(plan)
}

const decodeWireBySchema = Schema.decodeUnknownEither(PlanFromWire)

/**
 * Decodes a plan from JSON text (a model's structured output): exactly the
 * `RoutingPlan` Schema's result and errors. A well-formed plan — every
 * field of its type, as models return them — is built directly, without a
 * pass through the Schema interpreter (a few µs and ~15 KB of garbage per
 * plan); anything else goes through the Schema, which reports what is wrong.
 * A plan in the wire form (`PlanWire`, what strict structured output
 * returns) is decoded by {@link PlanFromWire}. A plan nested deeper than
 * {@link Json.maxDepth} (256) levels — its parameters included — fails
 * with a one-line error naming where, whatever its depth.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RoutingPlan } from "effect-agent-pipeline"
 *
 * const plan = Effect.runSync(RoutingPlan.decodeText('{"steps":[]}'))
 * // { steps: [], terminal: true }
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeText = (text: string): Effect.Effect<RoutingPlan, ParseResult.ParseError> => {
  const decoded = decodeTextEither(text)
  return Either.isRight(decoded) ? Effect.succeed(decoded.right) : Effect.fail(decoded.left)
}

/**
 * {@link decodeText}, answered synchronously.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { RoutingPlan } from "effect-agent-pipeline"
 *
 * Either.isLeft(RoutingPlan.decodeTextEither("not json")) // true
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeTextEither = (text: string): Either.Either<RoutingPlan, ParseResult.ParseError> => {
  let parsed: unknown
  try {
    parsed = keepLatest("parsedPlan", JSON.parse(text))
  } catch {
    return decodeTextBySchema(text)
  }
  // Nesting is bounded before any Schema (or error formatter) sees the value.
  const deep = deeperThan(parsed, maxDepth)
  if (deep !== undefined) return Either.left(tooDeep(deep, text))
  if (isWireShaped(parsed)) return decodeWireBySchema(parsed)
  const plan = directPlan(parsed)
  return plan === undefined ? decodeTextBySchema(text) : Either.right(plan)
}
