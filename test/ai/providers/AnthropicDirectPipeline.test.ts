/**
 * Issue 20, the pipeline on `Anthropic.layer` (over real HTTP on loopback,
 * test/support/FakeAnthropic.ts): it takes the direct path — the
 * `LanguageModel` service is never called, for plans, buffered or streamed
 * synthesis — and what that path does is what the `LanguageModel` path did:
 * the same requests reach the server, the same `chat {model}` spans (GenAI
 * attributes, kind, status, parents, their HTTP spans) are exported, and
 * an `@effect/ai` span transformer still sees every call.
 */
import { LanguageModel, Telemetry } from "@effect/ai"
import { AnthropicLanguageModel } from "@effect/ai-anthropic"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Context, Effect, Layer, Redacted, Stream } from "effect"
import { Agent, ExecutionStore, ModelProvider, Pipeline } from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import { allTools } from "../../../examples/shared/DemoTools.js"
import { identityOf, withIdentity } from "../../../src/ai/internal/modelClient.js"
import * as FakeAnthropic from "../../support/FakeAnthropic.js"
import { quoteStep, weatherStep } from "../../support/Harness.js"
import * as InMemoryTracing from "../../support/InMemoryTracing.js"
import * as WireServer from "../../support/WireServer.js"

const KEY = Redacted.make("sk-ant-test")
const optionsOn = (server: FakeAnthropic.FakeAnthropic) => ({
  model: "claude-test",
  apiUrl: server.apiUrl,
  apiKey: KEY
})

/** `@effect/ai-anthropic`'s LanguageModel alone over the same client and identity: the pipeline's LanguageModel path. */
const languageModelOnly = (server: FakeAnthropic.FakeAnthropic) =>
  withIdentity(
    AnthropicLanguageModel.layer({ model: "claude-test" }).pipe(
      Layer.provide(Anthropic.layerClient(optionsOn(server)))
    ),
    identityOf("anthropic", "claude-test", server.apiUrl)
  )

/** One planned, answered request, then one streamed: four model calls. */
const script = (server: FakeAnthropic.FakeAnthropic) =>
  server.enqueue(
    FakeAnthropic.plan({ steps: [weatherStep("w1", "Lisbon")] }),
    FakeAnthropic.text("Lisbon: sunny."),
    FakeAnthropic.plan({ steps: [quoteStep("q1")] }),
    FakeAnthropic.text("ACME is at 42.", { deltas: ["ACME ", "is at ", "42."] })
  )

const runPipeline = (model: Layer.Layer<LanguageModel.LanguageModel>) =>
  Effect.gen(function*() {
    const pipeline = Context.get(yield* Layer.build(Agent.layer({ model, tools: allTools })), Pipeline.Pipeline)
    const answered = yield* pipeline.process({ request: "What's the weather in Lisbon?", requestId: "ad-1" })
    expect(answered._tag === "Completed" && answered.response.response).toBe("Lisbon: sunny.")
    const events = Chunk.toReadonlyArray(
      yield* Stream.runCollect(pipeline.stream({ request: "quote ACME", requestId: "ad-2" }))
    )
    expect(events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))).toEqual(["ACME ", "is at ", "42."])
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

const body = (request: WireServer.ReceivedRequest) => JSON.stringify(request.body)

