/**
 * The whole pipeline through `effect-agent-pipeline/anthropic` (the real
 * `@effect/ai-anthropic` client over Node's HTTP client) against a local
 * server speaking the Messages API (`test/support/FakeAnthropic.ts`), on
 * loopback: plan (a forced `routing_plan` tool call) → tool → buffered or
 * streamed synthesis, and what the server received.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, Layer, Redacted, Stream } from "effect"
import { Agent, type AgentResponse, Pipeline } from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as FakeAnthropic from "../../support/FakeAnthropic.js"
import { plan, quoteStep, weatherStep } from "../../support/Harness.js"
import { PlanWire } from "../../support/Internal.js"

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const at = (body: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((value, key) => (isRecord(value) ? value[key] : undefined), body)

const pipelineOn = (server: FakeAnthropic.FakeAnthropic, model = "claude-test") =>
  Effect.map(
    Layer.build(
      Agent.layer({
        model: Anthropic.layer({ model, apiUrl: server.apiUrl, apiKey: Redacted.make("sk-ant-test") }),
        tools: allTools
      })
    ),
    (context) => Context.get(context, Pipeline.Pipeline)
  )

/** A planning request forces one tool, `routing_plan`, whose input schema is the plan's wire schema. */
const expectForcedPlanTool = (body: unknown, model: string) => {
  expect(at(body, "model")).toBe(model)
  expect(at(body, "tool_choice")).toEqual({ type: "tool", name: "routing_plan", disable_parallel_tool_use: true })
  const tools = at(body, "tools")
  expect(Array.isArray(tools) && tools.length).toBe(1)
  const [tool] = Array.isArray(tools) ? tools : []
  expect(at(tool, "name")).toBe("routing_plan")
  expect(at(tool, "input_schema")).toMatchObject(JSON.parse(JSON.stringify(PlanWire.wireJsonSchema)))
  expect(at(body, "max_tokens")).toBe(4096)
}

const expectAnthropicHeaders = (headers: Readonly<Record<string, string>>) => {
  expect(headers["x-api-key"]).toBe("sk-ant-test")
  expect(headers["anthropic-version"]).toBe("2023-06-01")
  expect(headers["authorization"]).toBeUndefined()
}

const messagesText = (body: unknown): string => JSON.stringify([at(body, "system"), at(body, "messages")])

const tokensOf = (events: ReadonlyArray<AgentResponse.StreamEvent>) =>
  events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))

describe("Anthropic Messages API over HTTP (effect-agent-pipeline/anthropic)", () => {
  it.scoped("plan → tool → buffered synthesis: the plan is the forced tool call's input", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.plan({ steps: [weatherStep("w1", "Lisbon")] }),
        FakeAnthropic.text("Lisbon: sunny.")
      )
      const pipeline = yield* pipelineOn(server)
      const result = yield* pipeline.process({ request: "What's the weather in Lisbon?", requestId: "an-1" })

      expect(result._tag).toBe("Completed")
      if (result._tag !== "Completed") return
      expect(result.response.response).toBe("Lisbon: sunny.")
      const [phase] = result.response.phases
      expect(phase?.plan.steps.map((s) => [s.step_id, s.capability, s.parameters])).toEqual([
        ["w1", "weather_forecast", { city: "Lisbon" }]
      ])
      expect(phase?.steps.map((s) => [s.step_id, s.status])).toEqual([["w1", "succeeded"]])
      expect(phase?.steps[0]?.output).toMatchObject({ city: "Lisbon" })

      const requests = yield* server.requests
      expect(requests.map((r) => `${r.method} ${r.path}${r.query}`)).toEqual([
        "POST /v1/messages?beta=true",
        "POST /v1/messages?beta=true"
      ])
      const [planning, synthesis] = requests
      for (const r of requests) expectAnthropicHeaders(r.headers)
      expectForcedPlanTool(planning!.body, "claude-test")
      expect(messagesText(planning!.body)).toContain("What's the weather in Lisbon?")
      // Synthesis: no tools, plain text.
      expect(at(synthesis!.body, "tool_choice")).toBeUndefined()
      expect(at(synthesis!.body, "model")).toBe("claude-test")
      expect(messagesText(synthesis!.body)).toContain("Lisbon")
    }))

  it.scoped("plan → tool → streamed synthesis: the tokens are the server's text deltas, in order", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      const deltas = ["ACME ", "is ", "at ", "12", "3.45", " — ✓"]
      yield* server.enqueue(
        FakeAnthropic.plan({ steps: [quoteStep("q1")] }),
        FakeAnthropic.text(deltas.join(""), { deltas })
      )
      const pipeline = yield* pipelineOn(server, "claude-stream")
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(pipeline.stream({ request: "quote ACME", requestId: "an-2" }))
      )

      expect(tokensOf(events)).toEqual(deltas)
      const last = events.at(-1)
      expect(last?._tag === "Completed" && last.response.response).toBe(deltas.join(""))
      expect(last?._tag === "Completed" && last.response.phases[0]?.steps.map((s) => s.status)).toEqual(["succeeded"])

      const [planning, synthesis] = yield* server.requests
      expectForcedPlanTool(planning!.body, "claude-stream")
      // A stream goes to /v1/messages without the beta query.
      expect(`${synthesis!.path}${synthesis!.query}`).toBe("/v1/messages")
      expect(at(synthesis!.body, "stream")).toBe(true)
      expectAnthropicHeaders(synthesis!.headers)
    }))

  it.scoped("a plain RoutingPlan as the tool input decodes too; a non-terminal plan asks for another phase", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.json(plan([quoteStep("q1")], false)),
        FakeAnthropic.plan(plan([weatherStep("w1")])),
        FakeAnthropic.text("both done")
      )
      const pipeline = yield* pipelineOn(server)
      const result = yield* pipeline.process({ request: "quote ACME, then the weather in Paris", requestId: "an-3" })
      expect(result._tag === "Completed" && result.response.phases.map((p) => p.plan.steps.map((s) => s.step_id)))
        .toEqual([
          ["q1"],
          ["w1"]
        ])
      const requests = yield* server.requests
      expect(requests).toHaveLength(3)
      expectForcedPlanTool(requests[1]!.body, "claude-test")
    }))
})
