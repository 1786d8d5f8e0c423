/**
 * The whole pipeline through `effect-agent-pipeline/openai` (the real
 * `@effect/ai-openai` client over Node's HTTP client) against a local server
 * speaking the OpenAI Responses API (`test/support/FakeOpenAi.ts`), on
 * loopback: plan (strict json_schema structured output) → tool → buffered or
 * streamed synthesis, and what the server received.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, Layer, Redacted, Stream } from "effect"
import { Agent, type AgentResponse, ExecutionStore, Hook, Pipeline } from "effect-agent-pipeline"
import * as OpenAi from "effect-agent-pipeline/openai"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import { plan, quoteStep, weatherStep } from "../../support/Harness.js"
import { PlanWire } from "../../support/Internal.js"
import { strictViolations } from "../../support/StrictJsonSchema.js"

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** `body.a.b.c`, or `undefined`. */
const at = (body: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((value, key) => (isRecord(value) ? value[key] : undefined), body)

/** An agent on the demo tools over the fake server; returns the pipeline and the store. */
const agentOn = (server: FakeOpenAi.FakeOpenAi, model = "gpt-test", hooks: ReadonlyArray<Hook.Hook<never>> = []) =>
  Effect.map(
    Layer.build(
      Agent.layer({
        model: OpenAi.layer({ model, apiUrl: server.apiUrl, apiKey: Redacted.make("sk-test-key") }),
        tools: allTools,
        hooks
      })
    ),
    (context) => ({
      pipeline: Context.get(context, Pipeline.Pipeline),
      store: Context.get(context, ExecutionStore.ExecutionStore)
    })
  )

/** The text of the prompt's user input items. */
const inputText = (body: unknown): string => JSON.stringify(at(body, "input"))

/** What every planning request must carry: the strict wire schema of the plan. */
const expectStrictPlanRequest = (body: unknown, model: string) => {
  expect(at(body, "model")).toBe(model)
  const format = at(body, "text", "format")
  expect(format).toMatchObject({ type: "json_schema", name: "routing_plan", strict: true })
  expect(at(format, "schema")).toEqual(JSON.parse(JSON.stringify(OpenAi_planSchema)))
  expect(strictViolations(at(format, "schema"))).toEqual([])
  expect(at(body, "stream")).toBeUndefined()
}
const OpenAi_planSchema = {
  ...PlanWire.wireJsonSchema,
  description: "A routing plan: the tool calls (steps) that answer the request"
}

const tokensOf = (events: ReadonlyArray<AgentResponse.StreamEvent>) =>
  events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))

