/**
 * The pipeline's metrics (see src/runtime/PipelineMetrics.ts), read back
 * from Effect's global registry: a request's duration by mode and outcome,
 * tool calls by tool and outcome, hook-run durations by hook, point,
 * operation and outcome — recorded only while spans are collected — model
 * token usage, and GenAI operation durations (one per ask of a model, its
 * retries included; `error.type` when it failed).
 *
 * The registry is process-wide, so every test reads the change in a series
 * (or uses names no other test uses).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Metric, MetricState, Stream, TestClock } from "effect"
import { Agent, Approval, Hook, Pipeline, PipelineMetrics } from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import * as Flaky from "../support/FlakyModel.js"
import { makeHarness, plan, quoteStep, tradeStep } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"

/** The series of metric `name` whose tags are exactly `tags`, if any was recorded. */
const series = (name: string, tags: Readonly<Record<string, string>>) =>
  Effect.map(Metric.snapshot, (pairs) =>
    pairs.find((pair) => {
      if (pair.metricKey.name !== name || pair.metricKey.tags.length !== Object.keys(tags).length) return false
      return pair.metricKey.tags.every((label) => tags[label.key] === label.value)
    })?.metricState)

/** How many samples a histogram series holds (0 when it was never recorded). */
const samples = (name: string, tags: Readonly<Record<string, string>>) =>
  Effect.map(series(name, tags), (state) => {
    if (state === undefined) return 0
    if (!MetricState.isHistogramState(state)) throw new Error(`${name} is not a histogram`)
    return state.count
  })

/** A counter series' count (0 when it was never recorded). */
const count = (name: string, tags: Readonly<Record<string, string>>) =>
  Effect.map(series(name, tags), (state) => {
    if (state === undefined) return 0
    if (!MetricState.isCounterState(state)) throw new Error(`${name} is not a counter`)
    return Number(state.count)
  })

const request = (mode: string, outcome: string) => ({
  "pipeline.mode": mode,
  "pipeline.request.outcome": outcome,
  unit: "ms"
})

const QUOTE = "demo-tools/stock-service/stock_quote"
const TRADE = "demo-tools/trading-service/execute_trade"

describe("PipelineMetrics: requests", () => {
  it.effect("pipeline.request.duration: one sample per request, tagged by mode and outcome", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.required({
            name: "gov",
            afterPlanning: (ctx, p) => ctx.request === "refuse" ? Effect.fail("no") : Effect.succeed(p)
          })
        ],
        script: {
          plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")]), plan([quoteStep("s1")])],
          synthesis: "done"
        }
      })
      const before = {
        succeeded: yield* samples("pipeline.request.duration", request("pipeline", "succeeded")),
        failed: yield* samples("pipeline.request.duration", request("pipeline", "failed")),
        stream: yield* samples("pipeline.request.duration", request("stream", "succeeded"))
      }
      yield* h.pipeline.process({ request: "quote ACME" })
      yield* Effect.flip(h.pipeline.process({ request: "refuse" }))
      yield* Stream.runDrain(h.pipeline.stream({ request: "quote ACME" }))
      expect(yield* samples("pipeline.request.duration", request("pipeline", "succeeded"))).toBe(before.succeeded + 1)
      expect(yield* samples("pipeline.request.duration", request("pipeline", "failed"))).toBe(before.failed + 1)
      expect(yield* samples("pipeline.request.duration", request("stream", "succeeded"))).toBe(before.stream + 1)
    }))

  it.effect("pipeline.request.duration: a series reads back through Metric.tagged in tag order (the JSDoc example)", () =>
    Effect.gen(function*() {
      const series = PipelineMetrics.requestDuration.pipe(
        Metric.tagged("pipeline.mode", "workflow"),
        Metric.tagged("pipeline.request.outcome", "succeeded"),
        Metric.tagged("unit", "ms")
      )
      const before = (yield* Metric.value(series)).count
      const h = yield* makeHarness({ script: { plans: [], synthesis: "done" } })
      yield* h.pipeline.executePlanWithSynthesis({ request: "quote ACME" }, plan([quoteStep("s1")]))
      expect((yield* Metric.value(series)).count).toBe(before + 1)
    }))

  it.effect("pipeline.request.duration: a suspension and a rejected resume have their own outcomes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        approval: { evaluate: () => Effect.succeed(Approval.suspend("needs a human")) },
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      const suspendedBefore = yield* samples("pipeline.request.duration", request("pipeline", "suspended"))
      const rejectedBefore = yield* samples("pipeline.request.duration", request("resume", "rejected"))
      const result = yield* h.pipeline.process({ request: "quote ACME" })
      if (result._tag !== "Suspended") throw new Error(`expected a suspension, got ${result._tag}`)
      yield* h.pipeline.resume(result.checkpoint.checkpointId, "reject")
      expect(yield* samples("pipeline.request.duration", request("pipeline", "suspended"))).toBe(suspendedBefore + 1)
      expect(yield* samples("pipeline.request.duration", request("resume", "rejected"))).toBe(rejectedBefore + 1)
    }))
})

