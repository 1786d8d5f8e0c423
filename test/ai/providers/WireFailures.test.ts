/**
 * The model policy over real HTTP (issue 9, "Tested over real HTTP"): the
 * whole pipeline through the real OpenAI and Anthropic clients against the
 * local wire servers, each misbehaviour with its documented outcome and a
 * truthful record —
 *
 * - malformed JSON and a schema-violating plan: re-asked, then the typed
 *   `PlanningError` `invalid_plan` keeping the raw output;
 * - 429 (with `retry-after`) then success; a 200 whose body is broken, then
 *   success;
 * - a 500 storm that exhausts the retries: `PlanningError` `model_failed`;
 * - a response slower than the model timeout: `timed_out`;
 * - a stream cut off mid-token: `SynthesisError`, the delivered text kept;
 * - a hung tool: its step `timed_out`, the request answered.
 *
 * Real time (the servers' delays are real): timeouts and retry delays are
 * short here.
 */
import { type LanguageModel, Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Redacted, Schema, Stream } from "effect"
import {
  Agent,
  type AgentResponse,
  type ExecutionRecord,
  ExecutionStore,
  Pipeline,
  type PipelineError,
  ToolRegistry
} from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as OpenAi from "effect-agent-pipeline/openai"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as FakeAnthropic from "../../support/FakeAnthropic.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import { plan, quoteStep } from "../../support/Harness.js"
import * as WireServer from "../../support/WireServer.js"

const FAST: Pipeline.PipelineOptions = { modelRetryDelay: "5 millis", modelTimeout: "2 seconds" }

const Stuck = Tool.make("stuck", { description: "never answers", parameters: {}, success: Schema.String })
const stuck = ToolRegistry.entry({
  namespace: "test-tools",
  agent: "stuck-service",
  tool: Stuck,
  handler: () => Effect.never
})
const stuckStep = {
  step_id: "s1",
  namespace: "test-tools",
  agent: "stuck-service",
  capability: "stuck",
  parameters: {}
}

const agentWith = (model: Layer.Layer<LanguageModel.LanguageModel>, options: Pipeline.PipelineOptions = {}) =>
  Effect.map(
    Layer.build(Agent.layer({ model, tools: [...allTools, stuck], options: { ...FAST, ...options } })),
    (context) => {
      const store = Context.get(context, ExecutionStore.ExecutionStore)
      return {
        pipeline: Context.get(context, Pipeline.Pipeline),
        record: (id: string) =>
          Effect.map(Effect.orDie(store.get(id)), (r) => Option.getOrThrowWith(r, () => new Error(`no record ${id}`)))
      }
    }
  )

const openAi = (server: FakeOpenAi.FakeOpenAi, options?: Pipeline.PipelineOptions) =>
  agentWith(OpenAi.layer({ model: "gpt-test", apiUrl: server.apiUrl, apiKey: Redacted.make("sk-test") }), options)

const anthropic = (server: FakeAnthropic.FakeAnthropic, options?: Pipeline.PipelineOptions) =>
  agentWith(
    Anthropic.layer({ model: "claude-test", apiUrl: server.url, apiKey: Redacted.make("sk-ant-test") }),
    options
  )

const callsOf = (record: ExecutionRecord.ExecutionRecord) =>
  (record.modelCalls ?? []).map((c) => [c.purpose, c.reask, c.attempt, c.outcome] as const)

const failureOf = <A>(exit: Exit.Exit<A, PipelineError.PipelineError>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Exit.causeOption(exit).pipe(
    Option.flatMap((cause) => (cause._tag === "Fail" ? Option.some(cause.error) : Option.none()))
  )
  return Option.getOrThrowWith(failure, () => new Error("expected a typed failure"))
}

const completed = (result: AgentResponse.PipelineResult) => {
  if (result._tag !== "Completed") throw new Error(`expected Completed, got ${result._tag}`)
  return result.response
}

