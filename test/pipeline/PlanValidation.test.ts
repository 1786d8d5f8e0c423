/**
 * The plan-validation gauntlet (seed 000 §4.2; DESIGN C8–C10): Schema
 * decoding, unique step ids, dependencies, acyclicity, known tools, output
 * references and the `implicit_deps` rules; plus the model-only normalizer
 * and terminal-synthesis normalization.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { PlanValidation, RoutingPlan, ToolRegistry } from "effect-agent-pipeline"
import { allTools, NAMESPACE } from "../../examples/shared/DemoTools.js"
import { convertStep, plan, quoteStep, tradeStep, weatherStep } from "../support/Harness.js"

const registry = Effect.runSync(ToolRegistry.make(allTools))

const context = (prior: ReadonlyArray<string> = []): PlanValidation.ValidationContext => ({
  hasTool: registry.has,
  priorStepIds: new Set(prior)
})

const validPlan = (raw: unknown, prior: ReadonlyArray<string> = []): RoutingPlan.RoutingPlan => {
  const result = PlanValidation.validate(raw, context(prior))
  if (Either.isLeft(result)) throw new Error(`expected a valid plan, got ${result.left.message}`)
  return result.right
}

const invalid = (raw: unknown, prior: ReadonlyArray<string> = []): PlanValidation.PlanValidationError => {
  const result = PlanValidation.validate(raw, context(prior))
  if (Either.isRight(result)) throw new Error(`expected an invalid plan, got ${JSON.stringify(result.right)}`)
  return result.left
}

/** Decodes a wire-form plan (applying defaults) for the functions that take a decoded plan. */
const decoded = (raw: unknown): RoutingPlan.RoutingPlan => Effect.runSync(Effect.orDie(RoutingPlan.decodeUnknown(raw)))

describe("PlanValidation.validate: decoding", () => {
  it("a plan without steps is a decode failure", () => {
    const error = invalid({ terminal: true })
    expect(error._tag).toBe("PlanValidationError")
    expect(error.reason).toBe("decode")
    expect(error.stepId).toBeUndefined()
    expect(error.detail).toContain("steps")
  })

  it("a non-object plan is a decode failure", () => {
    expect(invalid("not a plan").reason).toBe("decode")
    expect(invalid(null).reason).toBe("decode")
    expect(invalid({ steps: "s1" }).reason).toBe("decode")
  })

  it("a step_id outside [A-Za-z0-9_-]{1,128} is a decode failure", () => {
    expect(invalid(plan([quoteStep("s 1")])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("s.1")])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("")])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("x".repeat(129))])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("s1", "ACME", { depends_on: ["bad id"] })])).reason).toBe("decode")
    // 128 characters is still a valid id.
    expect(validPlan(plan([quoteStep("x".repeat(128))])).steps[0]?.step_id).toBe("x".repeat(128))
  })

  it("non-JSON parameters are a decode failure", () => {
    expect(invalid(plan([quoteStep("s1", "ACME", { parameters: { symbol: Number.NaN } })])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("s1", "ACME", { parameters: { symbol: () => "ACME" } })])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("s1", "ACME", { parameters: { at: new Date(0) } })])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("s1", "ACME", { parameters: ["ACME"] })])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("s1", "ACME", { parameters: "symbol=ACME" })])).reason).toBe("decode")
  })

  it("an empty namespace / agent / capability is a decode failure", () => {
    expect(invalid(plan([quoteStep("s1", "ACME", { namespace: "" })])).reason).toBe("decode")
    expect(invalid(plan([quoteStep("s1", "ACME", { capability: "" })])).reason).toBe("decode")
  })

  it("defaults are applied: parameters, depends_on, implicit_deps, metadata, terminal", () => {
    const p = validPlan({
      steps: [{ step_id: "s1", namespace: NAMESPACE, agent: "stock-service", capability: "stock_quote" }]
    })
    expect(p).toEqual({
      steps: [{
        step_id: "s1",
        namespace: NAMESPACE,
        agent: "stock-service",
        capability: "stock_quote",
        parameters: {},
        depends_on: [],
        implicit_deps: [],
        metadata: {}
      }],
      terminal: true
    })
  })
})

