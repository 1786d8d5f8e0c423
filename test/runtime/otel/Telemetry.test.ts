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
 *
 * The OpenTelemetry conventions (issue 19; semantic-conventions v1.41.1's
 * GenAI and HTTP client conventions), with an agent on the OpenAI provider
 * over real HTTP (test/support/FakeOpenAi.ts, which records request
 * headers): a model call is one CLIENT span `chat {gen_ai.request.model}`
 * with `gen_ai.provider.name`, `gen_ai.operation.name`, the model asked for
 * and the one that answered, usage and the server, and no deprecated
 * `gen_ai.system`; `gen_ai.client.token.usage` points carry the requested
 * model as `gen_ai.request.model` and the reported one as
 * `gen_ai.response.model`; `gen_ai.client.operation.duration` has one
 * point per ask (retries included), in seconds with the conventions'
 * bucket bounds, and `error.type` on an ask that failed (as its span);
 * no data point carries a `unit` attribute (the unit is the metric's); an
 * `http.client` span of a 429 or of a reset connection has error status;
 * requests carry `traceparent` / `b3` only when a tracer collects spans,
 * and always a User-Agent naming the library and its version, after the
 * user's own.
 */
import { EmbeddingModel } from "@effect/ai"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Either, Layer, Metric, Option, Redacted } from "effect"
import { Agent, Hook, Pipeline } from "effect-agent-pipeline"
import * as OpenAi from "effect-agent-pipeline/openai"
import * as Telemetry from "effect-agent-pipeline/otel"
import { readFileSync } from "node:fs"
import * as TelemetryExample from "../../../examples/readme/telemetry.js"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import * as Flaky from "../../support/FlakyModel.js"
import { makeHarness, plan, quoteStep } from "../../support/Harness.js"
import * as OtlpReceiver from "../../support/OtlpReceiver.js"
import type { ReceivedPoint, ReceivedSpan } from "../../support/OtlpReceiver.js"
import * as WireServer from "../../support/WireServer.js"

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

      // The unit is the metric's, never a data point's attribute (Effect carries it as a `unit` tag).
      expect(points.length).toBeGreaterThan(0)
      expect(points.filter((p) => "unit" in p.attributes || "time_unit" in p.attributes)).toEqual([])
      expect(onePoint(points, "pipeline.tool.duration", { "pipeline.tool.outcome": "succeeded" }).unit).toBe("ms")
    }).pipe(Effect.scoped))

  it.live("a model Layer that names no model: its calls are `chat` CLIENT spans with the reported model and tokens; gen_ai.client.token.usage arrives by reported model, purpose and token type, with no requested model", () =>
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
      expect(spans.filter((s) => s.name.startsWith("LanguageModel."))).toEqual([])
      const calls = spans.filter((s) => s.name === "chat")
      const call = (purpose: string) => calls.find((s) => s.attributes["pipeline.inference.purpose"] === purpose)!
      expect(calls.map((s) => s.kind)).toEqual([OtlpReceiver.SpanKind.client, OtlpReceiver.SpanKind.client])
      expect(call("planning").attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.output.type": "json",
        "gen_ai.response.model": "flaky-1",
        "gen_ai.usage.input_tokens": 310,
        "gen_ai.usage.output_tokens": 24
      })
      expect(call("synthesis").attributes).toMatchObject({
        "gen_ai.output.type": "text",
        "gen_ai.usage.input_tokens": 420,
        "gen_ai.usage.output_tokens": 6
      })
      for (const s of calls) {
        expect(s.attributes).not.toHaveProperty("gen_ai.request.model")
        expect(s.attributes).not.toHaveProperty("gen_ai.provider.name")
      }

      const points = receiver.latestPoints()
      const tokens = (purpose: string, type: string) =>
        onePoint(points, "gen_ai.client.token.usage", {
          "gen_ai.response.model": "flaky-1",
          "pipeline.inference.purpose": purpose,
          "gen_ai.token.type": type
        })
      expect(tokens("planning", "input").attributes).not.toHaveProperty("gen_ai.request.model")
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

