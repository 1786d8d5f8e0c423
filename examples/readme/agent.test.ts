import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, Hook, Pipeline, PromptBuilder, type ScriptedModel } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

const script: ScriptedModel.Script = {
  // One entry per planning call, in order: a plan (sent as JSON), a string
  // (returned verbatim: test malformed output), an Error (the call fails),
  // or a function of the prompt returning one of these.
  plans: [{
    steps: [{
      step_id: "w1",
      namespace: "weather",
      agent: "weather-service",
      capability: "weather_forecast",
      parameters: { city: "Lisbon" }
    }]
  }],
  // The draft for generateText / streamText: a string or a function of the prompt.
  synthesis: (prompt) => (prompt.includes("Lisbon") ? "Sunny in Lisbon." : "No idea.")
}

const notes = Hook.make({
  name: "notes",
  beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "Lisbon is in Portugal." } })
})

describe("weather agent", () => {
  it.effect("plans, calls the tool, answers, and leaves evidence", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      const result = yield* pipeline.process({ request: "Weather in Lisbon?", requestId: "t-1" })
      expect(result._tag === "Completed" && result.response.response).toBe("Sunny in Lisbon.")

      const test = yield* Agent.TestAgent
      // The prompts the model received: the planning prompt carries the hook's enrichment.
      expect(test.prompts.map((p) => p.kind)).toEqual(["plan", "text"])
      expect(PromptBuilder.readSection(test.prompts[0]!.prompt, "agent_memory")).toBe("Lisbon is in Portugal.")
      // The record the request left.
      const record = yield* test.record("t-1")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.phases[0]?.steps[0]).toMatchObject({ capability: "weather_forecast", status: "succeeded" })
      expect(record.hookInvocations.map((h) => [h.name, h.outcome])).toEqual([["notes", "succeeded"]])
    }).pipe(Effect.provide(Agent.layerTest({ tools: [weatherForecast], hooks: [notes], script }))))

  it.effect("a plan the model got wrong is a typed PlanningError", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      const error = yield* Effect.flip(pipeline.process({ request: "Weather in Lisbon?" }))
      expect(error._tag).toBe("PlanningError")
    }).pipe(
      Effect.provide(Agent.layerTest({ tools: [weatherForecast], script: { plans: ["{not json"], synthesis: "" } }))
    ))
})