describe("the pipeline on Anthropic.layer", () => {
  it.scoped("takes the direct path: its LanguageModel is never called; without the direct functions it is (the spy bites)", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      const built = yield* Layer.build(Anthropic.layer(optionsOn(server)))
      const languageModel = Context.get(built, LanguageModel.LanguageModel)
      expect(ModelProvider.directOf(languageModel)).toBe(Context.get(built, ModelProvider.DirectModel))
      const calls: Array<string> = []
      spyOn(languageModel, calls)

      yield* script(server)
      yield* runPipeline(Layer.succeedContext(built))
      expect(calls).toEqual([])
      const direct = yield* server.requests
      expect(direct).toHaveLength(4)

      // The same Layer's LanguageModel without its direct functions (a spread copy drops them).
      const withoutDirect = Context.make(LanguageModel.LanguageModel, { ...languageModel })
      yield* script(server)
      yield* runPipeline(Layer.succeedContext(withoutDirect))
      expect(calls).toEqual(["generateObject", "generateText", "generateObject", "streamText"])
      const viaLanguageModel = (yield* server.requests).slice(4)
      // The same requests on the wire either way.
      expect(viaLanguageModel.map(body)).toEqual(direct.map(body))
      expect(viaLanguageModel.map((r) => [r.path, r.query, r.headers])).toEqual(
        direct.map((r) => [r.path, r.query, r.headers])
      )
    }))

  it.scoped("exports the same chat spans as the LanguageModel path: GenAI attributes, kind, status, parents, HTTP children", () =>
    Effect.gen(function*() {
      const spansOf = (model: (server: FakeAnthropic.FakeAnthropic) => Layer.Layer<LanguageModel.LanguageModel>) => {
        const tracing = InMemoryTracing.make()
        return Effect.gen(function*() {
          const server = yield* FakeAnthropic.make
          yield* script(server)
          yield* runPipeline(model(server))
          return InMemoryTracing.comparableModelSpans(tracing.spans(), Number(server.apiUrl.split(":").at(-1)))
        }).pipe(Effect.provide(tracing.layer))
      }
      const direct = yield* spansOf((server) => Anthropic.layer(optionsOn(server)))
      const viaLanguageModel = yield* spansOf(languageModelOnly)
      expect(direct).toEqual(viaLanguageModel)
      expect(direct.map((s) => s.name)).toEqual(Array(4).fill("chat claude-test"))
      expect(direct[0]!.attributes).toMatchObject({
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-test",
        "gen_ai.request.max_tokens": 4096,
        "gen_ai.response.model": "claude-test",
        "gen_ai.response.id": "msg_0",
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.output.type": "json"
      })
      expect(direct[3]!.attributes).toMatchObject({ "gen_ai.request.stream": true, "gen_ai.response.id": "msg_3" })
      for (const span of direct) expect(span.children).toHaveLength(1)
    }))

  it.scoped("with @effect/ai's span transformer installed, calls go through LanguageModel, so the transformer sees each", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      const formats: Array<string> = []
      const transformer = Layer.succeed(Telemetry.CurrentSpanTransformer, (options) => {
        formats.push(options.responseFormat.type)
      })
      yield* script(server)
      yield* runPipeline(Anthropic.layer(optionsOn(server)).pipe(Layer.provide(transformer)))
      expect(formats).toEqual(["json", "text", "json", "text"])
    }))
})

describe("a provider's stream that reports an error fails the request (fail closed)", () => {
  // Anthropic sends `event: error` (`overloaded_error`) inside a 200 stream; @effect/ai turns it
  // into an `error` part. Taken as the end of the answer, the request would complete with
  // half an answer. It fails instead, after the tokens already sent.
  const overloaded = WireServer.reply((request) =>
    WireServer.sseOf([
      ...FakeAnthropic.streamEvents(request, { kind: "text", text: "ACME is", deltas: ["ACME ", "is"] }, {
        input_tokens: 3,
        output_tokens: 2
      }).slice(0, 5),
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }
    ])
  )

  it.scoped("a mid-stream error event is a SynthesisError; the tokens sent stay sent; the record says failed", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(FakeAnthropic.plan({ steps: [quoteStep("q1")] }), overloaded)
      const agent = yield* Layer.build(Agent.layer({ model: Anthropic.layer(optionsOn(server)), tools: allTools }))
      const pipeline = Context.get(agent, Pipeline.Pipeline)
      const tokens: Array<string> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(
          pipeline.stream({ request: "quote ACME", requestId: "ad-overloaded" }),
          (event) => Effect.sync(() => event._tag === "Token" && tokens.push(event.text))
        )
      )
      expect(tokens).toEqual(["ACME ", "is"])
      expect(exit._tag).toBe("Failure")
      const error = exit._tag === "Failure" ? Cause.failureOption(exit.cause) : undefined
      expect(error?._tag === "Some" && error.value._tag).toBe("SynthesisError")
      const stored = yield* ExecutionStore.ExecutionStore.pipe(
        Effect.flatMap((store) => store.get("ad-overloaded")),
        Effect.provide(agent)
      )
      expect(stored._tag === "Some" && stored.value.lifecycle?.status).toBe("failed")
      expect(stored._tag === "Some" && JSON.stringify(stored.value.modelCalls)).toContain("overloaded_error")
    }))
})