describe("PlanValidation.validate: step ids and dependencies", () => {
  it("a step id used twice in the plan is rejected", () => {
    const error = invalid(plan([quoteStep("s1"), weatherStep("s2"), quoteStep("s1", "XYZ")]))
    expect(error.reason).toBe("duplicate_step_id")
    expect(error.stepId).toBe("s1")
  })

  it("a step id colliding with an earlier phase's step id is rejected", () => {
    const error = invalid(plan([quoteStep("s2"), weatherStep("q1")]), ["q1"])
    expect(error.reason).toBe("duplicate_step_id")
    expect(error.stepId).toBe("q1")
    // The same plan is fine when q1 is not a prior step.
    expect(validPlan(plan([quoteStep("s2"), weatherStep("q1")])).steps).toHaveLength(2)
  })

  it("depends_on naming an unknown step is rejected", () => {
    const error = invalid(plan([quoteStep("s1"), weatherStep("s2", "Paris", { depends_on: ["nope"] })]))
    expect(error.reason).toBe("unknown_dependency")
    expect(error.stepId).toBe("s2")
    expect(error.detail).toContain("nope")
  })

  it("depends_on naming an earlier phase's step is rejected (implicit_deps is the channel)", () => {
    const error = invalid(plan([weatherStep("s2", "Paris", { depends_on: ["q1"] })]), ["q1"])
    expect(error.reason).toBe("unknown_dependency")
    expect(error.stepId).toBe("s2")
    expect(error.detail).toContain("implicit_deps")
  })

  it("a self-dependency is a cycle", () => {
    const error = invalid(plan([quoteStep("s1", "ACME", { depends_on: ["s1"] })]))
    expect(error.reason).toBe("cycle")
    expect(error.stepId).toBe("s1")
  })

  it("a 2-cycle is rejected", () => {
    const error = invalid(plan([
      quoteStep("a", "ACME", { depends_on: ["b"] }),
      quoteStep("b", "ACME", { depends_on: ["a"] })
    ]))
    expect(error.reason).toBe("cycle")
    expect(["a", "b"]).toContain(error.stepId)
  })

  it("a 3-cycle is rejected, even behind an acyclic prefix", () => {
    const error = invalid(plan([
      weatherStep("root"),
      quoteStep("a", "ACME", { depends_on: ["root", "c"] }),
      quoteStep("b", "ACME", { depends_on: ["a"] }),
      quoteStep("c", "ACME", { depends_on: ["b"] })
    ]))
    expect(error.reason).toBe("cycle")
    expect(["a", "b", "c"]).toContain(error.stepId)
  })

  it("a diamond is not a cycle", () => {
    const p = validPlan(plan([
      quoteStep("a"),
      quoteStep("b", "XYZ", { depends_on: ["a"] }),
      weatherStep("c", "Oslo", { depends_on: ["a"] }),
      weatherStep("d", "Rome", { depends_on: ["b", "c"] })
    ]))
    expect(p.steps.map((s) => s.step_id)).toEqual(["a", "b", "c", "d"])
  })

  it("a step naming an unregistered tool is rejected", () => {
    const wrongCapability = invalid(plan([quoteStep("s1"), quoteStep("s2", "ACME", { capability: "stock_short" })]))
    expect(wrongCapability.reason).toBe("unknown_tool")
    expect(wrongCapability.stepId).toBe("s2")
    expect(wrongCapability.detail).toContain(`${NAMESPACE}/stock-service/stock_short`)
    // A real capability under the wrong agent is not a registered tool either.
    expect(invalid(plan([quoteStep("s1", "ACME", { agent: "weather-service" })])).reason).toBe("unknown_tool")
    expect(invalid(plan([quoteStep("s1", "ACME", { namespace: "other-tools" })])).reason).toBe("unknown_tool")
  })
})

