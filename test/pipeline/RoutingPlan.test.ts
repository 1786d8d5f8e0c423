import { describe, expect, it } from "@effect/vitest"
import { JSONSchema, Schema } from "effect"
import { RoutingPlan } from "effect-agent-pipeline"

describe("RoutingPlan", () => {
  it("has a JSON Schema, so providers can request it as structured output", () => {
    const schema = JSONSchema.make(RoutingPlan.RoutingPlan) as { readonly $defs?: Record<string, unknown> }
    const text = JSON.stringify(schema)
    expect(text).toContain("step_id")
    expect(text).toContain("implicit_deps")
    expect(text).toContain("terminal")
  })

  it("fills defaults when decoding the wire form", () => {
    const plan = Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)({
      steps: [{ step_id: "s1", namespace: "n", agent: "a", capability: "c" }]
    })
    expect(plan).toEqual({
      steps: [{
        step_id: "s1",
        namespace: "n",
        agent: "a",
        capability: "c",
        parameters: {},
        depends_on: [],
        implicit_deps: [],
        metadata: {}
      }],
      terminal: true
    })
  })

  it("finds canonical references anywhere in parameters", () => {
    const refs = RoutingPlan.referencedStepIds({
      a: "{{steps.s1.output}}",
      b: ["x {{steps.s2.output.price}} y", { c: "{{steps.s3.output}}{{steps.s1.output}}" }],
      d: "{{steps.bad id.output}} {{step.s9.output}}"
    })
    expect([...refs].sort()).toEqual(["s1", "s2", "s3"])
  })
})