describe("PipelineMetrics: tool calls", () => {
  it.effect("pipeline.tool.calls and pipeline.tool.duration: by tool and outcome; a denied call is counted denied", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "no-trades",
            guard: {
              toolCall: (call, proceed) =>
                call.payload.capability === "execute_trade" ? Hook.deny("no trades") : proceed
            }
          })
        ],
        script: { plans: [plan([quoteStep("s1"), tradeStep("s2")])], synthesis: "done" }
      })
      const tags = (tool: string, outcome: string) => ({ "pipeline.tool.name": tool, "pipeline.tool.outcome": outcome })
      const quotes = yield* count("pipeline.tool.calls", { ...tags(QUOTE, "succeeded"), unit: "{call}" })
      const denied = yield* count("pipeline.tool.calls", { ...tags(TRADE, "denied"), unit: "{call}" })
      const timed = yield* samples("pipeline.tool.duration", { ...tags(QUOTE, "succeeded"), unit: "ms" })
      yield* h.pipeline.process({ request: "quote and trade" })
      expect(yield* count("pipeline.tool.calls", { ...tags(QUOTE, "succeeded"), unit: "{call}" })).toBe(quotes + 1)
      expect(yield* count("pipeline.tool.calls", { ...tags(TRADE, "denied"), unit: "{call}" })).toBe(denied + 1)
      expect(yield* samples("pipeline.tool.duration", { ...tags(QUOTE, "succeeded"), unit: "ms" })).toBe(timed + 1)
    }))
})

describe("PipelineMetrics: hook runs", () => {
  const hookTags = (name: string, stage: string, outcome: string, operation?: string) => ({
    "pipeline.hook.name": name,
    "pipeline.hook.stage": stage,
    ...(operation === undefined ? {} : { "pipeline.operation": operation }),
    "pipeline.hook.outcome": outcome,
    unit: "ms"
  })

  const hooks = (prefix: string) => [
    Hook.make({ name: `${prefix}-ok`, beforePlanning: () => Effect.succeed({}) }),
    Hook.make({ name: `${prefix}-flaky`, afterExecution: () => Effect.fail(new Error("down")) }),
    Hook.make({ name: `${prefix}-ops`, around: { toolCall: () => Effect.void } })
  ]

  it.effect("pipeline.hook.duration: recorded with the hook's span, by hook, point, operation and outcome", () => {
    const tracing = InMemoryTracing.make()
    return Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: hooks("traced"),
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "quote ACME" })
      expect(yield* samples("pipeline.hook.duration", hookTags("traced-ok", "before_planning", "succeeded"))).toBe(1)
      expect(yield* samples("pipeline.hook.duration", hookTags("traced-flaky", "after_execution", "failed"))).toBe(1)
      expect(
        yield* samples("pipeline.hook.duration", hookTags("traced-ops", "around_tool_call", "succeeded", "tool_call"))
      )
        .toBe(1)
      // One sample per spanned run: the hook spans and the samples agree.
      expect(InMemoryTracing.hookSpans(tracing.spans())).toHaveLength(3)
    }).pipe(Effect.provide(tracing.layer))
  })

  it.effect("pipeline.hook.duration: nothing is recorded while no tracer collects spans (the hot path does no metric work)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: hooks("untraced"),
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "untraced-1" })
      expect((yield* h.record("untraced-1")).hookInvocations).toHaveLength(3)
      const recorded = (yield* Metric.snapshot).filter((pair) =>
        pair.metricKey.name === "pipeline.hook.duration" &&
        pair.metricKey.tags.some((label) => label.key === "pipeline.hook.name" && label.value.startsWith("untraced-"))
      )
      expect(recorded).toEqual([])
    }))
})

