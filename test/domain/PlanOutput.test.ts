/**
 * The plan a model is asked for (`PlanOutput`): its JSON Schema satisfies
 * OpenAI's strict structured-output rules, the wire form round-trips to the
 * same `RoutingPlan`, and a plain `RoutingPlan` still decodes exactly as the
 * `RoutingPlan` Schema decodes it.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck, Schema } from "effect"
import { PlanOutput, RoutingPlan } from "effect-agent-pipeline"
import { PlanWire } from "../support/Internal.js"
import { jsonArbitrary as jsonArbitraryOf } from "../support/JsonArbitrary.js"
import { strictViolations } from "../support/StrictJsonSchema.js"

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The JSON Schema a provider derives from a Schema (what `@effect/ai-openai` and `-anthropic` send). */
const providerJsonSchema = (schema: Schema.Schema.Any) => Tool.getJsonSchemaFromSchemaAst(schema.ast)

describe("PlanOutput: the JSON Schema sent to the model", () => {
  it("satisfies strict mode: every property required, additionalProperties false everywhere, only supported keywords", () => {
    const sent = providerJsonSchema(PlanOutput.PlanOutput)
    expect(strictViolations(sent)).toEqual([])
    expect(sent).toMatchObject(PlanWire.wireJsonSchema)
  })

  it("is the wire form: the open objects travel as JSON text, absent values as null, reasoning first", () => {
    const sent: unknown = providerJsonSchema(PlanOutput.PlanOutput)
    const properties = isRecord(sent) && isRecord(sent["properties"]) ? sent["properties"] : {}
    expect(Object.keys(properties)).toEqual(["reasoning", "steps", "terminal"])
    const steps = properties["steps"]
    const step = isRecord(steps) && isRecord(steps["items"]) ? steps["items"] : {}
    expect(step["properties"]).toMatchObject({
      parameters_json: { type: "string" },
      metadata_json: { anyOf: [{ type: "string" }, { type: "null" }] },
      step_id: { type: "string", pattern: "^[A-Za-z0-9_-]{1,128}$" }
    })
    expect(JSON.stringify(sent)).not.toContain("\"parameters\"")
  })

  it("the walk finds what breaks strict mode in the plain RoutingPlan schema (so it can fail)", () => {
    const violations = strictViolations(providerJsonSchema(RoutingPlan.RoutingPlan))
    expect(violations).toEqual(expect.arrayContaining([
      "#: property terminal is not required",
      "#/properties/steps/items: property parameters is not required",
      "#/properties/steps/items/properties/parameters: additionalProperties is not false",
      "#/properties/steps/items/properties/parameters: an object without properties",
      "#/properties/steps/items/properties/namespace: unsupported keyword minLength"
    ]))
  })

  it("has a description providers send with it", () => {
    expect(Tool.getDescriptionFromSchemaAst(PlanOutput.PlanOutput.ast)).toMatch(/routing plan/)
    expect(providerJsonSchema(PlanOutput.PlanOutput).description).toMatch(/routing plan/)
  })
})

// ---------------------------------------------------------------------------
// Decoding both forms
// ---------------------------------------------------------------------------

const decode = Schema.decodeUnknownEither(PlanOutput.PlanOutput)
const decodeText = Schema.decodeEither(Schema.parseJson(PlanOutput.PlanOutput))
const decodePlainText = Schema.decodeEither(Schema.parseJson(RoutingPlan.RoutingPlan))

const wireStep = (overrides: Record<string, unknown> = {}) => ({
  step_id: "w1",
  namespace: "demo-tools",
  agent: "weather-service",
  capability: "weather_forecast",
  parameters_json: "{\"city\":\"Paris\"}",
  depends_on: [],
  implicit_deps: [],
  metadata_json: null,
  ...overrides
})

const messageOf = <A>(result: Either.Either<A, { readonly message: string }>): string =>
  Either.match(result, { onLeft: (e) => e.message, onRight: () => "decoded" })