describe("PlanValidation.validate: references and implicit_deps (C10)", () => {
  it("C10: a same-phase reference without depends_on is rejected (reference_needs_depends_on)", () => {
    const error = invalid(plan([quoteStep("s1"), convertStep("s2", "{{steps.s1.output.price}}")]))
    expect(error.reason).toBe("reference_needs_depends_on")
    expect(error.stepId).toBe("s2")
    expect(error.detail).toContain("s1")
  })

  it("C10: a same-phase reference embedded in a longer string also needs depends_on", () => {
    const error = invalid(plan([
      quoteStep("s1"),
      weatherStep("s2", "Paris", { parameters: { city: "near {{steps.s1.output.symbol}} HQ" } })
    ]))
    expect(error.reason).toBe("reference_needs_depends_on")
    expect(error.stepId).toBe("s2")
  })

  it("C10: a same-phase reference with depends_on is accepted", () => {
    const p = validPlan(plan([quoteStep("s1"), convertStep("s2", "{{steps.s1.output.price}}", { depends_on: ["s1"] })]))
    expect(p.steps[1]?.depends_on).toEqual(["s1"])
  })

  it("C10: a reference to an earlier phase's step without implicit_deps is rejected (reference_needs_implicit_dep)", () => {
    const error = invalid(plan([convertStep("s2", "{{steps.q1.output.price}}")]), ["q1"])
    expect(error.reason).toBe("reference_needs_implicit_dep")
    expect(error.stepId).toBe("s2")
    expect(error.detail).toContain("q1")
  })

  it("C10: a reference to an earlier phase's step with implicit_deps is accepted", () => {
    const p = validPlan(plan([convertStep("s2", "{{steps.q1.output.price}}", { implicit_deps: ["q1"] })]), ["q1"])
    expect(p.steps[0]?.implicit_deps).toEqual(["q1"])
  })

  it("C10: a reference to a step that exists nowhere is rejected (unresolved_reference)", () => {
    const error = invalid(plan([quoteStep("s1"), convertStep("s2", "{{steps.ghost.output.price}}")]), ["q1"])
    expect(error.reason).toBe("unresolved_reference")
    expect(error.stepId).toBe("s2")
    expect(error.detail).toContain("ghost")
  })

  it("C10: a reference nested in arrays / objects is found", () => {
    const error = invalid(plan([
      quoteStep("s1"),
      weatherStep("s2", "Paris", { parameters: { city: "Paris", extra: { list: ["x", "{{steps.nowhere.output}}"] } } })
    ]))
    expect(error.reason).toBe("unresolved_reference")
    expect(error.stepId).toBe("s2")
  })

  it("C10: an implicit_deps entry that is not an earlier phase's step is rejected (implicit_dep_missing)", () => {
    const error = invalid(plan([weatherStep("s1", "Paris", { implicit_deps: ["q9"] })]), ["q1"])
    expect(error.reason).toBe("implicit_dep_missing")
    expect(error.stepId).toBe("s1")
    expect(error.detail).toContain("q9")
  })

  it("C10: an implicit_deps entry that is unreferenced is rejected (implicit_dep_unreferenced)", () => {
    const error = invalid(plan([weatherStep("s1", "Paris", { implicit_deps: ["q1"] })]), ["q1"])
    expect(error.reason).toBe("implicit_dep_unreferenced")
    expect(error.stepId).toBe("s1")
    expect(error.detail).toContain("q1")
  })

  it("C10: an implicit_deps entry naming a same-phase step is rejected (implicit_dep_same_phase)", () => {
    const error = invalid(plan([
      quoteStep("s1"),
      convertStep("s2", "{{steps.s1.output.price}}", { depends_on: ["s1"], implicit_deps: ["s1"] })
    ]))
    expect(error.reason).toBe("implicit_dep_same_phase")
    expect(error.stepId).toBe("s2")
  })

  it("a valid multi-step plan (same-phase and prior-phase references) passes unchanged", () => {
    const raw = {
      steps: [
        quoteStep("s1"),
        weatherStep("s2", "Oslo"),
        convertStep("s3", "{{steps.s1.output.price}}", { depends_on: ["s1"] }),
        weatherStep("s4", "x", {
          parameters: { city: "{{steps.q1.output.city}} and {{steps.s2.output.city}}" },
          depends_on: ["s2"],
          implicit_deps: ["q1"]
        }),
        tradeStep("s5")
      ],
      terminal: false,
      reasoning: "quote, convert, then trade"
    }
    const p = validPlan(raw, ["q1"])
    expect(p.terminal).toBe(false)
    expect(p.reasoning).toBe("quote, convert, then trade")
    expect(p.steps.map((s) => [s.step_id, s.depends_on, s.implicit_deps])).toEqual([
      ["s1", [], []],
      ["s2", [], []],
      ["s3", ["s1"], []],
      ["s4", ["s2"], ["q1"]],
      ["s5", [], []]
    ])
    // checkPlan on the decoded plan agrees and returns the same plan.
    const checked = PlanValidation.checkPlan(p, context(["q1"]))
    expect(Either.isRight(checked) && checked.right).toBe(p)
  })
})