describe("PipelineMetrics: token usage", () => {
  const tokenTags = (model: string, type: string, extra: Readonly<Record<string, string>> = {}) => ({
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": model,
    "gen_ai.token.type": type,
    "pipeline.inference.purpose": "plan",
    unit: "{token}",
    ...extra
  })

  const sumOf = (model: string, type: string, extra?: Readonly<Record<string, string>>) =>
    Effect.map(
      series("gen_ai.client.token.usage", tokenTags(model, type, extra)),
      (state) =>
        state !== undefined && MetricState.isHistogramState(state) ? { count: state.count, sum: state.sum } : undefined
    )

  it.effect("recordTokenUsage: one gen_ai.client.token.usage sample per token type, tagged by model, purpose and type", () =>
    Effect.gen(function*() {
      yield* PipelineMetrics.recordTokenUsage({
        model: "unit-model-a",
        purpose: "plan",
        inputTokens: 812,
        outputTokens: 64
      })
      yield* PipelineMetrics.recordTokenUsage({
        model: "unit-model-a",
        purpose: "plan",
        inputTokens: 100,
        outputTokens: 6
      })
      expect(yield* sumOf("unit-model-a", "input")).toEqual({ count: 2, sum: 912 })
      expect(yield* sumOf("unit-model-a", "output")).toEqual({ count: 2, sum: 70 })
    }))

  it.effect("unsafeRecordTokenUsage: the provider tag when known; a missing or invalid count is not a sample", () =>
    Effect.gen(function*() {
      PipelineMetrics.unsafeRecordTokenUsage({
        model: "unit-model-b",
        provider: "anthropic",
        purpose: "plan",
        inputTokens: 5
      })
      PipelineMetrics.unsafeRecordTokenUsage({
        model: "unit-model-b",
        provider: "anthropic",
        purpose: "plan",
        inputTokens: -1,
        outputTokens: Number.NaN
      })
      expect(yield* sumOf("unit-model-b", "input", { "gen_ai.provider.name": "anthropic" })).toEqual({
        count: 1,
        sum: 5
      })
      expect(yield* sumOf("unit-model-b", "output", { "gen_ai.provider.name": "anthropic" })).toBeUndefined()
      // Without the provider, a different series.
      expect(yield* sumOf("unit-model-b", "input")).toBeUndefined()
    }))

  it.effect("issue 19: the model asked for is gen_ai.request.model, the one the server reported gen_ai.response.model; the server when known; a model not known is no tag", () =>
    Effect.gen(function*() {
      PipelineMetrics.unsafeRecordTokenUsage({
        provider: "openai",
        model: "unit-model-c",
        responseModel: "unit-model-c-2025-04-14",
        serverAddress: "api.example.test",
        serverPort: 443,
        purpose: "plan",
        inputTokens: 7
      })
      const reported = {
        "gen_ai.provider.name": "openai",
        "gen_ai.response.model": "unit-model-c-2025-04-14",
        "server.address": "api.example.test",
        "server.port": "443"
      }
      expect(yield* sumOf("unit-model-c", "input", reported)).toEqual({ count: 1, sum: 7 })
      // No requested model (a model Layer that names none): the series has no gen_ai.request.model tag.
      PipelineMetrics.unsafeRecordTokenUsage({ responseModel: "unit-model-d-1", purpose: "plan", outputTokens: 3 })
      const state = yield* series("gen_ai.client.token.usage", {
        "gen_ai.operation.name": "chat",
        "gen_ai.response.model": "unit-model-d-1",
        "gen_ai.token.type": "output",
        "pipeline.inference.purpose": "plan",
        unit: "{token}"
      })
      expect(state !== undefined && MetricState.isHistogramState(state) ? state.sum : undefined).toBe(3)
    }))
})

