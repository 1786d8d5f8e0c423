/**
 * `RoutingPlan.decodeText` — the direct path for well-formed plans — gives
 * exactly what the `RoutingPlan` Schema gives (C3: a model's plan is
 * decoded by the Schema before validation): the same value for every plan
 * the Schema accepts, the Schema's own error for everything else. A plan in
 * the strict wire form (`PlanWire`: a `null` reasoning, `parameters_json`)
 * is decoded by `RoutingPlan.PlanFromWire` instead.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import { RoutingPlan } from "effect-agent-pipeline"
import { PlanWire } from "../support/Internal.js"

const parsesAsWire = (text: string): boolean => {
  try {
    return PlanWire.isWireShaped(JSON.parse(text))
  } catch {
    return false
  }
}

const bySchema = (text: string) =>
  Effect.runSync(Effect.either(
    parsesAsWire(text)
      ? Schema.decodeUnknown(RoutingPlan.PlanFromWire)(JSON.parse(text))
      : Schema.decode(Schema.parseJson(RoutingPlan.RoutingPlan))(text)
  ))
const direct = (text: string) => Effect.runSync(Effect.either(RoutingPlan.decodeText(text)))

const same = (text: string) => {
  const a = direct(text)
  const b = bySchema(text)
  expect(Either.isRight(a)).toBe(Either.isRight(b))
  if (Either.isRight(a) && Either.isRight(b)) {
    expect(a.right).toStrictEqual(b.right)
    // Key order too: records and prompts serialize plans.
    expect(JSON.stringify(a.right)).toBe(JSON.stringify(b.right))
  }
  if (Either.isLeft(a) && Either.isLeft(b)) expect(a.left.message).toBe(b.left.message)
}

// Field values a model might send: right and wrong types, edge strings.
const fieldValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(""),
  fc.constantFrom("s1", "s-2", "bad id", "x".repeat(129), "__proto__", "{{steps.s1.output}}"),
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.array(fc.constantFrom("s1", "s2", "bad id", ""), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom("q", "n", "__proto__", "deep"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
)

const stepLike = fc.record(
  {
    step_id: fieldValue,
    namespace: fieldValue,
    agent: fieldValue,
    capability: fieldValue,
    parameters: fieldValue,
    depends_on: fieldValue,
    implicit_deps: fieldValue,
    metadata: fieldValue,
    extra: fieldValue
  },
  { requiredKeys: [] }
)

const planLike = fc.record(
  {
    steps: fc.oneof(fc.array(stepLike, { maxLength: 3 }), fieldValue),
    terminal: fieldValue,
    reasoning: fieldValue,
    other: fieldValue
  },
  { requiredKeys: [] }
)

describe("RoutingPlan.decodeText", () => {
  it("C3: well-formed plans (valid ids, JSON parameters and metadata, optional fields present or not) decode to the Schema's value (property, 1000 runs)", () => {
    const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/)
    const object = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })
    const step = fc.record(
      {
        step_id: id,
        namespace: fc.string({ minLength: 1, maxLength: 8 }),
        agent: fc.string({ minLength: 1, maxLength: 8 }),
        capability: fc.string({ minLength: 1, maxLength: 8 }),
        parameters: object,
        depends_on: fc.array(id, { maxLength: 3 }),
        implicit_deps: fc.array(id, { maxLength: 3 }),
        metadata: object
      },
      { requiredKeys: ["step_id", "namespace", "agent", "capability"] }
    )
    const plan = fc.record(
      { steps: fc.array(step, { maxLength: 4 }), terminal: fc.boolean(), reasoning: fc.string({ maxLength: 10 }) },
      { requiredKeys: ["steps"] }
    )
    fc.assert(fc.property(plan, (p) => same(JSON.stringify(p))), { numRuns: 1000 })
  })

  it("C3: arbitrary plan-shaped JSON (right and wrong field types, extra keys) decodes exactly as by the Schema (property, 2000 runs)", () => {
    fc.assert(fc.property(planLike, (u) => same(JSON.stringify(u))), { numRuns: 2000 })
  })

  it("C3: text that is not JSON, not an object, or a typical model plan", () => {
    for (
      const text of [
        "",
        "not json",
        "[]",
        "null",
        "{\"steps\":[]}",
        "{\"steps\":[{\"step_id\":\"s1\",\"namespace\":\"n\",\"agent\":\"a\",\"capability\":\"c\",\"parameters\":{\"q\":\"x\"}}],\"terminal\":false,\"reasoning\":\"r\"}",
        "{\"steps\":[{\"step_id\":\"s1\",\"namespace\":\"n\",\"agent\":\"a\",\"capability\":\"c\",\"parameters\":{\"__proto__\":{\"x\":1}}}]}",
        "{\"steps\":[{\"step_id\":\"s1\",\"namespace\":\"n\",\"agent\":\"a\",\"capability\":\"c\",\"depends_on\":[\"s0\"],\"extra\":1}],\"extra\":2}",
        // The wire form.
        "{\"reasoning\":null,\"steps\":[],\"terminal\":true}",
        "{\"reasoning\":null,\"steps\":[{\"step_id\":\"s1\",\"namespace\":\"n\",\"agent\":\"a\",\"capability\":\"c\",\"parameters_json\":\"{\\\"q\\\":1}\",\"depends_on\":[],\"implicit_deps\":[],\"metadata_json\":null}],\"terminal\":true}",
        "{\"reasoning\":null,\"steps\":[{\"parameters_json\":\"[1]\"}],\"terminal\":true}"
      ]
    ) same(text)
  })

  it("the wire form decodes to the same plan as its plain form", () => {
    const plain = {
      steps: [{
        step_id: "s1",
        namespace: "n",
        agent: "a",
        capability: "c",
        parameters: { q: 1 },
        metadata: { m: true }
      }],
      terminal: false,
      reasoning: "r"
    }
    const wire = Schema.encodeSync(RoutingPlan.PlanFromWire)(Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)(plain))
    expect(wire.steps[0]?.parameters_json).toBe("{\"q\":1}")
    expect(Effect.runSync(RoutingPlan.decodeText(JSON.stringify(wire)))).toStrictEqual(
      Effect.runSync(RoutingPlan.decodeText(JSON.stringify(plain)))
    )
  })
})
