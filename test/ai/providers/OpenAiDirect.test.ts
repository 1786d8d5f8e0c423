/**
 * Issue 20, the pipeline on `OpenAi.layer` (over real HTTP on loopback,
 * test/support/FakeOpenAi.ts): it takes the direct path — the
 * `LanguageModel` service is never called, for plans, buffered or streamed
 * synthesis — and what that path does is what `@effect/ai-openai`'s
 * `LanguageModel` path does: the same request bodies reach the server (the
 * layer's `config` and a `withConfigOverride` in the caller's context
 * included), the same `chat {model}` spans are exported (GenAI attributes
 * with the response id, finish reasons and OpenAI's own, kind, status,
 * parents, HTTP children), the same typed failures come back, and an
 * `@effect/ai` span transformer still sees every call.
 */
import { LanguageModel, Telemetry } from "@effect/ai"
import { OpenAiLanguageModel } from "@effect/ai-openai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Context, Effect, Exit, Layer, Option, Redacted, Stream } from "effect"
import { Agent, ExecutionStore, ModelProvider, Pipeline } from "effect-agent-pipeline"
import * as OpenAi from "effect-agent-pipeline/openai"
import { allTools } from "../../../examples/shared/DemoTools.js"
import { identityOf, withIdentity } from "../../../src/ai/internal/modelClient.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import { quoteStep, weatherStep } from "../../support/Harness.js"
import * as InMemoryTracing from "../../support/InMemoryTracing.js"
import type * as WireServer from "../../support/WireServer.js"

const KEY = Redacted.make("sk-test-key")
/** Request settings the layer sends with every call (both paths). */
const CONFIG = { temperature: 0.2, top_p: 0.9, max_output_tokens: 512, service_tier: "auto", user: "u-1" } as const
const optionsOn = (server: FakeOpenAi.FakeOpenAi) => ({
  model: "gpt-test",
  apiUrl: server.apiUrl,
  apiKey: KEY,
  config: CONFIG
})

/** `@effect/ai-openai`'s LanguageModel alone over the same client and identity: the pipeline's LanguageModel path. */
const languageModelOnly = (server: FakeOpenAi.FakeOpenAi) =>
  withIdentity(
    OpenAiLanguageModel.layer({ model: "gpt-test", config: CONFIG }).pipe(
      Layer.provide(OpenAi.layerClient(optionsOn(server)))
    ),
    identityOf("openai", "gpt-test", server.apiUrl)
  )

/** One planned, answered request, then one streamed: four model calls. */
const script = (server: FakeOpenAi.FakeOpenAi) =>
  server.enqueue(
    FakeOpenAi.plan({ steps: [weatherStep("w1", "Lisbon")] }, { usage: { input_tokens: 310, output_tokens: 24 } }),
    FakeOpenAi.text("Lisbon: sunny."),
    FakeOpenAi.plan({ steps: [quoteStep("q1")] }),
    FakeOpenAi.text("ACME is at 42.", {
      deltas: ["ACME ", "is at ", "42."],
      usage: { input_tokens: 9, output_tokens: 3 }
    })
  )

const runPipeline = (
  model: Layer.Layer<LanguageModel.LanguageModel>,
  around: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = (effect) => effect
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Agent.layer({ model, tools: allTools }))
    const pipeline = Context.get(context, Pipeline.Pipeline)
    const answered = yield* around(pipeline.process({ request: "What's the weather in Lisbon?", requestId: "od-1" }))
    expect(answered._tag === "Completed" && answered.response.response).toBe("Lisbon: sunny.")
    const events = Chunk.toReadonlyArray(
      yield* around(Stream.runCollect(pipeline.stream({ request: "quote ACME", requestId: "od-2" })))
    )
    expect(events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))).toEqual(["ACME ", "is at ", "42."])
    // What the records keep of each model call (timings aside): output, usage, model id, outcome.
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    const calls = []
    for (const id of ["od-1", "od-2"]) {
      const record = Option.getOrThrow(yield* Effect.orDie(store.get(id)))
      for (const { durationMs: _d, startedAt: _s, ...call } of record.modelCalls ?? []) calls.push(call)
    }
    return calls
  })

