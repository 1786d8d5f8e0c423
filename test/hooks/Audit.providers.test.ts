/**
 * The audit of model calls on the real provider paths (issue 23): the
 * OpenAI and Anthropic clients over HTTP against local servers speaking
 * their wire formats (test/support/FakeOpenAi.ts, FakeAnthropic.ts), a
 * retried call and a streamed synthesis included; and the scripted model
 * of `Agent.layerTest`. The provider and the model asked for come from the
 * provider's Layer (`ModelIdentity`), the model id from the server's answer.
 */
import type { LanguageModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Logger, Option, Redacted, Schema, Stream } from "effect"
import { Agent, type ExecutionRecord, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as OpenAi from "effect-agent-pipeline/openai"
import { weatherForecast } from "../../examples/readme/tools.js"
import { allTools } from "../../examples/shared/DemoTools.js"
import * as Audit from "../../src/hooks/Audit.js"
import * as FakeAnthropic from "../support/FakeAnthropic.js"
import * as FakeOpenAi from "../support/FakeOpenAi.js"
import { plan } from "../support/Harness.js"

const PRICES = {
  "gpt-4.1-mini": { inputPerMillion: 0.4, outputPerMillion: 1.6 },
  "claude-sonnet-4": { inputPerMillion: 3, outputPerMillion: 15 }
}
/** The live tests' log lines go nowhere (the audit's log line is tested in Audit.test.ts). */
const quiet = Logger.replace(Logger.defaultLogger, Logger.none)
const OPTIONS: Pipeline.PipelineOptions = { modelRetries: 1, modelRetryDelay: "1 millis", modelTimeout: "5 seconds" }

const agentOn = <E>(model: Layer.Layer<LanguageModel.LanguageModel, E>) =>
  Effect.gen(function*() {
    const audit = yield* Audit.hook({ prices: PRICES })
    const context = yield* Layer.build(Agent.layer({ model, tools: allTools, hooks: [audit], options: OPTIONS }))
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      record: (requestId: string) =>
        Effect.map(Effect.orDie(store.get(requestId)), (r) => Option.getOrThrowWith(r, () => new Error(requestId)))
    }
  })

const eventsOf = (record: ExecutionRecord.ExecutionRecord) =>
  record.hookInvocations
    .filter((i) => i.name === "model-audit")
    .flatMap((i) => i.effects)
    .map((e) => Schema.decodeUnknownSync(Audit.AuditEvent)(e.data))

describe("audit over the providers' HTTP APIs", () => {
  it.scopedLive("issue 23: OpenAI: a 503 then an answer — two planning events (failed 503, succeeded), provider openai, costed from the reported usage", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.error(503, "upstream down"),
        FakeOpenAi.plan(plan([]), { usage: { input_tokens: 1000, output_tokens: 500 } }),
        FakeOpenAi.text("Sunny.", { usage: { input_tokens: 200, output_tokens: 50 } })
      )
      const a = yield* agentOn(
        OpenAi.layer({ model: "gpt-4.1-mini", apiUrl: server.apiUrl, apiKey: Redacted.make("sk-test-audit-key") })
      )
      yield* a.pipeline.process({ request: "weather?", requestId: "oa-audit" })
      const record = yield* a.record("oa-audit")
      const events = eventsOf(record)
      expect(events.map((e) => [e.purpose, e.model, e.outcome, e.errorType, e.provider, e.requestedModel])).toEqual([
        ["planning", "primary", "failed", "503", "openai", "gpt-4.1-mini"],
        ["planning", "primary", "succeeded", undefined, "openai", "gpt-4.1-mini"],
        ["synthesis", "primary", "succeeded", undefined, "openai", "gpt-4.1-mini"]
      ])
      expect(events[1]).toMatchObject({ modelId: "gpt-4.1-mini", inputTokens: 1000, outputTokens: 500, cost: 0.0012 })
      expect(events[2]).toMatchObject({ inputTokens: 200, outputTokens: 50, cost: (200 * 0.4 + 50 * 1.6) / 1e6 })
      // No key anywhere in what the audit wrote.
      expect(JSON.stringify(record.hookInvocations)).not.toContain("sk-test-audit-key")
    }).pipe(Effect.provide(quiet)))

  it.scopedLive("issue 23: Anthropic: a streamed synthesis is one streamed event, provider anthropic, priced by the table", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.plan(plan([]), { usage: { input_tokens: 100, output_tokens: 10 } }),
        FakeAnthropic.text("Sunny in Lisbon.", { usage: { input_tokens: 300, output_tokens: 20 } })
      )
      const a = yield* agentOn(
        Anthropic.layer({ model: "claude-sonnet-4", apiUrl: server.apiUrl, apiKey: Redacted.make("sk-ant-test") })
      )
      yield* Stream.runDrain(a.pipeline.stream({ request: "weather?", requestId: "an-audit" }))
      const events = eventsOf(yield* a.record("an-audit"))
      expect(events.map((e) => [e.purpose, e.streamed, e.outcome, e.provider, e.requestedModel, e.price])).toEqual([
        ["planning", false, "succeeded", "anthropic", "claude-sonnet-4", "claude-sonnet-4"],
        ["synthesis", true, "succeeded", "anthropic", "claude-sonnet-4", "claude-sonnet-4"]
      ])
      expect(events[0]).toMatchObject({ inputTokens: 100, outputTokens: 10, cost: (100 * 3 + 10 * 15) / 1e6 })
      expect(events[1]?.outputTokens).toBe(20)
    }).pipe(Effect.provide(quiet)))
})

describe("audit on the scripted model (Agent.layerTest)", () => {
  it.effect("issue 23: the scripted model's calls are audited with its identity; it is not priced", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      yield* pipeline.process({ request: "Weather in Lisbon?", requestId: "scripted" })
      const record = yield* (yield* Agent.TestAgent).record("scripted")
      expect(eventsOf(record).map((e) => [e.purpose, e.provider, e.requestedModel, e.outcome, e.costUnavailable]))
        .toEqual([
          ["planning", "effect_agent_pipeline", "scripted", "succeeded", "unknown_model"],
          ["synthesis", "effect_agent_pipeline", "scripted", "succeeded", "unknown_model"]
        ])
    }).pipe(
      Effect.provide(Agent.layerTest({
        tools: [weatherForecast],
        hooks: Effect.map(Audit.hook(), (audit) => [audit]),
        script: { plans: [{ steps: [] }], synthesis: "Sunny." }
      }))
    ))
})