describe("PlanValidation: bounded detail", () => {
  it("a huge bogus plan yields a bounded detail (≤ 401 chars)", () => {
    const huge = {
      steps: [{ step_id: "s1", namespace: "x".repeat(200_000), agent: 42, capability: ["y".repeat(50_000)] }]
    }
    const error = invalid(huge)
    expect(error.reason).toBe("decode")
    expect(error.detail.length).toBeLessThanOrEqual(401)
    expect(error.detail.length).toBeGreaterThan(0)
  })

  it("a huge unknown tool name yields a bounded detail (≤ 401 chars)", () => {
    const error = invalid(plan([quoteStep("s1", "ACME", { namespace: "n".repeat(100_000) })]))
    expect(error.reason).toBe("unknown_tool")
    expect(error.detail.length).toBeLessThanOrEqual(401)
    expect(error.detail.endsWith("…")).toBe(true)
  })

  it("many bogus steps yield a bounded detail", () => {
    const steps = Array.from({ length: 5_000 }, (_, i) => ({ step_id: `bad id ${i}`, parameters: 7 }))
    const error = invalid({ steps })
    expect(error.reason).toBe("decode")
    expect(error.detail.length).toBeLessThanOrEqual(401)
  })
})

describe("PlanValidation.normalizeModelPlan", () => {
  it("adds the depends_on and implicit_deps that references imply", () => {
    const raw = decoded(plan([
      quoteStep("s1"),
      convertStep("s2", "{{steps.s1.output.price}}"),
      weatherStep("s3", "x", { parameters: { city: "{{steps.q1.output.city}}" } })
    ]))
    const normalized = PlanValidation.normalizeModelPlan(raw, new Set(["q1"]))
    expect(normalized.steps.map((s) => [s.step_id, s.depends_on, s.implicit_deps])).toEqual([
      ["s1", [], []],
      ["s2", ["s1"], []],
      ["s3", [], ["q1"]]
    ])
    // The normalized plan passes the gauntlet the raw one fails.
    const rawChecked = PlanValidation.checkPlan(raw, context(["q1"]))
    expect(Either.isLeft(rawChecked) && rawChecked.left.reason).toBe("reference_needs_depends_on")
    expect(Either.isRight(PlanValidation.checkPlan(normalized, context(["q1"])))).toBe(true)
  })

  it("keeps existing depends_on and does not duplicate them", () => {
    const raw = decoded(plan([
      quoteStep("s1"),
      weatherStep("s2"),
      convertStep("s3", "{{steps.s1.output.price}}", { depends_on: ["s2", "s1"] })
    ]))
    const normalized = PlanValidation.normalizeModelPlan(raw, new Set())
    expect(normalized.steps[2]?.depends_on).toEqual(["s2", "s1"])
  })

  it("drops implicit_deps that no parameter references", () => {
    const raw = decoded(plan([
      weatherStep("s1", "Paris", { implicit_deps: ["q1", "q2"] }),
      convertStep("s2", "{{steps.q2.output.price}}", { implicit_deps: ["q1", "q2"] })
    ]))
    const normalized = PlanValidation.normalizeModelPlan(raw, new Set(["q1", "q2"]))
    expect(normalized.steps[0]?.implicit_deps).toEqual([])
    expect(normalized.steps[1]?.implicit_deps).toEqual(["q2"])
    expect(Either.isRight(PlanValidation.checkPlan(normalized, context(["q1", "q2"])))).toBe(true)
  })

  it("does not invent a dependency for an unknown reference (validation still rejects it)", () => {
    const raw = decoded(plan([convertStep("s1", "{{steps.ghost.output.price}}")]))
    const normalized = PlanValidation.normalizeModelPlan(raw, new Set(["q1"]))
    expect(normalized.steps[0]?.depends_on).toEqual([])
    expect(normalized.steps[0]?.implicit_deps).toEqual([])
    const checked = PlanValidation.checkPlan(normalized, context(["q1"]))
    expect(Either.isLeft(checked) && checked.left.reason).toBe("unresolved_reference")
  })

  it("does not turn a self-reference into a self-dependency", () => {
    const raw = decoded(plan([convertStep("s1", "{{steps.s1.output.price}}")]))
    const normalized = PlanValidation.normalizeModelPlan(raw, new Set())
    expect(normalized.steps[0]?.depends_on).toEqual([])
  })

  it("does not mutate its input", () => {
    const raw = decoded(plan([quoteStep("s1"), convertStep("s2", "{{steps.s1.output.price}}")]))
    PlanValidation.normalizeModelPlan(raw, new Set())
    expect(raw.steps[1]?.depends_on).toEqual([])
  })
})

