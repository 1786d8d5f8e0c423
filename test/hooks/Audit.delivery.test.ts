/**
 * How the audit's events are delivered besides the record (issue 23): one
 * log line per model call through Effect's `Logger` (captured by a test
 * Logger), the audit metrics (read back with `Metric.value`), both kept
 * with recording off; and the options, decoded into `InvalidAuditOptions`.
 *
 * Metrics live in Effect's global registry, shared by the test files of a
 * worker: each test that reads one uses a model name of its own, so its
 * series are its own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, Option, Schema } from "effect"
import { PipelineMetrics } from "effect-agent-pipeline"
import * as Audit from "../../src/hooks/Audit.js"
import * as Flaky from "../support/FlakyModel.js"
import { agent, auditEffects, auditLines, capture, driven, GPT, NO_STEPS } from "./AuditSupport.js"

describe("audit: the log line", () => {
  it.scoped("issue 23: each call is one log line at Info with the event's fields as annotations — never the prompt or output text", () =>
    Effect.gen(function*() {
      const { layer, lines } = capture()
      const a = yield* agent({
        replies: [
          Flaky.fail(Flaky.httpStatus(429)),
          Flaky.text(NO_STEPS, { inputTokens: 1000, outputTokens: 500 }),
          Flaky.text("SECRET-ANSWER-7 sk-live-abcdef", { inputTokens: 1, outputTokens: 1 })
        ],
        identity: { provider: "openai", model: "gpt-4.1-mini" },
        audit: { prices: GPT },
        options: { modelRetries: 1, modelRetryDelay: "1 millis" }
      })
      yield* driven(
        a.pipeline.process({ request: "SECRET-PROMPT-42 with key sk-live-12345", requestId: "logged" }),
        "1 millis"
      ).pipe(Effect.provide(layer))
      const audited = auditLines(lines)
      expect(audited.map((l) => [l.level, l.annotations["purpose"], l.annotations["outcome"]])).toEqual([
        ["INFO", "planning", "failed"],
        ["INFO", "planning", "succeeded"],
        ["INFO", "synthesis", "succeeded"]
      ])
      expect(audited[1]?.annotations).toMatchObject({
        requestId: "logged",
        model: "primary",
        modelId: "flaky-1",
        requestedModel: "gpt-4.1-mini",
        provider: "openai",
        inputTokens: 1000,
        outputTokens: 500,
        totalTokens: 1500,
        cost: 0.0012,
        currency: "USD",
        latencyMs: expect.any(Number)
      })
      expect(audited[0]?.annotations).toMatchObject({ errorType: "429", costUnavailable: "no_usage" })
      const text = JSON.stringify(audited)
      for (const secret of ["SECRET-PROMPT-42", "SECRET-ANSWER-7", "sk-live"]) expect(text).not.toContain(secret)
    }))

  it.scoped("issue 23: logLevel sets the line's level; None logs nothing (the effects remain)", () =>
    Effect.gen(function*() {
      const debug = capture()
      const a = yield* agent({ replies: [Flaky.text(NO_STEPS), Flaky.text("a")], audit: { logLevel: "Warning" } })
      yield* a.pipeline.process({ request: "q", requestId: "warn" }).pipe(Effect.provide(debug.layer))
      expect(auditLines(debug.lines).map((l) => l.level)).toEqual(["WARN", "WARN"])

      const none = capture()
      const b = yield* agent({ replies: [Flaky.text(NO_STEPS), Flaky.text("a")], audit: { logLevel: "None" } })
      yield* b.pipeline.process({ request: "q", requestId: "silent" }).pipe(Effect.provide(none.layer))
      expect(auditLines(none.lines)).toEqual([])
      expect(auditEffects(yield* b.record("silent"))).toHaveLength(2)
    }))
})

/** A series of the audit metrics, by its tags in order (the unit last). */
const series = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  tags: ReadonlyArray<readonly [string, string]>
) => tags.reduce((m, [key, value]) => Metric.tagged(m, key, value), metric)

const modelTags = (purpose: string, model: string) =>
  [
    ["pipeline.inference.purpose", purpose],
    ["pipeline.model.role", "primary"],
    ["gen_ai.provider.name", "openai"],
    ["gen_ai.request.model", model],
    ["gen_ai.response.model", "flaky-1"]
  ] as const

