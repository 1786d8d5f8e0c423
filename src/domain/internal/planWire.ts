/**
 * The wire form of a plan: how a model is asked to write it (structured
 * output), and the conversions to and from a plan's input form.
 *
 * OpenAI's strict JSON Schema mode (what `@effect/ai-openai` sends for
 * `generateObject`) accepts only schemas where every object lists all its
 * properties in `required` and says `additionalProperties: false`. A plan's
 * own form is neither: most fields are optional, and a step's `parameters` is
 * an open JSON object whose keys depend on the tool. So in the wire form:
 *
 * - every field is required; an absent value is `null` (`reasoning`,
 *   `metadata_json`);
 * - the open objects travel as JSON text: `parameters_json`
 *   (`"{\"city\":\"Paris\"}"`, `"{}"` for none) and `metadata_json`;
 * - `reasoning` comes first, so a model writes its reasoning before the steps.
 *
 * `RoutingPlan.PlanFromWire` decodes it into a `RoutingPlan`;
 * `PlanOutput.PlanOutput` is the Schema the model seam asks for.
 */
import { Effect, Either, JSONSchema, ParseResult, Schema, type SchemaAST as AST } from "effect"
import { formatPath, type JsonObject, maxDepth } from "../Json.js"
import { deeperThan } from "./jsonDepth.js"

// A step's open objects sit at level 4 of a plan (plan, steps, step, the
// object): the plan as a whole nests at most `Json.maxDepth` levels, in
// either form.
const OBJECT_DEPTH = maxDepth - 3

const STEP_ID_PATTERN = "^[A-Za-z0-9_-]{1,128}$"

/** A step id: the pattern is sent to the model, `RoutingPlan` checks it on decoding. */
const stepIdWire = (description: string) =>
  Schema.String.annotations({ jsonSchema: { type: "string", pattern: STEP_ID_PATTERN, description } })

/**
 * One step as the model writes it: every field required, the open objects as
 * JSON text.
 *
 * @since 0.1.0
 */
export const PlanStepWire = Schema.Struct({
  step_id: stepIdWire("A unique id for this step (letters, digits, '_' and '-')"),
  namespace: Schema.String.annotations({ description: "The tool's namespace, exactly as listed" }),
  agent: Schema.String.annotations({ description: "The tool's agent, exactly as listed" }),
  capability: Schema.String.annotations({ description: "The tool's capability (its name), exactly as listed" }),
  parameters_json: Schema.String.annotations({
    description:
      "The tool's arguments as the text of one JSON object, e.g. {\"city\":\"Paris\"}; {} when it takes none. " +
      "A value may be a reference {{steps.<step_id>.output}} to an earlier step's output"
  }),
  depends_on: Schema.Array(stepIdWire("A step id")).annotations({
    description: "Ids of steps of this plan that must finish before this one"
  }),
  implicit_deps: Schema.Array(stepIdWire("A step id")).annotations({
    description: "Ids of steps of earlier phases whose output this step uses"
  }),
  metadata_json: Schema.NullOr(Schema.String).annotations({
    description: "Extra data about the step as the text of a JSON object, or null"
  })
})
/** @since 0.1.0 */
export type PlanStepWire = typeof PlanStepWire.Type

/**
 * The plan as the model writes it.
 *
 * @since 0.1.0
 */
export const PlanWire = Schema.Struct({
  reasoning: Schema.NullOr(Schema.String).annotations({ description: "Why these steps answer the request, or null" }),
  steps: Schema.Array(PlanStepWire).annotations({ description: "The tool calls to make; [] when no tool is needed" }),
  terminal: Schema.Boolean.annotations({
    description: "true to answer after these steps; false to plan another phase that sees their results"
  })
})
/** @since 0.1.0 */
export type PlanWire = typeof PlanWire.Type

/**
 * A step's input form (what `RoutingPlan`'s Schema decodes).
 *
 * @since 0.1.0
 */
export interface StepInput {
  readonly step_id: string
  readonly namespace: string
  readonly agent: string
  readonly capability: string
  readonly parameters?: JsonObject | undefined
  readonly depends_on?: ReadonlyArray<string> | undefined
  readonly implicit_deps?: ReadonlyArray<string> | undefined
  readonly metadata?: JsonObject | undefined
}

/**
 * A plan's input form (what `RoutingPlan`'s Schema decodes).
 *
 * @since 0.1.0
 */
