/**
 * OTLP/HTTP export (`effect-agent-pipeline/otel`), end to end over real
 * HTTP: agents run real requests with `Telemetry.layerConfig` pointed (by
 * `OTEL_EXPORTER_OTLP_ENDPOINT`) at a local receiver on 127.0.0.1
 * (test/support/OtlpReceiver.ts); closing the Layer flushes both exporters;
 * the test then reads what arrived — one span tree per request (request →
 * phase → planning / hook / tool / synthesis, parent ids intact), decision
 * attributes on hook spans, the short-circuit event, and the metrics
 * (request duration, hook duration by hook and outcome, tool-call outcomes,
 * the short-circuit counter). With the variable unset, nothing is sent and
 * the tracer stays Effect's built-in one.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Either, Layer, Metric, Option } from "effect"
import { Agent, Hook, Pipeline } from "effect-agent-pipeline"
import * as Telemetry from "effect-agent-pipeline/otel"
import * as TelemetryExample from "../../../examples/readme/telemetry.js"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as Flaky from "../../support/FlakyModel.js"
import { makeHarness, plan, quoteStep } from "../../support/Harness.js"
import * as OtlpReceiver from "../../support/OtlpReceiver.js"
import type { ReceivedPoint, ReceivedSpan } from "../../support/OtlpReceiver.js"

/** `Telemetry.layerConfig` reading `env` (and nothing else) as its configuration. */
const exportFrom = (env: Readonly<Record<string, string>>) =>
  Telemetry.layerConfig.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

/** Runs `body` with the export Layer, then closes it (its exporters flush). */
const exporting = <A, E>(env: Readonly<Record<string, string>>, body: Effect.Effect<A, E>) =>
  Effect.provide(body, exportFrom(env))

const only = (spans: ReadonlyArray<ReceivedSpan>, name: string): ReceivedSpan => {
  const found = spans.filter((s) => s.name === name)
  expect(found.map((s) => s.name), `exactly one span named ${name}`).toEqual([name])
  return found[0]!
}

const decisionOf = (span: ReceivedSpan) => ({
  policy: span.attributes["pipeline.hook.decision.policy"],
  action: span.attributes["pipeline.hook.decision.action"],
  reason: span.attributes["pipeline.hook.decision.reason"]
})

/** The data points of `metric` whose attributes include `tags`. */
const pointsOf = (points: ReadonlyArray<ReceivedPoint>, metric: string, tags: Readonly<Record<string, string>>) =>
  points.filter((p) => p.metric === metric && Object.entries(tags).every(([k, v]) => p.attributes[k] === v))

const onePoint = (points: ReadonlyArray<ReceivedPoint>, metric: string, tags: Readonly<Record<string, string>>) => {
  const found = pointsOf(points, metric, tags)
  expect(found, `one ${metric} point with ${JSON.stringify(tags)}`).toHaveLength(1)
  return found[0]!
}

/** The hooks of a test, named `<prefix>-…` (hook-run series are per name: each test has its own). */
const hooksNamed = (prefix: string) => [
  Hook.make({
    name: `${prefix}-context`,
    beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "desk notes" } })
  }),
  Hook.make({
    name: `${prefix}-policy`,
    beforePlanning: (ctx) =>
      Effect.succeed(
        /insider/.test(ctx.request)
          ? { decision: { kind: "authoritative" as const, shortCircuit: { response: "No.", source: "policy" } } }
          : undefined
      )
  }),
  Hook.make({ name: `${prefix}-ops`, around: { toolCall: () => Effect.void } }),
  Hook.make({ name: `${prefix}-flaky`, afterExecution: () => Effect.fail(new Error("audit backend down")) }),
  Hook.required({ name: `${prefix}-gov`, afterPlanning: (_ctx, p) => Effect.succeed(p) })
]