describe("PlanOutput: decoding", () => {
  it("decodes the wire form into a RoutingPlan (defaults filled, JSON text parsed)", () => {
    const plan = Either.getOrThrow(decode({ reasoning: null, steps: [wireStep()], terminal: true }))
    expect(plan).toEqual({
      steps: [{
        step_id: "w1",
        namespace: "demo-tools",
        agent: "weather-service",
        capability: "weather_forecast",
        parameters: { city: "Paris" },
        depends_on: [],
        implicit_deps: [],
        metadata: {}
      }],
      terminal: true
    })
    const withReasoning = Either.getOrThrow(
      decode({ reasoning: "because", steps: [wireStep({ metadata_json: "{\"k\":[1]}" })], terminal: false })
    )
    expect(withReasoning.reasoning).toBe("because")
    expect(withReasoning.terminal).toBe(false)
    expect(withReasoning.steps[0]?.metadata).toEqual({ k: [1] })
  })

  it("decodes a plain RoutingPlan exactly as the RoutingPlan Schema does, errors included", () => {
    const inputs = [
      "{\"steps\":[]}",
      JSON.stringify({
        steps: [{ step_id: "q1", namespace: "n", agent: "a", capability: "c", parameters: { s: 1 } }],
        reasoning: "r"
      }),
      "{\"steps\": 3}",
      "{not json",
      JSON.stringify({ steps: [{ step_id: "bad id", namespace: "n", agent: "a", capability: "c" }] }),
      JSON.stringify({ steps: [], reasoning: 5 })
    ]
    for (const input of inputs) {
      expect(Either.getRight(decodeText(input))).toEqual(Either.getRight(decodePlainText(input)))
      expect(messageOf(decodeText(input))).toBe(messageOf(decodePlainText(input)))
    }
  })

  it("says which step field is wrong when parameters_json or metadata_json is not a JSON object's text", () => {
    const notJson = messageOf(
      decode({ reasoning: null, steps: [wireStep({ parameters_json: "{city: Paris}" })], terminal: true })
    )
    expect(notJson).toContain("[\"steps\"][0][\"parameters_json\"]")
    expect(notJson).toContain("parameters_json is not JSON text")
    const array = messageOf(
      decode({
        reasoning: null,
        steps: [wireStep(), wireStep({ step_id: "w2", metadata_json: "[1]" })],
        terminal: true
      })
    )
    expect(array).toContain("[\"steps\"][1][\"metadata_json\"]")
    expect(array).toContain("metadata_json must be the text of a JSON object")
  })

  it("validates a wire plan as RoutingPlan does (step ids, non-empty names) and requires the wire fields", () => {
    expect(messageOf(decode({ reasoning: null, steps: [wireStep({ step_id: "a b" })], terminal: true }))).toContain(
      "step_id must match"
    )
    expect(messageOf(decode({ reasoning: null, steps: [wireStep({ agent: "" })], terminal: true }))).toContain(
      "[\"agent\"]"
    )
    const missing: Record<string, unknown> = wireStep()
    delete missing["depends_on"]
    expect(messageOf(decode({ reasoning: null, steps: [missing], terminal: true }))).toContain("[\"depends_on\"]")
    expect(messageOf(decode({ reasoning: null, steps: [], terminal: "yes" }))).toContain("[\"terminal\"]")
  })
})

// ---------------------------------------------------------------------------
// Round trip: RoutingPlan → wire → RoutingPlan
// ---------------------------------------------------------------------------

const jsonArbitrary = jsonArbitraryOf(3)
const JsonObjectA = Schema.Record({
  key: Schema.String.annotations({ arbitrary: () => (fc) => fc.string().filter((key) => key !== "__proto__") }),
  value: Schema.Unknown.annotations({ arbitrary: () => () => jsonArbitrary })
})
const RoutingStepA = Schema.Struct({
  ...RoutingPlan.RoutingStep.fields,
  parameters: JsonObjectA,
  metadata: JsonObjectA
})
const RoutingPlanA = Schema.Struct({ ...RoutingPlan.RoutingPlan.fields, steps: Schema.Array(RoutingStepA) })
const planArbitrary = Arbitrary.make(RoutingPlanA).map((a) => Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)(a))

describe("PlanOutput: round trip", () => {
  it("a RoutingPlan encoded to the wire form (and sent as JSON text) decodes back to the same plan", () => {
    const toWire = Schema.encodeSync(RoutingPlan.PlanFromWire)
    FastCheck.assert(
      FastCheck.property(planArbitrary, (plan) => {
        const wire = toWire(plan)
        expect(Object.keys(wire)).toEqual(["reasoning", "steps", "terminal"])
        expect(Either.getOrThrow(decode(wire))).toEqual(plan)
        expect(Either.getOrThrow(decodeText(JSON.stringify(wire)))).toEqual(plan)
        // The encoded form is what the strict schema describes.
        expect(Either.isRight(Schema.decodeUnknownEither(PlanWire.PlanWire, { onExcessProperty: "error" })(wire))).toBe(
          true
        )
      }),
      { numRuns: 200 }
    )
  })

  it("a plain RoutingPlan's wire form (RoutingPlan.encode) decodes to the same plan too", () => {
    FastCheck.assert(
      FastCheck.property(planArbitrary, (plan) => {
        expect(Either.getOrThrow(decode(RoutingPlan.encode(plan)))).toEqual(plan)
      }),
      { numRuns: 200 }
    )
  })

  it("PlanOutput encodes to the wire form", () => {
    const plan = Either.getOrThrow(decode({ steps: [] }))
    expect(Schema.encodeSync(PlanOutput.PlanOutput)(plan)).toEqual({ reasoning: null, steps: [], terminal: true })
  })
})
