/**
 * The plan as a model is asked to write it (structured output), and how it
 * becomes a {@link RoutingPlan}.
 *
 * OpenAI's strict JSON Schema mode (what `@effect/ai-openai` sends for
 * `generateObject`) constrains decoding to the schema, and it accepts only
 * schemas where every object lists all its properties in `required` and says
 * `additionalProperties: false`. `RoutingPlan` is neither: most fields are
 * optional, and a step's `parameters` is an open JSON object whose keys
 * depend on the tool. So the model is asked for the {@link PlanWire} form:
 *
 * - every field is required; an absent value is `null` (`reasoning`,
 *   `metadata_json`);
 * - the open objects travel as JSON text: `parameters_json`
 *   (`"{\"city\":\"Paris\"}"`, `"{}"` for none) and `metadata_json`;
 * - `reasoning` comes first, so a model writes its reasoning before the steps.
 *
 * {@link PlanOutput} is the Schema the model seam passes to
 * `generateObject`: its JSON Schema is the strict wire schema, and it decodes
 * either form — the wire form, or a plain `RoutingPlan` (what models without
 * strict mode, scripted test models and earlier callers return). A plain plan
 * decodes exactly as the `RoutingPlan` Schema decodes it, errors included.
 *
 * @since 0.1.0
 */
import { Effect, Either, JSONSchema, ParseResult, Schema, type SchemaAST as AST } from "effect"
import { isJsonObject, type JsonObject } from "./Json.js"
import { RoutingPlan } from "./RoutingPlan.js"

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
    description: "The tool's arguments as the text of one JSON object, e.g. {\"city\":\"Paris\"}; {} when it takes none. " +
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
      new ParseResult.Type(ast, text, `${field} is not JSON text: ${error instanceof Error ? error.message : String(error)}`)
    )
  }
  return isJsonObject(parsed)
    ? ParseResult.succeed(parsed)
    : ParseResult.fail(new ParseResult.Type(ast, text, `${field} must be the text of a JSON object`))
}

const isEmptyObject = (value: JsonObject | undefined): boolean => value === undefined || Object.keys(value).length === 0

type StepInput = (typeof RoutingPlan.Encoded)["steps"][number]

const stepFromWire = (step: PlanStepWire, index: number, ast: AST.AST) =>
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
 * The wire form ⇄ `RoutingPlan`: decoding parses the JSON text fields and
 * then validates as `RoutingPlan` does; encoding writes every field.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { PlanOutput } from "effect-agent-pipeline"
 *
 * const wire = Schema.encodeSync(PlanOutput.PlanFromWire)({ steps: [], terminal: true })
 * // { reasoning: null, steps: [], terminal: true }
 * ```
 *
 * @since 0.1.0
 */
export const PlanFromWire: Schema.Schema<RoutingPlan, typeof PlanWire.Encoded> = Schema.transformOrFail(
  PlanWire,
  RoutingPlan,
  {
    strict: true,
    decode: (wire, _options, ast) =>
      Effect.map(
        Effect.forEach(wire.steps, (step, index) => stepFromWire(step, index, ast)),
        (steps) => ({ steps, terminal: wire.terminal, ...(wire.reasoning === null ? {} : { reasoning: wire.reasoning }) })
      ),
    encode: (plan) =>
      ParseResult.succeed({
        reasoning: plan.reasoning ?? null,
        steps: plan.steps.map(stepToWire),
        terminal: plan.terminal ?? true
      })
  }
).annotations({ identifier: "PlanFromWire" })

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Whether a value uses a wire-only feature: a `null` reasoning or a step with
 * `parameters_json` / `metadata_json`. Anything else is read as a plain plan.
 */
const isWireShaped = (u: unknown): boolean =>
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

const decodeWire = ParseResult.decodeUnknown(PlanFromWire)
const decodePlain = ParseResult.decodeUnknown(RoutingPlan)
const encodeWire = ParseResult.encodeUnknown(PlanFromWire)

/**
 * The Schema of a model's plan: what the model seam passes to
 * `generateObject`. Providers derive the strict {@link wireJsonSchema} from it;
 * it decodes the wire form or a plain `RoutingPlan` into a `RoutingPlan`, and
 * encodes to the wire form.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { PlanOutput } from "effect-agent-pipeline"
 *
 * const decode = Schema.decodeUnknownSync(PlanOutput.PlanOutput)
 * decode({
 *   reasoning: null,
 *   steps: [{
 *     step_id: "w1", namespace: "demo", agent: "weather", capability: "forecast",
 *     parameters_json: "{\"city\":\"Paris\"}", depends_on: [], implicit_deps: [], metadata_json: null
 *   }],
 *   terminal: true
 * })
 * decode({ steps: [] }) // a plain RoutingPlan decodes too: { steps: [], terminal: true }
 * ```
 *
 * @since 0.1.0
 */
export const PlanOutput: Schema.Schema<RoutingPlan, typeof PlanWire.Encoded> = Schema.declare([], {
  decode: () => (input, options) => isWireShaped(input) ? decodeWire(input, options) : decodePlain(input, options),
  encode: () => (input, options) => encodeWire(input, options)
}, {
  // Same name as the plain Schema, so a plain plan's parse errors read the same.
  identifier: "RoutingPlan",
  description: "A routing plan: the tool calls (steps) that answer the request",
  jsonSchema: wireJsonSchema
})
