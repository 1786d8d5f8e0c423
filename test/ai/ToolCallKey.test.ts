/**
 * `ToolCalls.current` (issue 24: "each tool call's idempotency key —
 * request id + step id — handed to the tool so it can deduplicate"): a
 * handler reads its step and key; every step of a request has its own;
 * the step a HITL resume executes keeps the key it would have had; nothing
 * outside a plan step's call.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { Agent, Approval, Pipeline, ToolCalls, ToolRegistry } from "effect-agent-pipeline"

const Charge = Tool.make("charge", {
  description: "Charge an amount",
  parameters: { cents: Schema.Number },
  success: Schema.String
})

/** A tool that reports the call it runs for, and the keys it was handed. */
const chargeTool = (seen: Array<Option.Option<ToolCalls.Current>>) =>
  ToolRegistry.entry({
    namespace: "billing",
    agent: "payments",
    tool: Charge,
    handler: ({ cents }) =>
      Effect.map(ToolCalls.current, (call) => {
        seen.push(call)
        return `charged ${cents}`
      })
  })

const step = (id: string, cents: number) => ({
  step_id: id,
  namespace: "billing",
  agent: "payments",
  capability: "charge",
  parameters: { cents }
})

describe("ToolCalls.current: the idempotency key of a tool call (issue 24)", () => {
  it.effect("a handler reads its request, phase, step and key; each step has its own", () =>
    Effect.gen(function*() {
      const seen: Array<Option.Option<ToolCalls.Current>> = []
      const layer = Agent.layerTest({
        tools: [chargeTool(seen)],
        script: { plans: [{ steps: [step("c1", 100), step("c2", 250)] }], synthesis: "done" }
      })
      const result = yield* Effect.flatMap(
        Pipeline.Pipeline,
        (pipeline) => pipeline.process({ request: "charge twice", requestId: "order-7" })
      ).pipe(Effect.provide(layer))
      expect(result._tag).toBe("Completed")
      const calls = seen.map(Option.getOrThrow).sort((a, b) => a.stepId.localeCompare(b.stepId))
      expect(calls).toEqual([
        { requestId: "order-7", phase: 1, stepId: "c1", idempotencyKey: "order-7/c1" },
        { requestId: "order-7", phase: 1, stepId: "c2", idempotencyKey: "order-7/c2" }
      ])
    }))

  it.effect("the step a HITL resume executes gets the same key as without the suspension", () =>
    Effect.gen(function*() {
      const seen: Array<Option.Option<ToolCalls.Current>> = []
      const layer = Agent.layerTest({
        tools: [chargeTool(seen)],
        approval: { evaluate: () => Effect.succeed(Approval.suspend("a human approves charges")) },
        script: { plans: [{ steps: [step("c1", 100)] }], synthesis: "done" }
      })
      const keys = yield* Effect.gen(function*() {
        const pipeline = yield* Pipeline.Pipeline
        const first = yield* pipeline.process({ request: "charge once", requestId: "order-8" })
        expect(first._tag).toBe("Suspended")
        expect(seen).toEqual([])
        if (first._tag !== "Suspended") return []
        const { checkpointId, planDigest } = first.checkpoint
        const resumed = yield* pipeline.resume(checkpointId, "approve", { planDigest })
        expect(resumed._tag).toBe("Completed")
        return seen.map((call) => Option.map(call, (c) => c.idempotencyKey))
      }).pipe(Effect.provide(layer))
      expect(keys).toEqual([Option.some("order-8/c1")])
    }))

  it.effect("outside a plan step's tool call there is none", () =>
    Effect.gen(function*() {
      expect(yield* ToolCalls.current).toEqual(Option.none())
    }))
})