export interface PlanInput {
  readonly steps: ReadonlyArray<StepInput>
  readonly terminal?: boolean | undefined
  readonly reasoning?: string | undefined
}

/** JSON text → a JSON object, or an issue that says which field and why. */
const objectFromText = (
  text: string,
  field: string,
  ast: AST.AST
): Either.Either<JsonObject, ParseResult.ParseIssue> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return ParseResult.fail(
      new ParseResult.Type(
        ast,
        text,
        `${field} is not JSON text: ${error instanceof Error ? error.message : String(error)}`
      )
    )
  }
  // Parsed JSON is JSON; what is left to check is its shape and its depth.
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return ParseResult.fail(new ParseResult.Type(ast, text, `${field} must be the text of a JSON object`))
  }
  const deep = deeperThan(parsed, OBJECT_DEPTH)
  return deep === undefined
    ? ParseResult.succeed(parsed as JsonObject)
    : ParseResult.fail(
      new ParseResult.Type(
        ast,
        text,
        `${field} nests too deep: a plan nests at most ${maxDepth} levels, so a step's object at most ${OBJECT_DEPTH} (at ${
          formatPath(field, deep)
        })`
      )
    )
}

const isEmptyObject = (value: JsonObject | undefined): boolean => value === undefined || Object.keys(value).length === 0

const stepFromWire = (
  step: PlanStepWire,
  index: number,
  ast: AST.AST
): Effect.Effect<StepInput, ParseResult.ParseIssue> =>
  Effect.gen(function*() {
    const at = <A>(field: string, result: Either.Either<A, ParseResult.ParseIssue>) =>
      Either.mapLeft(result, (issue) => new ParseResult.Pointer(["steps", index, field], step, issue))
    const parameters = yield* at("parameters_json", objectFromText(step.parameters_json, "parameters_json", ast))
    const metadata = step.metadata_json === null
      ? undefined
      : yield* at("metadata_json", objectFromText(step.metadata_json, "metadata_json", ast))
    const out: StepInput = {
      step_id: step.step_id,
      namespace: step.namespace,
      agent: step.agent,
      capability: step.capability,
      parameters,
      depends_on: step.depends_on,
      implicit_deps: step.implicit_deps,
      ...(metadata === undefined ? {} : { metadata })
    }
    return out
  })

const stepToWire = (step: StepInput): PlanStepWire => ({
  step_id: step.step_id,
  namespace: step.namespace,
  agent: step.agent,
  capability: step.capability,
  parameters_json: JSON.stringify(step.parameters ?? {}),
  depends_on: step.depends_on ?? [],
  implicit_deps: step.implicit_deps ?? [],
  metadata_json: isEmptyObject(step.metadata) ? null : JSON.stringify(step.metadata)
})

/**
 * A wire plan as a plan's input form: the JSON text fields parsed (an issue
 * points at the step field that is not a JSON object's text).
 *
 * @since 0.1.0
 */
export const toInput = (wire: PlanWire, ast: AST.AST): Effect.Effect<PlanInput, ParseResult.ParseIssue> =>
  Effect.map(
    Effect.forEach(wire.steps, (step, index) => stepFromWire(step, index, ast)),
    (steps) => ({ steps, terminal: wire.terminal, ...(wire.reasoning === null ? {} : { reasoning: wire.reasoning }) })
  )

/**
 * A plan's input form as a wire plan: every field written.
 *
 * @since 0.1.0
 */
export const fromInput = (plan: PlanInput): PlanWire => ({
  reasoning: plan.reasoning ?? null,
  steps: plan.steps.map(stepToWire),
  terminal: plan.terminal ?? true
})

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Whether a value uses a wire-only feature: a `null` reasoning or a step with
 * `parameters_json` / `metadata_json`. Anything else is read as a plain plan.
 *
 * @since 0.1.0
 */
export const isWireShaped = (u: unknown): boolean =>
  isRecord(u) &&
  (u.reasoning === null ||
    (Array.isArray(u.steps) &&
      u.steps.some((step) => isRecord(step) && ("parameters_json" in step || "metadata_json" in step))))

/**
 * The strict JSON Schema of {@link PlanWire}, inline (no `$ref`): the schema a
 * provider sends for structured output.
 *
 * @since 0.1.0
 */
export const wireJsonSchema: JSONSchema.JsonSchema7 = JSONSchema.fromAST(PlanWire.ast, {
  definitions: {},
  topLevelReferenceStrategy: "skip"
})