describe("PlanValidation.normalizeTerminal", () => {
  it("an empty non-terminal plan is normalized to terminal", () => {
    expect(PlanValidation.normalizeTerminal({ steps: [], terminal: false })).toEqual({ steps: [], terminal: true })
    const viaValidate = validPlan({ steps: [], terminal: false })
    expect(viaValidate).toEqual({ steps: [], terminal: true })
  })

  it("a non-empty non-terminal plan stays non-terminal; a terminal plan is unchanged", () => {
    const nonTerminal = decoded(plan([quoteStep("s1")], false))
    expect(PlanValidation.normalizeTerminal(nonTerminal)).toBe(nonTerminal)
    expect(PlanValidation.normalizeTerminal(nonTerminal).terminal).toBe(false)
    const terminal = decoded(plan([]))
    expect(PlanValidation.normalizeTerminal(terminal)).toBe(terminal)
  })
})

describe("PlanValidation.validate: exact plans and excess properties", () => {
  it("an exact decoded plan validates as the same value; excess properties are stripped", () => {
    const exact = {
      steps: [{
        step_id: "s1",
        namespace: NAMESPACE,
        agent: "stock-service",
        capability: "stock_quote",
        parameters: { symbol: "ACME" },
        depends_on: [],
        implicit_deps: [],
        metadata: {}
      }],
      terminal: true
    }
    const same = PlanValidation.validate(exact, context())
    expect(Either.isRight(same) && same.right).toEqual(exact)
    const sloppy = PlanValidation.validate(
      { ...exact, injected: "x", steps: [{ ...exact.steps[0], extra: 1 }] },
      context()
    )
    expect(Either.isRight(sloppy) && sloppy.right).toEqual(exact)
    // An exact-shaped plan still goes through the graph checks.
    const unknownTool = PlanValidation.validate(
      { ...exact, steps: [{ ...exact.steps[0], capability: "nope" }] },
      context()
    )
    expect(Either.isLeft(unknownTool) && unknownTool.left.reason).toBe("unknown_tool")
  })
})

describe("PlanValidation.validate: hostile plan values (issue 17, class 4)", () => {
  it("a decode failure leads with where and why in one line (the Schema's tree would spend the bounded detail on itself)", () => {
    const error = invalid(plan([quoteStep("s1", "ACME", { parameters: { n: 1n } })]))
    expect(error.reason).toBe("decode")
    expect(error.detail).toMatch(/^plan\.steps\[0\]\.parameters\.n: a bigint is not a JSON value/)
    expect(error.detail).not.toContain("\n")
  })

  it("a plan value whose getters or Proxy traps throw is a decode failure naming where, never a thrown error", () => {
    const step = quoteStep("s1")
    Object.defineProperty(step, "capability", {
      enumerable: true,
      get() {
        throw new Error("read me not")
      }
    })
    expect(invalid({ steps: [step] })).toMatchObject({
      reason: "decode",
      detail: "the plan could not be read (at plan.steps[0].capability: reading it threw: Error: read me not)"
    })
    const revoked = Proxy.revocable({}, {})
    revoked.revoke()
    expect(invalid(revoked.proxy).reason).toBe("decode")
  })

  it("the accepted plan is a copy: the caller changing its object afterwards changes nothing validated", () => {
    const raw = plan([quoteStep("s1")])
    const validated = PlanValidation.validate(raw, { hasTool: () => true, priorStepIds: new Set() })
    expect(Either.isRight(validated)).toBe(true)
    if (Either.isLeft(validated)) return
    ;(raw.steps[0]!.parameters as { symbol: string }).symbol = "EVIL"
    expect(validated.right.steps[0]!.parameters).toEqual({ symbol: "ACME" })
  })
})