describe("audit: metrics", () => {
  it.scoped("issue 23: calls by model and outcome, latency and cost are counted — read back with Metric.value; tokens stay in gen_ai.client.token.usage", () =>
    Effect.gen(function*() {
      const model = "gpt-4.1-mini-audit-metrics"
      const a = yield* agent({
        replies: [
          Flaky.fail(Flaky.httpStatus(503)),
          Flaky.text(NO_STEPS, { inputTokens: 1000, outputTokens: 500 }),
          Flaky.text("a", { inputTokens: 2000, outputTokens: 1000 })
        ],
        identity: { provider: "openai", model },
        audit: { prices: { [model]: { inputPerMillion: 0.4, outputPerMillion: 1.6 } } },
        options: { modelRetries: 1, modelRetryDelay: "1 millis" }
      })
      yield* driven(a.pipeline.process({ request: "q", requestId: "metrics" }), "1 millis")

      const planning = modelTags("planning", model)
      const failedTags = [...planning.slice(0, 4), ["pipeline.model.outcome", "failed"], ["unit", "{call}"]] as const
      const calls = (purpose: string, outcome: string) =>
        Metric.value(
          series(Audit.calls, [...modelTags(purpose, model), ["pipeline.model.outcome", outcome], ["unit", "{call}"]])
        )
      // The failed attempt got no answer, so no response model.
      expect((yield* Metric.value(series(Audit.calls, failedTags))).count).toBe(1)
      expect((yield* calls("planning", "succeeded")).count).toBe(1)
      expect((yield* calls("synthesis", "succeeded")).count).toBe(1)
      const latency = yield* Metric.value(
        series(Audit.callDuration, [...planning, ["pipeline.model.outcome", "succeeded"], ["unit", "ms"]])
      )
      expect(latency.count).toBe(1)
      const cost = (purpose: string) =>
        Metric.value(series(Audit.cost, [...modelTags(purpose, model), ["unit", "{USD}"]]))
      expect((yield* cost("planning")).count).toBeCloseTo(0.0012, 12)
      expect((yield* cost("synthesis")).count).toBeCloseTo(0.0024, 12)
      // Tokens: the pipeline's own GenAI histogram, one sample per attempt and type.
      const tokens = yield* Metric.value(series(PipelineMetrics.tokenUsage, [
        ["gen_ai.operation.name", "chat"],
        ["gen_ai.token.type", "input"],
        ["pipeline.inference.purpose", "planning"],
        ["gen_ai.provider.name", "openai"],
        ["gen_ai.request.model", model],
        ["gen_ai.response.model", "flaky-1"],
        ["unit", "{token}"]
      ]))
      expect([tokens.count, tokens.sum]).toEqual([1, 1000])
    }))

  it.scoped("issue 23: with recording off there are no effects to record, but the log line and the metrics remain", () =>
    Effect.gen(function*() {
      const model = "gpt-audit-recording-off"
      const { layer, lines } = capture()
      const a = yield* agent({
        replies: [Flaky.text(NO_STEPS, { inputTokens: 1, outputTokens: 1 }), Flaky.text("a")],
        identity: { provider: "openai", model },
        options: { recording: false }
      })
      yield* a.pipeline.process({ request: "q", requestId: "off" }).pipe(Effect.provide(layer))
      expect(auditLines(lines).map((l) => l.annotations["purpose"])).toEqual(["planning", "synthesis"])
      const count = yield* Metric.value(
        series(Audit.calls, [...modelTags("planning", model), ["pipeline.model.outcome", "succeeded"], [
          "unit",
          "{call}"
        ]])
      )
      expect(count.count).toBe(1)
      expect(Option.isNone(yield* Effect.orDie(a.store.get("off")))).toBe(true)
    }))

  it.scoped("issue 23: metrics: false counts nothing (the log line and the effects remain)", () =>
    Effect.gen(function*() {
      const model = "gpt-audit-no-metrics"
      const a = yield* agent({
        replies: [Flaky.text(NO_STEPS), Flaky.text("a")],
        identity: { provider: "openai", model },
        audit: { metrics: false }
      })
      yield* a.pipeline.process({ request: "q", requestId: "no-metrics" })
      const count = yield* Metric.value(
        series(Audit.calls, [...modelTags("planning", model), ["pipeline.model.outcome", "succeeded"], [
          "unit",
          "{call}"
        ]])
      )
      expect(count.count).toBe(0)
      expect(auditEffects(yield* a.record("no-metrics"))).toHaveLength(2)
    }))
})

describe("audit: options", () => {
  const invalid = (options: unknown) => Effect.flip(Audit.hook(options as Audit.Options))

  it.effect("issue 23: options that do not decode fail with InvalidAuditOptions naming the option", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [
          { prices: { "gpt-4.1-mini": { inputPerMillion: -1, outputPerMillion: 1 } } },
          "prices.gpt-4.1-mini.inputPerMillion"
        ],
        [{ prices: { "gpt-4.1-mini": { inputPerMillion: 1 } } }, "prices.gpt-4.1-mini.outputPerMillion"],
        [
          { prices: { x: { inputPerMillion: Number.POSITIVE_INFINITY, outputPerMillion: 1 } } },
          "prices.x.inputPerMillion"
        ],
        [{ currency: "dollars" }, "currency"],
        [{ logLevel: "Loud" }, "logLevel"],
        [{ name: "" }, "name"],
        [{ metrics: "yes" }, "metrics"],
        [{ price: {} }, "price"],
        [[], "options"]
      ]
      for (const [options, option] of cases) {
        const error = yield* invalid(options)
        expect(error).toBeInstanceOf(Audit.InvalidAuditOptions)
        expect([error._tag, error.option]).toEqual(["InvalidAuditOptions", option])
        expect(error.message).toContain(`invalid audit option ${option}`)
      }
    }))

  it.effect("issue 23: a price table decodes from JSON text (configuration), and the hook is named by `name`", () =>
    Effect.gen(function*() {
      const prices = yield* Schema.decode(Audit.PriceTableFromJson)(
        "{\"gpt-4.1-mini\":{\"inputPerMillion\":0.4,\"outputPerMillion\":1.6}}"
      )
      expect(prices).toEqual(GPT)
      const hook = yield* Audit.hook({ prices, name: "llm-audit" })
      expect(hook.name).toBe("llm-audit")
      expect(typeof hook.around?.inference).toBe("function")
      const bad = yield* Effect.flip(Schema.decode(Audit.PriceTableFromJson)("{\"m\":{\"inputPerMillion\":\"1\"}}"))
      expect(bad._tag).toBe("ParseError")
    }))
})