const AZURE_KEY = "azure-key-canary-6f1d"
const GATEWAY_TOKEN = "gateway-token-canary-93ab"

/** The User-Agent token the providers send: `effect-agent-pipeline/<package.json version>`. */
const libraryAgent = `effect-agent-pipeline/${
  (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version
}`

/** The bucket bounds semantic-conventions v1.41.1 advise for gen_ai.client.operation.duration, in seconds. */
const durationBounds = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]

/** The model the test agents ask for, and the dated one the server says answered. */
const REQUESTED = "gpt-4.1-mini"
const REPORTED = "gpt-4.1-mini-2025-04-14"

/** `reply` as a server that reports `model` as the one that answered (FakeOpenAi echoes the request's model). */
const answeringAs = (reply: WireServer.Reply, model: string): WireServer.Reply => ({
  ...reply,
  render: (request) => reply.render({ ...request, body: { ...(request.body as Record<string, unknown>), model } })
})

/** An agent on the OpenAI provider (Responses API) at `server`, asking for `model`. */
const openAiAgent = (
  server: FakeOpenAi.FakeOpenAi,
  model: string,
  transformClient?: (client: HttpClient.HttpClient) => HttpClient.HttpClient
) =>
  Agent.layer({
    model: OpenAi.layer({ model, apiUrl: server.apiUrl, apiKey: Redacted.make("sk-test"), transformClient }),
    tools: allTools
  })

/** Runs one request on `agent`, which must complete. */
const askOnce = <E>(agent: Layer.Layer<Pipeline.Pipeline, E>, requestId: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(agent)
    const result = yield* Context.get(context, Pipeline.Pipeline).process({ request: "quote ACME", requestId })
    expect(result._tag).toBe("Completed")
  }).pipe(Effect.scoped)

/** Runs one request on `agent` whose planning ask fails. */
const askFailing = <E>(agent: Layer.Layer<Pipeline.Pipeline, E>, requestId: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(agent)
    const failure = yield* Effect.flip(
      Context.get(context, Pipeline.Pipeline).process({ request: "quote ACME", requestId })
    )
    expect(failure).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
  }).pipe(Effect.scoped)