/** Counts the calls made through `service`'s `LanguageModel` methods (its own object: what the Layer built). */
const spyOn = (service: LanguageModel.Service, calls: Array<string>) => {
  const { generateObject, generateText, streamText } = service
  Object.assign(service, {
    generateText: (options: never) => (calls.push("generateText"), generateText(options)),
    generateObject: (options: never) => (calls.push("generateObject"), generateObject(options)),
    streamText: (options: never) => (calls.push("streamText"), streamText(options))
  })
}

const body = (request: WireServer.ReceivedRequest) => request.body

describe("the pipeline on OpenAi.layer (issue 20: the direct path)", () => {
  it.scoped("takes the direct path: its LanguageModel is never called; the request bodies equal the LanguageModel path's (planning, synthesis, streaming, config)", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const built = yield* Layer.build(OpenAi.layer(optionsOn(server)))
      const languageModel = Context.get(built, LanguageModel.LanguageModel)
      expect(ModelProvider.directOf(languageModel)).toBe(Context.get(built, ModelProvider.DirectModel))
      const calls: Array<string> = []
      spyOn(languageModel, calls)

      yield* script(server)
      const directCalls = yield* runPipeline(Layer.succeedContext(built))
      expect(calls).toEqual([])
      const direct = yield* server.requests
      expect(direct).toHaveLength(4)

      // The same Layer's LanguageModel without its direct functions (a spread copy drops them).
      yield* script(server)
      const languageModelCalls = yield* runPipeline(
        Layer.succeedContext(Context.make(LanguageModel.LanguageModel, { ...languageModel }))
      )
      expect(calls).toEqual(["generateObject", "generateText", "generateObject", "streamText"])
      // The same model calls recorded: outputs, usage (total = input + output), model ids.
      expect(directCalls).toHaveLength(4)
      expect(directCalls).toEqual(languageModelCalls)
      expect(directCalls[0]).toMatchObject({ usage: { inputTokens: 310, outputTokens: 24, totalTokens: 334 } })
      const viaLanguageModel = (yield* server.requests).slice(4)
      // The same requests on the wire (deep equality) …
      expect(viaLanguageModel.map(body)).toEqual(direct.map(body))
      // (in fact key for key, in the same order)
      expect(viaLanguageModel.map((r) => JSON.stringify(r.body))).toEqual(direct.map((r) => JSON.stringify(r.body)))
      expect(viaLanguageModel.map((r) => [r.method, r.path, r.query, r.headers])).toEqual(
        direct.map((r) => [r.method, r.path, r.query, r.headers])
      )
      // … carrying the config, the plan's strict json_schema, and stream: true on the streamed call.
      for (const request of direct) expect(request.body).toMatchObject({ model: "gpt-test", ...CONFIG, include: [] })
      expect(direct.map((r) => (r.body as any).text.format.type)).toEqual([
        "json_schema",
        "text",
        "json_schema",
        "text"
      ])
      expect((direct[0]!.body as any).text.format).toMatchObject({ name: "routing_plan", strict: true })
      expect(direct.map((r) => (r.body as any).stream)).toEqual([undefined, undefined, undefined, true])
      expect((direct[1]!.body as any).input).toEqual([
        { role: "user", content: [{ type: "input_text", text: expect.stringContaining("Lisbon") }] }
      ])
    }))

  it.scoped("OpenAiLanguageModel.withConfigOverride around a request, and strict: false, reach the body on both paths alike", () =>
    Effect.gen(function*() {
      const override = OpenAiLanguageModel.withConfigOverride({ temperature: 1.5, text: { verbosity: "low" } })
      const bodiesOf = (model: (server: FakeOpenAi.FakeOpenAi) => Layer.Layer<LanguageModel.LanguageModel>) =>
        Effect.gen(function*() {
          const server = yield* FakeOpenAi.make
          yield* script(server)
          yield* runPipeline(model(server), override)
          return (yield* server.requests).map(body)
        })
      const lax = { ...CONFIG, strict: false }
      const direct = yield* bodiesOf((server) => OpenAi.layer({ ...optionsOn(server), config: lax }))
      const viaLanguageModel = yield* bodiesOf((server) =>
        withIdentity(
          OpenAiLanguageModel.layer({ model: "gpt-test", config: lax }).pipe(
            Layer.provide(OpenAi.layerClient(optionsOn(server)))
          ),
          identityOf("openai", "gpt-test", server.apiUrl)
        )
      )
      expect(direct).toEqual(viaLanguageModel)
      expect(direct[0]).toMatchObject({ temperature: 1.5, text: { verbosity: "low", format: { strict: false } } })
      expect(direct[0]).not.toHaveProperty("strict")
    }))

  it.scoped("exports the same chat spans as the LanguageModel path: GenAI attributes (response id, finish reasons, OpenAI's), kind, status, parents, HTTP children", () =>
    Effect.gen(function*() {
      const spansOf = (model: (server: FakeOpenAi.FakeOpenAi) => Layer.Layer<LanguageModel.LanguageModel>) => {
        const tracing = InMemoryTracing.make()
        return Effect.gen(function*() {
          const server = yield* FakeOpenAi.make
          yield* script(server)
          yield* runPipeline(model(server))
          return InMemoryTracing.comparableModelSpans(
            tracing.spans(),
            Number(server.apiUrl.split(":").at(-1)?.split("/")[0])
          )
        }).pipe(Effect.provide(tracing.layer))
      }
      const direct = yield* spansOf((server) => OpenAi.layer(optionsOn(server)))
      const viaLanguageModel = yield* spansOf(languageModelOnly)
      expect(direct).toEqual(viaLanguageModel)
      expect(direct.map((s) => s.name)).toEqual(Array(4).fill("chat gpt-test"))
      expect(direct[0]!.attributes).toMatchObject({
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 512,
        "gen_ai.response.model": "gpt-test",
        "gen_ai.response.id": "resp_0",
        "gen_ai.usage.input_tokens": 310,
        "gen_ai.usage.output_tokens": 24,
        "gen_ai.output.type": "json",
        "gen_ai.openai.request.response_format": "json_schema"
      })
      expect(direct[3]!.attributes).toMatchObject({
        "gen_ai.request.stream": true,
        "gen_ai.response.id": "resp_3",
        "gen_ai.usage.input_tokens": 9,
        "gen_ai.usage.output_tokens": 3
      })
      // (Effect's OpenTelemetry tracer exports an array attribute as its JSON.)
      expect(JSON.parse(String(direct[3]!.attributes["gen_ai.response.finish_reasons"]))).toEqual(["stop"])
      for (const span of direct) expect(span.children).toHaveLength(1)
    }))

  it.scoped("fails the same way: an error response is the same typed failure, with the same AI error behind it", () =>
    Effect.gen(function*() {
      const failureOf = (model: (server: FakeOpenAi.FakeOpenAi) => Layer.Layer<LanguageModel.LanguageModel>) =>
        Effect.gen(function*() {
          const server = yield* FakeOpenAi.make
          yield* server.enqueue(FakeOpenAi.error(400, "unsupported parameter: temperature"))
          const pipeline = Context.get(
            yield* Layer.build(Agent.layer({ model: model(server), tools: allTools })),
            Pipeline.Pipeline
          )
          const exit = yield* Effect.exit(pipeline.process({ request: "quote ACME", requestId: "od-f" }))
          const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
          const error = Option.getOrThrow(failure)
          const cause = "cause" in error ? error.cause as any : undefined
          return {
            tag: error._tag,
            reason: "reason" in error ? error.reason : undefined,
            detail: ("detail" in error ? error.detail : "").replace(/127\.0\.0\.1:\d+/g, "(server)"),
            cause: [cause?._tag, cause?.module, cause?.method, cause?.reason, cause?.response?.status]
          }
        })
      const direct = yield* failureOf((server) => OpenAi.layer(optionsOn(server)))
      expect(direct).toEqual(yield* failureOf(languageModelOnly))
      expect(direct).toMatchObject({
        tag: "PlanningError",
        reason: "model_failed",
        cause: ["HttpResponseError", "OpenAiClient", "createResponse", "StatusCode", 400]
      })
    }))

  it.scoped("with @effect/ai's span transformer installed, calls go through LanguageModel, so the transformer sees each", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const formats: Array<string> = []
      const transformer = Layer.succeed(Telemetry.CurrentSpanTransformer, (options) => {
        formats.push(options.responseFormat.type)
      })
      yield* script(server)
      yield* runPipeline(OpenAi.layer(optionsOn(server)).pipe(Layer.provide(transformer)))
      expect(formats).toEqual(["json", "text", "json", "text"])
    }))
})