describe("PipelineMetrics: GenAI operation duration", () => {
  /** semantic-conventions v1.41.1 (gen-ai-metrics.md): the advised bucket boundaries, in seconds. */
  const specBounds = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]

  const durationOf = (tags: Readonly<Record<string, string>>) =>
    Effect.map(series("gen_ai.client.operation.duration", { ...tags, unit: "s" }), (state) => {
      if (state === undefined) return { count: 0, sum: 0 }
      if (!MetricState.isHistogramState(state)) throw new Error("gen_ai.client.operation.duration is not a histogram")
      return { count: state.count, sum: state.sum }
    })

  /** Samples of the metric over all its series. */
  const allSamples = Effect.map(
    Metric.snapshot,
    (pairs) =>
      pairs.filter((pair) => pair.metricKey.name === "gen_ai.client.operation.duration").reduce(
        (n, pair) => n + (MetricState.isHistogramState(pair.metricState) ? pair.metricState.count : 0),
        0
      )
  )

  it.effect("recordOperationDuration: a sample in seconds with the conventions' bucket bounds and tags; error.type on a failure; an invalid duration is no sample", () =>
    Effect.gen(function*() {
      const model = {
        provider: "openai",
        model: "unit-model-e",
        responseModel: "unit-model-e-1",
        serverAddress: "api.example.test",
        serverPort: 443
      }
      // In the order the series carries them (Metric.tagged finds a series by its tags in order).
      const tags = {
        "gen_ai.operation.name": "chat",
        "pipeline.inference.purpose": "planning",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "unit-model-e",
        "gen_ai.response.model": "unit-model-e-1",
        "server.address": "api.example.test",
        "server.port": "443"
      }
      yield* PipelineMetrics.recordOperationDuration({ ...model, purpose: "planning", seconds: 1.5 })
      PipelineMetrics.unsafeRecordOperationDuration({ ...model, purpose: "planning", seconds: 0.25 })
      PipelineMetrics.unsafeRecordOperationDuration({ ...model, purpose: "planning", seconds: 0.5, errorType: "429" })
      PipelineMetrics.unsafeRecordOperationDuration({ ...model, purpose: "planning", seconds: -1 })
      PipelineMetrics.unsafeRecordOperationDuration({ ...model, purpose: "planning", seconds: Number.NaN })
      expect(yield* durationOf(tags)).toEqual({ count: 2, sum: 1.75 })
      expect(yield* durationOf({ ...tags, "error.type": "429" })).toEqual({ count: 1, sum: 0.5 })
      // An embeddings call: no purpose; a model that names nothing: only the operation.
      PipelineMetrics.unsafeRecordOperationDuration({ operation: "embeddings", model: "unit-embed-e", seconds: 0.1 })
      expect(yield* durationOf({ "gen_ai.operation.name": "embeddings", "gen_ai.request.model": "unit-embed-e" }))
        .toEqual({ count: 1, sum: 0.1 })
      // The histogram's bounds: the ones the conventions advise (Effect adds +Infinity as the last bucket).
      const state = yield* series("gen_ai.client.operation.duration", { ...tags, unit: "s" })
      if (state === undefined || !MetricState.isHistogramState(state)) throw new Error("no histogram")
      expect(state.buckets.map(([bound]) => bound)).toEqual([...specBounds, Number.POSITIVE_INFINITY])
      // Reading the series through the public metric and Metric.tagged.
      const tagged = Object.entries({ ...tags, unit: "s" }).reduce(
        (metric, [key, value]) => Metric.tagged(metric, key, value),
        PipelineMetrics.operationDuration
      )
      expect((yield* Metric.value(tagged)).count).toBe(2)
    }))

  /** An agent on a scripted-per-call model (it names no model; it reports `flaky-1` as the one that answered). */
  const flakyAgent = (replies: ReadonlyArray<Flaky.Reply>, options?: Pipeline.PipelineOptions) =>
    Effect.map(
      Layer.build(Agent.layer({ model: Flaky.make(replies).layer, tools: allTools, options })),
      (context) => Context.get(context, Pipeline.Pipeline)
    )

  const ask = (purpose: string, extra: Readonly<Record<string, string>> = {}) => ({
    "gen_ai.operation.name": "chat",
    "pipeline.inference.purpose": purpose,
    ...extra
  })
  const answered = { "gen_ai.response.model": "flaky-1" }
  const NO_STEPS = JSON.stringify(plan([]))

  it.scoped("one sample per ask, its retries included (the wait too), recorded with no tracer installed", () =>
    Effect.gen(function*() {
      const before = {
        planning: yield* durationOf(ask("planning", answered)),
        synthesis: yield* durationOf(ask("synthesis", answered))
      }
      const pipeline = yield* flakyAgent([
        Flaky.fail(Flaky.httpStatus(429, { "retry-after": "2" })),
        Flaky.text(NO_STEPS),
        Flaky.text("answer")
      ])
      const fiber = yield* Effect.fork(pipeline.process({ request: "q", requestId: "duration-retried" }))
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.join(fiber))._tag).toBe("Completed")
      // Two planning attempts, one ask: one sample of 2 seconds (the TestClock's), no error.type.
      expect(yield* durationOf(ask("planning", answered))).toEqual({
        count: before.planning.count + 1,
        sum: before.planning.sum + 2
      })
      expect((yield* durationOf(ask("synthesis", answered))).count).toBe(before.synthesis.count + 1)
    }))

  it.scoped("a failed ask's sample has error.type (timeout, the HTTP status) — the value its span gets; an interrupted ask is no sample", () => {
    const tracing = InMemoryTracing.make()
    return Effect.gen(function*() {
      const before = {
        timeout: yield* durationOf(ask("planning", { "error.type": "timeout" })),
        refused: yield* durationOf(ask("planning", { "error.type": "400" }))
      }
      const hung = yield* flakyAgent([Flaky.hang], { modelTimeout: "5 seconds", modelRetries: 0 })
      const fiber = yield* Effect.fork(Effect.flip(hung.process({ request: "q", requestId: "duration-timeout" })))
      yield* TestClock.adjust("5 seconds")
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "PlanningError", reason: "timed_out" })
      const refused = yield* flakyAgent([Flaky.fail(Flaky.httpStatus(400))])
      expect(yield* Effect.flip(refused.process({ request: "q", requestId: "duration-400" })))
        .toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
      expect(yield* durationOf(ask("planning", { "error.type": "timeout" }))).toEqual({
        count: before.timeout.count + 1,
        sum: before.timeout.sum + 5
      })
      expect((yield* durationOf(ask("planning", { "error.type": "400" }))).count).toBe(before.refused.count + 1)
      const chatSpans = tracing.spans().filter((s) => s.name === "chat")
      expect(chatSpans.map((s) => s.attributes["error.type"])).toEqual(["timeout", "400"])

      // Interrupted while the model is asked: the span ends, no sample is recorded.
      const samples = yield* allSamples
      const stuck = yield* flakyAgent([Flaky.hang], { modelTimeout: "1 minute" })
      const interrupted = yield* Effect.fork(stuck.process({ request: "q", requestId: "duration-interrupted" }))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(interrupted)
      expect(yield* allSamples).toBe(samples)
    }).pipe(Effect.provide(tracing.layer))
  })
})