describe("model policy over HTTP: plans that are not plans", () => {
  it.scopedLive("OpenAI: malformed JSON, then a schema-violating plan: re-asked once, then PlanningError invalid_plan keeping the raw output", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.text("{\"steps\": [ oops"), FakeOpenAi.json({ steps: "three of them" }))
      const agent = yield* openAi(server)
      const error = failureOf(yield* Effect.exit(agent.pipeline.process({ request: "quote ACME", requestId: "w-bad" })))
      expect(error).toMatchObject({
        _tag: "PlanningError",
        reason: "invalid_plan",
        output: "{\"steps\":\"three of them\"}"
      })
      // The re-ask went over the wire with the rejected output and the decode error.
      const received = yield* server.requests
      expect(received.length).toBe(2)
      const reask = JSON.stringify(received[1]!.body)
      expect(reask).toContain("rejected_output")
      expect(reask).toContain("oops")
      const record = yield* agent.record("w-bad")
      expect(callsOf(record)).toEqual([["planning", 0, 1, "succeeded"], ["planning", 1, 1, "succeeded"]])
      expect(record.modelCalls?.map((c) => c.output)).toEqual(["{\"steps\": [ oops", "{\"steps\":\"three of them\"}"])
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "PlanningError" })
    }))

  it.scopedLive("Anthropic: a schema-violating plan, then a good one: the re-ask answers the request", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.json({ steps: [{ step_id: "bad id!" }] }),
        FakeAnthropic.plan(plan([quoteStep("q1")])),
        FakeAnthropic.text("ACME is up.")
      )
      const agent = yield* anthropic(server)
      const response = completed(yield* agent.pipeline.process({ request: "quote ACME", requestId: "a-reask" }))
      expect(response.response).toBe("ACME is up.")
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status])).toEqual([["q1", "succeeded"]])
      expect(callsOf(yield* agent.record("a-reask"))).toEqual([
        ["planning", 0, 1, "succeeded"],
        ["planning", 1, 1, "succeeded"],
        ["synthesis", 0, 1, "succeeded"]
      ])
    }))
})

describe("model policy over HTTP: transient failures", () => {
  it.scopedLive("OpenAI: 429 with retry-after, then success: the retry waits for it; both attempts recorded", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.error(429, "slow down", { headers: { "retry-after-ms": "150" } }),
        FakeOpenAi.plan(plan([quoteStep("q1")])),
        FakeOpenAi.text("ACME is up.")
      )
      const agent = yield* openAi(server)
      const response = completed(yield* agent.pipeline.process({ request: "quote ACME", requestId: "w-429" }))
      expect(response.response).toBe("ACME is up.")
      const record = yield* agent.record("w-429")
      expect(callsOf(record)).toEqual([
        ["planning", 0, 1, "failed"],
        ["planning", 0, 2, "succeeded"],
        ["synthesis", 0, 1, "succeeded"]
      ])
      const [first, second] = record.modelCalls ?? []
      expect(first?.error).toContain("429")
      // The second attempt started after the asked-for wait.
      expect(second!.startedAt - (first!.startedAt + first!.durationMs)).toBeGreaterThanOrEqual(140)
    }))

  it.scopedLive("Anthropic: 429 then success", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.error(429, "rate limited", { headers: { "retry-after": "0" } }),
        FakeAnthropic.plan(plan([])),
        FakeAnthropic.text("fine")
      )
      const agent = yield* anthropic(server)
      expect(completed(yield* agent.pipeline.process({ request: "q", requestId: "a-429" })).response).toBe("fine")
      expect(yield* server.requests).toHaveLength(3)
    }))

  it.scopedLive("OpenAI: a 200 with a body that is not a response is a provider fault: retried, not re-asked", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.brokenBody,
        WireServer.notJson(),
        FakeOpenAi.plan(plan([])),
        FakeOpenAi.text("ok")
      )
      const agent = yield* openAi(server)
      expect(completed(yield* agent.pipeline.process({ request: "q", requestId: "w-broken" })).response).toBe("ok")
      expect(callsOf(yield* agent.record("w-broken"))).toEqual([
        ["planning", 0, 1, "failed"],
        ["planning", 0, 2, "failed"],
        ["planning", 0, 3, "succeeded"],
        ["synthesis", 0, 1, "succeeded"]
      ])
    }))

  it.scopedLive("OpenAI: a 500 storm exhausts the retries: PlanningError model_failed after 1 + modelRetries attempts, each recorded", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(...Array.from({ length: 4 }, () => FakeOpenAi.error(500, "upstream on fire")))
      const agent = yield* openAi(server, { modelRetries: 3 })
      const error = failureOf(yield* Effect.exit(agent.pipeline.process({ request: "q", requestId: "w-500" })))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
      expect(yield* server.requests).toHaveLength(4)
      const record = yield* agent.record("w-500")
      expect(callsOf(record)).toEqual([1, 2, 3, 4].map((n) => ["planning", 0, n, "failed"]))
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "PlanningError" })
    }))
})