describe("Telemetry: OTLP/HTTP export to a local receiver", () => {
  it.live("one span tree per request, with decisions and the short-circuit event, arrives over OTLP/HTTP", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      yield* exporting(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "otlp-test-agent" },
        Effect.gen(function*() {
          const h = yield* makeHarness({
            hooks: hooksNamed("otlp"),
            script: { plans: [plan([quoteStep("s1")])], synthesis: "ACME is at 42." }
          })
          const answered = yield* h.pipeline.process({ request: "quote ACME", requestId: "otlp-1" })
          expect(answered._tag).toBe("Completed")
          const refused = yield* h.pipeline.process({ request: "insider news", requestId: "otlp-2" })
          expect(refused._tag).toBe("Completed")
        })
      )
      // Closing the Layer flushed the exporters: everything is here now.
      expect(receiver.rejected()).toEqual([])
      expect(
        receiver.requests().every((r) => r.method === "POST" && (r.url === "/v1/traces" || r.url === "/v1/metrics"))
      )
        .toBe(true)
      const spans = receiver.spans()
      expect(spans.length).toBeGreaterThan(0)
      expect(new Set(spans.map((s) => s.serviceName))).toEqual(new Set(["otlp-test-agent"]))

      const requests = spans.filter((s) => s.name === "pipeline.request")
      expect(requests.map((s) => s.attributes["pipeline.request.id"]).sort()).toEqual(["otlp-1", "otlp-2"])
      expect(new Set(requests.map((s) => s.traceId)).size).toBe(2)
      const byId = new Map(spans.map((s) => [s.spanId, s]))
      const parentOf = (
        span: ReceivedSpan
      ) => (span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId))
      const ancestors = (span: ReceivedSpan): ReadonlyArray<string> => {
        const parent = parentOf(span)
        return parent === undefined ? [] : [parent.name, ...ancestors(parent)]
      }

      // One tree per trace: a single root (the request), every parent arrived.
      for (const request of requests) {
        const trace = spans.filter((s) => s.traceId === request.traceId)
        expect(request.parentSpanId).toBeUndefined()
        expect(trace.filter((s) => s.parentSpanId === undefined)).toEqual([request])
        for (const span of trace) {
          if (span === request) continue
          expect(parentOf(span)?.traceId, `${span.name}'s parent arrived, in its trace`).toBe(request.traceId)
        }
      }

      // The answered request: request → phase → planning / hook / tool; synthesis under the request.
      const answered = requests.find((s) => s.attributes["pipeline.request.id"] === "otlp-1")!
      const trace = spans.filter((s) => s.traceId === answered.traceId)
      expect(answered.attributes["pipeline.mode"]).toBe("pipeline")
      const phase = only(trace, "pipeline.phase")
      expect(phase.parentSpanId).toBe(answered.spanId)
      expect(phase.attributes["pipeline.phase"]).toBe(1)
      expect(only(trace, "Planner.plan").parentSpanId).toBe(phase.spanId)
      const gov = only(trace, "pipeline.hook.after_planning.otlp-gov")
      expect(gov.parentSpanId).toBe(phase.spanId)
      expect(decisionOf(gov)).toEqual({ policy: "fail_closed", action: "continue", reason: "accepted" })
      const execution = only(trace, "pipeline.execution")
      expect(execution.parentSpanId).toBe(phase.spanId)
      const step = only(trace, "pipeline.step")
      expect(step.parentSpanId).toBe(execution.spanId)
      expect(step.attributes["pipeline.step.tool"]).toBe("demo-tools/stock-service/stock_quote")
      const observer = only(trace, "pipeline.hook.around_tool_call.otlp-ops")
      expect(ancestors(observer)).toEqual(["pipeline.step", "pipeline.execution", "pipeline.phase", "pipeline.request"])
      expect(observer.attributes["pipeline.operation"]).toBe("tool_call")
      const before = only(trace, "pipeline.before_planning")
      expect(before.parentSpanId).toBe(answered.spanId)
      expect(only(trace, "pipeline.hook.before_planning.otlp-context").parentSpanId).toBe(before.spanId)
      const flaky = only(trace, "pipeline.hook.after_execution.otlp-flaky")
      expect(flaky.parentSpanId).toBe(answered.spanId)
      expect(decisionOf(flaky)).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
      expect(flaky.attributes["pipeline.hook.outcome"]).toBe("failed")
      expect(flaky.attributes["pipeline.hook.error"]).toBe("audit backend down")
      const synthesis = only(trace, "pipeline.synthesis")
      expect(synthesis.parentSpanId).toBe(answered.spanId)
      expect(trace.filter((s) => ancestors(s).includes("pipeline.synthesis")).map((s) => s.name))
        .toContain("Synthesizer.synthesize")

      // The short-circuited request: its deciding hook's span carries the decision and the event; nothing was planned.
      const shortCircuited = requests.find((s) => s.attributes["pipeline.request.id"] === "otlp-2")!
      const refusedTrace = spans.filter((s) => s.traceId === shortCircuited.traceId)
      const policy = only(refusedTrace, "pipeline.hook.before_planning.otlp-policy")
      expect(ancestors(policy)).toEqual(["pipeline.before_planning", "pipeline.request"])
      expect(decisionOf(policy)).toEqual({ policy: "fail_closed", action: "short_circuit", reason: "authoritative" })
      expect(policy.events).toEqual([{
        name: "pipeline.short_circuit.decision",
        attributes: {
          "pipeline.short_circuit.hook": "otlp-policy",
          "pipeline.short_circuit.kind": "authoritative",
          "pipeline.short_circuit.reason": "authoritative",
          "pipeline.short_circuit.status": "accepted",
          "pipeline.short_circuit.source": "policy"
        }
      }])
      expect(refusedTrace.map((s) => s.name)).not.toContain("pipeline.phase")
      expect(refusedTrace.map((s) => s.name)).not.toContain("pipeline.synthesis")
    }).pipe(Effect.scoped))

  it.live("the metrics arrive over OTLP/HTTP: request and hook durations, tool-call outcomes, the short-circuit counter", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      yield* exporting(
        { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`, OTEL_SERVICE_NAME: "otlp-metrics-agent" },
        Effect.gen(function*() {
          const h = yield* makeHarness({
            hooks: hooksNamed("otlp-m"),
            script: { plans: [plan([quoteStep("s1")])], synthesis: "ACME is at 42." }
          })
          yield* h.pipeline.process({ request: "quote ACME" })
          yield* h.pipeline.process({ request: "insider news" })
        })
      )
      expect(receiver.rejected()).toEqual([])
      const points = receiver.latestPoints()
      expect(new Set(points.map((p) => p.serviceName))).toEqual(new Set(["otlp-metrics-agent"]))

      // Requests: both succeeded (the registry is process-wide: at least these two).
      const requests = onePoint(points, "pipeline.request.duration", {
        "pipeline.mode": "pipeline",
        "pipeline.request.outcome": "succeeded"
      })
      expect(requests.kind).toBe("histogram")
      expect(requests.unit).toBe("ms")
      expect(requests.value).toBeGreaterThanOrEqual(2)

      // Hook runs by hook, point, operation and outcome (these names are this test's own: exact counts).
      const hookRuns = (name: string, stage: string, outcome: string) =>
        onePoint(points, "pipeline.hook.duration", {
          "pipeline.hook.name": name,
          "pipeline.hook.stage": stage,
          "pipeline.hook.outcome": outcome
        })
      expect(hookRuns("otlp-m-context", "before_planning", "succeeded").value).toBe(2)
      expect(hookRuns("otlp-m-policy", "before_planning", "succeeded").value).toBe(2)
      expect(hookRuns("otlp-m-gov", "after_planning", "succeeded").value).toBe(1)
      expect(hookRuns("otlp-m-flaky", "after_execution", "failed").value).toBe(1)
      const observed = hookRuns("otlp-m-ops", "around_tool_call", "succeeded")
      expect(observed.attributes["pipeline.operation"]).toBe("tool_call")
      expect(observed.value).toBe(1)
      expect(observed.unit).toBe("ms")
      expect(
        pointsOf(points, "pipeline.hook.duration", {
          "pipeline.hook.name": "otlp-m-flaky",
          "pipeline.hook.outcome": "succeeded"
        })
      )
        .toEqual([])

      // Tool calls by tool and outcome.
      const calls = onePoint(points, "pipeline.tool.calls", {
        "pipeline.tool.name": "demo-tools/stock-service/stock_quote",
        "pipeline.tool.outcome": "succeeded"
      })
      expect(calls.kind).toBe("sum")
      expect(calls.unit).toBe("{call}")
      expect(calls.value).toBeGreaterThanOrEqual(1)

      // The short-circuit counter, labelled only by kind, reason and status.
      const decisions = onePoint(points, "orchestration.pipeline.short_circuit.decision", {
        kind: "authoritative",
        reason: "authoritative",
        status: "accepted"
      })
      expect(Object.keys(decisions.attributes).sort()).toEqual(["kind", "reason", "status"])
      expect(decisions.value).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.scoped))

  it.live("model calls carry GenAI attributes (model, tokens) on their spans, and gen_ai.client.token.usage arrives by model, purpose and token type", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const model = Flaky.make([
        Flaky.text(JSON.stringify(plan([quoteStep("s1")])), { inputTokens: 310, outputTokens: 24 }),
        Flaky.text("ACME is at 42.", { inputTokens: 420, outputTokens: 6 })
      ])
      yield* exporting(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
        Effect.gen(function*() {
          const context = yield* Layer.build(Agent.layer({ model: model.layer, tools: allTools }))
          const result = yield* Context.get(context, Pipeline.Pipeline).process({
            request: "quote ACME",
            requestId: "otlp-genai"
          })
          expect(result._tag).toBe("Completed")
        }).pipe(Effect.scoped)
      )
      expect(receiver.rejected()).toEqual([])
      const spans = receiver.spans()
      const planning = only(spans, "LanguageModel.generateObject")
      const synthesis = only(spans, "LanguageModel.generateText")
      expect(planning.attributes).toMatchObject({
        "gen_ai.response.model": "flaky-1",
        "gen_ai.usage.input_tokens": 310,
        "gen_ai.usage.output_tokens": 24
      })
      expect(synthesis.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 420, "gen_ai.usage.output_tokens": 6 })

      const points = receiver.latestPoints()
      const tokens = (purpose: string, type: string) =>
        onePoint(points, "gen_ai.client.token.usage", {
          "gen_ai.request.model": "flaky-1",
          "pipeline.inference.purpose": purpose,
          "gen_ai.token.type": type
        })
      expect(tokens("planning", "input")).toMatchObject({ kind: "histogram", value: 1, sum: 310 })
      expect(tokens("planning", "output")).toMatchObject({ value: 1, sum: 24 })
      expect(tokens("synthesis", "input")).toMatchObject({ value: 1, sum: 420 })
      expect(tokens("synthesis", "output")).toMatchObject({ value: 1, sum: 6 })
    }).pipe(Effect.scoped))

  it.live("OTEL_EXPORTER_OTLP_HEADERS are sent with every export; the service name defaults to effect-agent-pipeline", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      yield* exporting(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=secret%20one, x-tenant=desk"
        },
        Effect.gen(function*() {
          const h = yield* makeHarness({ script: { plans: [plan([])], synthesis: "hi" } })
          yield* h.pipeline.process({ request: "hello" })
        })
      )
      const posts = receiver.requests()
      expect(posts.map((r) => r.url).sort()).toEqual(["/v1/metrics", "/v1/traces"])
      for (const post of posts) {
        expect(post.headers["x-api-key"]).toBe("secret one")
        expect(post.headers["x-tenant"]).toBe("desk")
        expect(post.headers["content-type"]).toMatch(/^application\/json/)
      }
      expect(new Set(receiver.spans().map((s) => s.serviceName))).toEqual(new Set(["effect-agent-pipeline"]))
    }).pipe(Effect.scoped))
})

describe("Telemetry: the README example", () => {
  it.live("exports its request's spans when OTEL_EXPORTER_OTLP_ENDPOINT is set", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const result = yield* TelemetryExample.program.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url]])))
      )
      expect(result._tag).toBe("Completed")
      const spans = receiver.spans()
      expect(spans.filter((s) => s.name === "pipeline.request").map((s) => s.attributes["pipeline.mode"])).toEqual([
        "pipeline"
      ])
      expect(spans.map((s) => s.name)).toContain("pipeline.step")
      expect(new Set(spans.map((s) => s.traceId)).size).toBe(1)
    }).pipe(Effect.scoped))
})

describe("Telemetry: off unless configured", () => {
  const builtInTracer = Effect.runSync(Effect.tracer)

  it.live("with OTEL_EXPORTER_OTLP_ENDPOINT unset: the tracer is Effect's built-in one, nothing is sent, no hook run is measured", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      yield* exporting(
        { OTEL_SERVICE_NAME: "otlp-off-agent", OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=unused" },
        Effect.gen(function*() {
          expect(yield* Effect.tracer).toBe(builtInTracer)
          const h = yield* makeHarness({
            hooks: [Hook.make({ name: "otlp-off-hook", beforePlanning: () => Effect.succeed({}) })],
            script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
          })
          yield* h.pipeline.process({ request: "quote ACME", requestId: "otlp-off-1" })
          expect((yield* h.record("otlp-off-1")).hookInvocations.map((i) => i.name)).toEqual(["otlp-off-hook"])
        })
      )
      expect(receiver.requests()).toEqual([])
      const measured = (yield* Metric.snapshot).filter((pair) =>
        pair.metricKey.name === "pipeline.hook.duration" &&
        pair.metricKey.tags.some((label) => label.value === "otlp-off-hook")
      )
      expect(measured).toEqual([])
    }).pipe(Effect.scoped))

  it.effect("settings: unset, empty or disabled → None; a malformed endpoint or headers → ConfigError", () =>
    Effect.gen(function*() {
      const read = (env: Readonly<Record<string, string>>) =>
        Effect.either(
          Effect.withConfigProvider(Telemetry.settings, ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      expect(yield* read({})).toEqual(Either.right(Option.none()))
      expect(yield* read({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toEqual(Either.right(Option.none()))
      expect(yield* read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }))
        .toEqual(Either.right(Option.none()))
      const on = yield* read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })
      expect(Either.isRight(on) && Option.isSome(on.right) ? on.right.value.serviceName : undefined).toBe(
        "effect-agent-pipeline"
      )
      for (
        const env of [
          { OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" },
          { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" },
          { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_HEADERS: "novalue" }
        ]
      ) {
        const result = yield* read(env)
        expect(Either.isLeft(result), JSON.stringify(env)).toBe(true)
      }
      // The Layer fails the same way.
      const built = yield* Effect.either(
        Effect.scoped(Layer.build(exportFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://x" })))
      )
      expect(Either.isLeft(built)).toBe(true)
    }))
})