describe("OpenAI Responses API over HTTP (effect-agent-pipeline/openai)", () => {
  it.scoped("plan → tool → buffered synthesis: the plan arrives as strict structured output and the tool runs on it", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.plan({ steps: [weatherStep("w1", "Lisbon")], reasoning: "a forecast is needed" }),
        FakeOpenAi.text("Lisbon: sunny.")
      )
      const { pipeline, store } = yield* agentOn(server)
      const result = yield* pipeline.process({ request: "What's the weather in Lisbon?", requestId: "oa-1" })

      expect(result._tag).toBe("Completed")
      if (result._tag !== "Completed") return
      expect(result.response.response).toBe("Lisbon: sunny.")
      const [phase] = result.response.phases
      expect(phase?.plan.steps).toEqual([{
        ...weatherStep("w1", "Lisbon"),
        depends_on: [],
        implicit_deps: [],
        metadata: {}
      }])
      expect(phase?.plan.reasoning).toBe("a forecast is needed")
      expect(phase?.steps.map((s) => [s.step_id, s.status])).toEqual([["w1", "succeeded"]])
      expect(phase?.steps[0]?.output).toMatchObject({ city: "Lisbon" })
      expect((yield* store.get("oa-1")).pipe((o) => o._tag === "Some" && o.value.lifecycle?.status)).toBe("succeeded")

      const requests = yield* server.requests
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/responses", "POST /v1/responses"])
      const [planning, synthesis] = requests
      for (const r of requests) {
        expect(r.headers["authorization"]).toBe("Bearer sk-test-key")
        expect(r.headers["content-type"]).toMatch(/^application\/json/)
      }
      expectStrictPlanRequest(planning!.body, "gpt-test")
      expect(inputText(planning!.body)).toContain("What's the weather in Lisbon?")
      expect(inputText(planning!.body)).toContain("weather_forecast")
      // Synthesis: plain text, and the prompt carries the tool's result.
      expect(at(synthesis!.body, "text", "format")).toEqual({ type: "text" })
      expect(at(synthesis!.body, "model")).toBe("gpt-test")
      expect(inputText(synthesis!.body)).toContain("Lisbon")
      expect(yield* server.pending).toBe(0)
    }))

  it.scoped("plan → tool → streamed synthesis: the tokens are the server's SSE deltas, in order, and the final text is theirs", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const deltas = ["ACME ", "trades ", "at ", "12", "3.45 ", "USD", " — ünïcödé ✓"]
      yield* server.enqueue(
        FakeOpenAi.plan({ steps: [quoteStep("q1")] }),
        FakeOpenAi.text(deltas.join(""), { deltas, usage: { input_tokens: 100, output_tokens: 9 } })
      )
      const { pipeline } = yield* agentOn(server, "gpt-stream")
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(pipeline.stream({ request: "stock quote for ACME", requestId: "oa-2" }))
      )

      expect(tokensOf(events)).toEqual(deltas)
      const last = events.at(-1)
      expect(last?._tag).toBe("Completed")
      if (last?._tag !== "Completed") return
      expect(last.response.response).toBe(deltas.join(""))
      expect(last.response.phases[0]?.steps.map((s) => [s.step_id, s.status])).toEqual([["q1", "succeeded"]])

      const [planning, synthesis] = yield* server.requests
      expectStrictPlanRequest(planning!.body, "gpt-stream")
      expect(at(synthesis!.body, "stream")).toBe(true)
      expect(at(synthesis!.body, "text", "format")).toEqual({ type: "text" })
      expect(synthesis!.headers["authorization"]).toBe("Bearer sk-test-key")
    }))

  it.scoped("a multi-phase plan: the second planning call sees the first phase's results", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.plan(plan([quoteStep("q1")], false)),
        FakeOpenAi.plan(plan([weatherStep("w1")])),
        FakeOpenAi.text("done")
      )
      const { pipeline } = yield* agentOn(server)
      const result = yield* pipeline.process({ request: "quote ACME, then the weather in Paris", requestId: "oa-3" })
      expect(result._tag === "Completed" && result.response.phases.map((p) => p.plan.steps.map((s) => s.step_id)))
        .toEqual([
          ["q1"],
          ["w1"]
        ])
      const requests = yield* server.requests
      expect(requests).toHaveLength(3)
      expectStrictPlanRequest(requests[1]!.body, "gpt-test")
      expect(inputText(requests[1]!.body)).toContain("q1")
    }))

  it.scoped("a plain RoutingPlan (a server without strict mode) decodes too", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.json(plan([quoteStep("q1")])), FakeOpenAi.text("ok"))
      const { pipeline } = yield* agentOn(server)
      const result = yield* pipeline.process({ request: "quote ACME", requestId: "oa-4" })
      expect(result._tag === "Completed" && result.response.phases[0]?.plan.steps[0]?.parameters).toEqual({
        symbol: "ACME"
      })
    }))

  it.scoped("an after_inference hook that rewrites the planning response: the plan is decoded from the rewritten wire text", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.plan({ steps: [weatherStep("w1", "Lisbon")] }), FakeOpenAi.text("ok"))
      const reroute = Hook.make({
        name: "reroute",
        afterInference: (call, text) =>
          Effect.succeed(call.payload.purpose === "planning" ? text.replace("Lisbon", "Porto") : text)
      })
      const { pipeline } = yield* agentOn(server, "gpt-test", [reroute])
      const result = yield* pipeline.process({ request: "weather in Lisbon", requestId: "oa-5" })
      expect(result._tag === "Completed" && result.response.phases[0]?.plan.steps[0]?.parameters).toEqual({
        city: "Porto"
      })
      expect(result._tag === "Completed" && result.response.phases[0]?.steps[0]?.output).toMatchObject({
        city: "Porto"
      })
    }))

  it.scoped("no API key: no authorization header (a local server that needs none)", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.plan({ steps: [] }), FakeOpenAi.text("nothing to do"))
      const context = yield* Layer.build(
        Agent.layer({ model: OpenAi.layer({ model: "qwen2.5:7b", apiUrl: server.apiUrl }), tools: allTools })
      )
      const result = yield* Context.get(context, Pipeline.Pipeline).process({ request: "hi" })
      expect(result._tag === "Completed" && result.response.response).toBe("nothing to do")
      const requests = yield* server.requests
      expect(requests.map((r) => r.headers["authorization"])).toEqual([undefined, undefined])
      expect(requests.map((r) => at(r.body, "model"))).toEqual(["qwen2.5:7b", "qwen2.5:7b"])
    }))
})