describe("model policy over HTTP: time", () => {
  it.scopedLive("OpenAI: a response slower than the model timeout: each attempt timed out, then PlanningError timed_out", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        WireServer.delayed(FakeOpenAi.plan(plan([])), "3 seconds"),
        WireServer.delayed(FakeOpenAi.plan(plan([])), "3 seconds")
      )
      const agent = yield* openAi(server, { modelTimeout: "300 millis", modelRetries: 1 })
      const error = failureOf(yield* Effect.exit(agent.pipeline.process({ request: "q", requestId: "w-slow" })))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "timed_out" })
      const record = yield* agent.record("w-slow")
      expect(callsOf(record)).toEqual([["planning", 0, 1, "timed_out"], ["planning", 0, 2, "timed_out"]])
      for (const call of record.modelCalls ?? []) expect(call.durationMs).toBeGreaterThanOrEqual(290)
    }))

  it.scopedLive("OpenAI: a stream cut off mid-token: SynthesisError, the tokens delivered before the cut kept in the record", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.plan(plan([])),
        WireServer.cut(
          FakeOpenAi.text("The answer is forty two.", { deltas: ["The ", "answer ", "is ", "forty ", "two."] }),
          {
            afterEvents: 6,
            midEvent: true
          }
        )
      )
      const agent = yield* openAi(server)
      const tokens: Array<string> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(agent.pipeline.stream({ request: "q", requestId: "w-cut" }), (event) =>
          Effect.sync(() => {
            if (event._tag === "Token") tokens.push(event.text)
          }))
      )
      expect(failureOf(exit)).toMatchObject({ _tag: "SynthesisError" })
      expect(tokens.length).toBeGreaterThan(0)
      expect(tokens.join("").length).toBeLessThan("The answer is forty two.".length)
      const record = yield* agent.record("w-cut")
      expect(record.deliveredText).toBe(tokens.join(""))
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "SynthesisError" })
      // Not retried (text was delivered): one streamed call, failed, its partial output kept.
      const streamed = (record.modelCalls ?? []).filter((c) => c.streamed)
      expect(streamed).toHaveLength(1)
      expect(streamed[0]).toMatchObject({ outcome: "failed", output: tokens.join("") })
      expect(yield* server.requests).toHaveLength(2)
    }))

  it.scopedLive("OpenAI: a hung tool: its step fails timed_out at toolTimeout and the model answers from what it has", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.plan(plan([stuckStep, quoteStep("q1")])), FakeOpenAi.text("Partial: ACME only."))
      const agent = yield* openAi(server, { toolTimeout: "200 millis" })
      const response = completed(yield* agent.pipeline.process({ request: "q", requestId: "w-tool" }))
      expect(response.response).toBe("Partial: ACME only.")
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status])).toEqual([["s1", "failed"], [
        "q1",
        "succeeded"
      ]])
      expect(response.phases[0]!.steps[0]!.error).toContain("timed_out")
      // The synthesis prompt told the model the step failed.
      expect(JSON.stringify((yield* server.requests)[1]!.body)).toContain("timed_out")
    }))
})