describe("Telemetry: GenAI and HTTP conventions (issue 19)", () => {
  it.live("an agent on OpenAI over HTTP: `chat {requested model}` CLIENT spans with provider, requested and reported model, usage; error status on a 429 and a reset attempt; trace context and User-Agent on every request; token usage by requested and reported model; one operation duration per ask, error.type on a refused one; no unit attribute", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        answeringAs(
          FakeOpenAi.plan(plan([quoteStep("s1")]), { usage: { input_tokens: 310, output_tokens: 24 } }),
          REPORTED
        ),
        // Synthesis: rate limited, then the connection reset, then an answer (three attempts, one ask).
        FakeOpenAi.error(429, "slow down", { headers: { "retry-after-ms": "0" } }),
        WireServer.reset,
        answeringAs(FakeOpenAi.text("ACME is at 42.", { usage: { input_tokens: 420, output_tokens: 6 } }), REPORTED)
      )
      // A user's own User-Agent: the library's is appended to it. And credentials in headers the
      // platform does not mask by itself (Azure's `api-key`, a gateway's token): never on a span.
      const userAgent = HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequest.setHeader("user-agent", "desk-app/2.1"),
          HttpClientRequest.setHeader("api-key", AZURE_KEY),
          HttpClientRequest.setHeader("x-gateway-token", GATEWAY_TOKEN)
        )
      )
      // A second server refuses the ask outright (a 400 is not retried): a failed ask.
      const refusing = yield* FakeOpenAi.make
      yield* refusing.enqueue(FakeOpenAi.error(400, "unsupported parameter"))
      yield* exporting(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
        Effect.zipRight(
          askOnce(openAiAgent(server, REQUESTED, userAgent), "otlp-wire"),
          askFailing(openAiAgent(refusing, REQUESTED), "otlp-wire-refused")
        )
      )
      expect(receiver.rejected()).toEqual([])
      const port = Number(new URL(server.url).port)

      // Spans: one GenAI client span per ask, @effect/ai's LanguageModel span merged into it.
      const spans = receiver.spans()
      const request = spans.find((s) => s.attributes["pipeline.request.id"] === "otlp-wire")!
      const trace = spans.filter((s) => s.traceId === request.traceId)
      expect(trace.filter((s) => s.name.startsWith("LanguageModel."))).toEqual([])
      const calls = trace.filter((s) => s.name.startsWith("chat"))
      expect(calls.map((s) => s.name)).toEqual([`chat ${REQUESTED}`, `chat ${REQUESTED}`])
      const call = (purpose: string) => calls.find((s) => s.attributes["pipeline.inference.purpose"] === purpose)!
      for (const s of calls) {
        expect(s.kind).toBe(OtlpReceiver.SpanKind.client)
        expect(s.statusCode).toBe(OtlpReceiver.StatusCode.ok)
        expect(s.attributes).toMatchObject({
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": REQUESTED,
          "gen_ai.response.model": REPORTED,
          "server.address": "127.0.0.1",
          "server.port": port
        })
        expect(s.attributes).not.toHaveProperty("gen_ai.system")
        expect(s.attributes).not.toHaveProperty("error.type")
      }
      expect(call("planning").attributes).toMatchObject({
        "gen_ai.output.type": "json",
        "gen_ai.usage.input_tokens": 310,
        "gen_ai.usage.output_tokens": 24
      })
      expect(call("synthesis").attributes).toMatchObject({
        "gen_ai.output.type": "text",
        "gen_ai.usage.input_tokens": 420,
        "gen_ai.usage.output_tokens": 6
      })

      // HTTP attempts: the client spans under each ask; a 429 and a reset end with error status.
      const attempts = (s: ReceivedSpan) =>
        trace.filter((a) => a.parentSpanId === s.spanId && a.name.startsWith("http.client"))
          .sort((a, b) => (a.startNanos < b.startNanos ? -1 : 1))
      expect(attempts(call("planning")).map((a) => [a.statusCode, a.attributes["http.response.status_code"]]))
        .toEqual([[OtlpReceiver.StatusCode.ok, 200]])
      const [limited, reset, answered] = attempts(call("synthesis"))
      expect(attempts(call("synthesis"))).toHaveLength(3)
      for (const a of [limited!, reset!, answered!]) {
        expect(a.kind).toBe(OtlpReceiver.SpanKind.client)
        expect(a.attributes).toMatchObject({ "server.address": "127.0.0.1", "server.port": port })
      }
      expect(limited!.attributes).toMatchObject({ "http.response.status_code": 429, "error.type": "429" })
      expect(limited!.statusCode).toBe(OtlpReceiver.StatusCode.error)
      expect(reset!.attributes).not.toHaveProperty("http.response.status_code")
      // undici's code for a socket the server closed (or the kernel's, should the reset win the race).
      expect(reset!.attributes["error.type"]).toMatch(/^(UND_ERR_SOCKET|ECONNRESET)$/)
      expect(reset!.statusCode).toBe(OtlpReceiver.StatusCode.error)
      expect(answered!.attributes["http.response.status_code"]).toBe(200)
      expect(answered!.attributes).not.toHaveProperty("error.type")
      expect(answered!.statusCode).toBe(OtlpReceiver.StatusCode.ok)

      // The wire: every request carries the trace context of its attempt's span and both User-Agents.
      const sent = yield* server.requests
      expect(sent).toHaveLength(4)
      const sentBy = [...attempts(call("planning")), limited!, reset!, answered!]
      expect(sent.map((r) => r.headers["traceparent"])).toEqual(
        sentBy.map((a) => `00-${request.traceId}-${a.spanId}-01`)
      )
      // b3 single-header form: trace id, span id, sampled, parent span id (the ask's `chat` span).
      expect(sent.map((r) => r.headers["b3"])).toEqual(
        sentBy.map((a) => `${request.traceId}-${a.spanId}-1-${a.parentSpanId}`)
      )
      for (const r of sent) expect(r.headers["user-agent"]).toBe(`desk-app/2.1 ${libraryAgent}`)
      // The credentials went on the wire, and on no span (the header is there, masked).
      for (const r of sent) {
        expect([r.headers["api-key"], r.headers["x-gateway-token"]]).toEqual([AZURE_KEY, GATEWAY_TOKEN])
      }
      const exported = JSON.stringify(spans, (_key, value) => typeof value === "bigint" ? String(value) : value)
      expect(exported).not.toContain(AZURE_KEY)
      expect(exported).not.toContain(GATEWAY_TOKEN)
      expect(answered!.attributes).toHaveProperty("http.request.header.api-key")

      // Metrics: token usage by the model asked for and the one that answered; no unit attribute anywhere.
      const points = receiver.latestPoints()
      const tokens = (purpose: string, type: string) =>
        onePoint(points, "gen_ai.client.token.usage", {
          "gen_ai.request.model": REQUESTED,
          "pipeline.inference.purpose": purpose,
          "gen_ai.token.type": type
        })
      expect(tokens("planning", "input")).toMatchObject({ unit: "{token}", value: 1, sum: 310 })
      expect(tokens("planning", "output")).toMatchObject({ value: 1, sum: 24 })
      expect(tokens("synthesis", "input")).toMatchObject({ value: 1, sum: 420 })
      expect(tokens("synthesis", "output").attributes).toEqual({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": REQUESTED,
        "gen_ai.response.model": REPORTED,
        "gen_ai.token.type": "output",
        "pipeline.inference.purpose": "synthesis",
        "server.address": "127.0.0.1",
        "server.port": port
      })
      expect(pointsOf(points, "gen_ai.client.token.usage", { "gen_ai.request.model": REPORTED })).toEqual([])

      // gen_ai.client.operation.duration: one sample per ask (the synthesis ask's three attempts are one),
      // in seconds, with the conventions' bucket bounds and attributes; the refused ask with its span's error.type.
      const atPort = (metric: string, serverPort: number) =>
        points.filter((p) => p.metric === metric && p.attributes["server.port"] === serverPort)
      const durations = (serverPort: number) => atPort("gen_ai.client.operation.duration", serverPort)
      const asked = durations(port)
      expect(asked.map((p) => p.attributes["pipeline.inference.purpose"]).sort()).toEqual(["planning", "synthesis"])
      for (const p of asked) {
        expect(p).toMatchObject({ kind: "histogram", unit: "s", value: 1, bounds: durationBounds })
        expect(p.attributes).toEqual({
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": REQUESTED,
          "gen_ai.response.model": REPORTED,
          "pipeline.inference.purpose": p.attributes["pipeline.inference.purpose"],
          "server.address": "127.0.0.1",
          "server.port": port
        })
        expect(p.sum).toBeGreaterThan(0)
        expect(p.sum).toBeLessThan(60)
      }
      const refusedPort = Number(new URL(refusing.url).port)
      const [refused] = durations(refusedPort)
      expect(durations(refusedPort)).toHaveLength(1)
      expect(refused).toMatchObject({ kind: "histogram", unit: "s", value: 1, bounds: durationBounds })
      expect(refused!.attributes).toEqual({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": REQUESTED,
        "pipeline.inference.purpose": "planning",
        "server.address": "127.0.0.1",
        "server.port": refusedPort,
        "error.type": "400"
      })
      const refusedSpan = spans.find((s) => s.name.startsWith("chat") && s.attributes["server.port"] === refusedPort)
      expect(refusedSpan?.attributes["error.type"]).toBe(refused!.attributes["error.type"])
      expect(atPort("gen_ai.client.token.usage", refusedPort)).toEqual([])

      expect(points.filter((p) => "unit" in p.attributes || "time_unit" in p.attributes)).toEqual([])
    }).pipe(Effect.scoped))

  it.live("an embeddings call on OpenAI is one `embeddings {requested model}` CLIENT span, its HTTP request under it, and one operation duration sample", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const server = yield* FakeOpenAi.make
      const embeddings = OpenAi.layerEmbeddings({
        model: "text-embedding-3-small",
        apiUrl: server.apiUrl,
        apiKey: Redacted.make("sk-test"),
        dimensions: 8
      })
      yield* exporting(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
        Effect.flatMap(EmbeddingModel.EmbeddingModel, (model) => model.embedMany(["ACME", "weather"])).pipe(
          Effect.provide(embeddings)
        )
      )
      const spans = receiver.spans()
      expect(spans.filter((s) => s.name.startsWith("EmbeddingModel."))).toEqual([])
      const call = only(spans, "embeddings text-embedding-3-small")
      expect(call.kind).toBe(OtlpReceiver.SpanKind.client)
      expect(call.attributes).toMatchObject({
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "text-embedding-3-small",
        "gen_ai.embeddings.dimension.count": 8,
        "server.address": "127.0.0.1",
        "server.port": Number(new URL(server.url).port)
      })
      const http = spans.filter((s) => s.parentSpanId === call.spanId)
      expect(http.map((s) => [s.name, s.kind, s.attributes["http.response.status_code"]])).toEqual([
        ["http.client POST", OtlpReceiver.SpanKind.client, 200]
      ])
      const [sent] = yield* server.requests
      expect(sent!.headers["traceparent"]).toBe(`00-${call.traceId}-${http[0]!.spanId}-01`)
      expect(sent!.headers["user-agent"]).toBe(libraryAgent)
      // The call is one gen_ai.client.operation.duration sample, with the span's attributes.
      const durations = receiver.latestPoints().filter((p) =>
        p.metric === "gen_ai.client.operation.duration" &&
        p.attributes["server.port"] === call.attributes["server.port"]
      )
      expect(durations.map((p) => [p.unit, p.value, p.attributes])).toEqual([["s", 1, {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "text-embedding-3-small",
        "server.address": "127.0.0.1",
        "server.port": call.attributes["server.port"]
      }]])
    }).pipe(Effect.scoped))

  it.live("no trace context goes to the provider unless a tracer collects spans (none configured, or tracing disabled); the User-Agent always does", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const server = yield* FakeOpenAi.make
      const twice = () => server.enqueue(FakeOpenAi.plan(plan([quoteStep("s1")])), FakeOpenAi.text("ACME is at 42."))
      const agent = openAiAgent(server, "gpt-4.1-nano")
      // No tracer: OTEL_EXPORTER_OTLP_ENDPOINT unset (the export Layer is empty).
      yield* twice()
      yield* exporting({}, askOnce(agent, "otlp-untraced"))
      // A tracer that exports, but tracing disabled for the request.
      yield* twice()
      yield* exporting(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
        Effect.withTracerEnabled(askOnce(agent, "otlp-tracing-off"), false)
      )
      const sent = yield* server.requests
      expect(sent).toHaveLength(4)
      for (const r of sent) {
        expect(r.headers).not.toHaveProperty("traceparent")
        expect(r.headers).not.toHaveProperty("b3")
        expect(r.headers["user-agent"]).toBe(libraryAgent)
      }
      expect(receiver.spans().filter((s) => s.name.startsWith("http.client") || s.name.startsWith("chat"))).toEqual([])
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
