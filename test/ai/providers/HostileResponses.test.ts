/**
 * Issue 17, class 4 — "hostile values" from a provider: a response nested
 * about 5,000 levels deep, anywhere a client or the pipeline would read it
 * (a success body, an error body, an SSE event, the model's plan text),
 * once crashed a request with `RangeError: Maximum call stack size
 * exceeded` — a defect, with an empty record. Each is now a typed failure
 * (`PlanningError` / `SynthesisError`) whose error, `Cause.pretty` and
 * record print without throwing. A huge error body is read as a bounded
 * excerpt. Over real HTTP on loopback, through the real clients.
 */
import { type LanguageModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option, Redacted, type Scope, Stream } from "effect"
import { Agent, ExecutionStore, Pipeline, type PipelineError } from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as OpenAi from "effect-agent-pipeline/openai"
import * as util from "node:util"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as FakeAnthropic from "../../support/FakeAnthropic.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import { plan } from "../../support/Harness.js"
import * as WireServer from "../../support/WireServer.js"

const DEPTH = 5_000
const deepArray = "[".repeat(DEPTH) + "]".repeat(DEPTH)
const deepObject = "{\"a\":".repeat(DEPTH) + "1" + "}".repeat(DEPTH)

const OPTIONS: Pipeline.PipelineOptions = { modelRetries: 1, modelRetryDelay: "1 millis", modelTimeout: "2 seconds" }

const agentOn = (model: Layer.Layer<LanguageModel.LanguageModel>) =>
  Effect.map(
    Layer.build(Agent.layer({ model, tools: allTools, options: OPTIONS })),
    (context) => ({
      pipeline: Context.get(context, Pipeline.Pipeline),
      store: Context.get(context, ExecutionStore.ExecutionStore)
    })
  )

const openAi = (server: FakeOpenAi.FakeOpenAi) =>
  agentOn(OpenAi.layer({ model: "gpt-test", apiUrl: server.apiUrl, apiKey: Redacted.make("sk-test-hostile") }))
const anthropic = (server: FakeAnthropic.FakeAnthropic) =>
  agentOn(Anthropic.layer({ model: "claude-test", apiUrl: server.apiUrl, apiKey: Redacted.make("sk-ant-hostile") }))

/** The typed failure of `exit`; a defect anywhere in its cause fails the test with the defect. */
const typedFailure = (exit: Exit.Exit<unknown, PipelineError.PipelineError>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const defects = [...Cause.defects(exit.cause)]
  expect(defects.map(String)).toEqual([])
  return Option.getOrThrowWith(Cause.failureOption(exit.cause), () => new Error("expected a typed failure"))
}

/** Every way the failure is printed works (none overflows the stack on what it kept). */
const printable = (exit: Exit.Exit<unknown, PipelineError.PipelineError>, record: unknown) => {
  if (Exit.isSuccess(exit)) return
  expect(() => Cause.pretty(exit.cause, { renderErrorCause: true })).not.toThrow()
  expect(() => JSON.stringify(Cause.failureOption(exit.cause))).not.toThrow()
  expect(() => util.inspect(exit.cause, { depth: Infinity })).not.toThrow()
  expect(() => JSON.stringify(record)).not.toThrow()
}

/** A request on an agent allowed one re-ask (the default). */
const agentReasking = (pipeline: Pipeline.Pipeline.Service) =>
  pipeline.process({ request: "q", requestId: "deep-reask" })

const run = <E>(
  agent: Effect.Effect<
    { readonly pipeline: Pipeline.Pipeline.Service; readonly store: ExecutionStore.ExecutionStore.Service },
    E,
    Scope.Scope
  >,
  requestId: string,
  streamed = false
) =>
  Effect.gen(function*() {
    const { pipeline, store } = yield* agent
    const request = { request: "q", requestId }
    const exit: Exit.Exit<unknown, PipelineError.PipelineError> = streamed
      ? yield* Effect.exit(Stream.runDrain(pipeline.stream(request)))
      : yield* Effect.exit(pipeline.process(request))
    const record = Option.getOrUndefined(yield* Effect.orDie(store.get(requestId)))
    printable(exit, record)
    return { exit, record }
  })

describe("hostile values: provider responses nested 5,000 deep are typed failures, never a RangeError", () => {
  const buffered: ReadonlyArray<readonly [string, () => WireServer.Reply]> = [
    ["a 200 body that is an array 5,000 deep", () => WireServer.status(200, { body: deepArray })],
    ["a 200 body that is an object 5,000 deep", () => WireServer.status(200, { body: deepObject })],
    ["a 500 body (JSON) 5,000 deep", () => WireServer.status(500, { body: deepObject })],
    [
      "a 400 body (text) 5,000 deep",
      () => WireServer.status(400, { body: deepArray, headers: { "content-type": "text/plain" } })
    ],
    ["a status 999 with a body 5,000 deep", () => WireServer.status(999, { body: deepObject })]
  ]
  for (const [label, reply] of buffered) {
    it.scopedLive(`hostile values: OpenAI, ${label}: PlanningError, not a defect; error, Cause.pretty and record print`, () =>
      Effect.gen(function*() {
        const server = yield* FakeOpenAi.make
        yield* server.enqueue(reply(), reply())
        const { exit, record } = yield* run(openAi(server), "deep-openai")
        expect(typedFailure(exit)).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
        expect(record?.lifecycle).toMatchObject({ status: "failed", errorTag: "PlanningError" })
      }))
    it.scopedLive(`hostile values: Anthropic, ${label}: PlanningError, not a defect; error, Cause.pretty and record print`, () =>
      Effect.gen(function*() {
        const server = yield* FakeAnthropic.make
        yield* server.enqueue(reply(), reply())
        const { exit, record } = yield* run(anthropic(server), "deep-anthropic")
        expect(typedFailure(exit)).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
        expect(record?.lifecycle).toMatchObject({ status: "failed", errorTag: "PlanningError" })
      }))
  }

  for (const [label, text] of [["an array", deepArray], ["an object", deepObject]] as const) {
    it.scopedLive(`hostile values: a planning answer that is ${label} 5,000 deep is PlanningError invalid_plan over HTTP, re-asked, never a stack overflow`, () =>
      Effect.gen(function*() {
        const server = yield* FakeOpenAi.make
        const deep = FakeOpenAi.text(`{"steps":[{"step_id":"s1","parameters":${text}}]}`)
        yield* server.enqueue(deep, deep)
        const { exit, record } = yield* run(openAi(server), "deep-plan")
        const error = typedFailure(exit)
        expect(error).toMatchObject({ _tag: "PlanningError", reason: "invalid_plan" })
        expect(error.message).toMatch(/nests (deeper than 256 levels|too deep)/)
        // The model answered (twice: the answer was re-asked); the answers are kept as text.
        expect(record?.modelCalls?.map((call) => call.outcome)).toEqual(["succeeded", "succeeded"])
      }))
  }

  it.scopedLive("hostile values: a deep planning answer is re-asked like any bad plan, and a good answer then goes through", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.text(deepArray), FakeOpenAi.plan(plan([])), FakeOpenAi.text("fine"))
      const { pipeline } = yield* openAi(server)
      const result = yield* agentReasking(pipeline)
      expect(result._tag).toBe("Completed")
      const received = yield* server.requests
      expect(JSON.stringify(received[1]?.body)).toContain("rejected_output")
    }))

  it.scopedLive("hostile values: Anthropic, a stream event nested 5,000 deep: SynthesisError, not a defect", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.plan(plan([])),
        WireServer.reply(() => ({
          _tag: "Sse",
          headers: {},
          events: [{
            event: "content_block_delta",
            data: `{"type":"content_block_delta","index":0,"delta":${deepObject}}`
          }],
          eventDelay: undefined,
          cut: undefined
        }))
      )
      const { exit } = yield* run(anthropic(server), "deep-stream", true)
      expect(typedFailure(exit)).toMatchObject({ _tag: "SynthesisError", reason: "model_failed" })
    }))

  it.scopedLive("hostile values: OpenAI, a stream event nested 5,000 deep is skipped (the client skips what it cannot decode), never a defect", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.plan(plan([])),
        WireServer.reply(() => ({
          _tag: "Sse",
          headers: {},
          events: [{ event: "response.output_text.delta", data: deepObject }],
          eventDelay: undefined,
          cut: undefined
        }))
      )
      const { exit } = yield* run(openAi(server), "deep-stream-openai", true)
      if (Exit.isFailure(exit)) expect([...Cause.defects(exit.cause)]).toEqual([])
    }))
})

describe("hostile values: provider error bodies are read as a bounded excerpt", () => {
  it.scopedLive("hostile values: a 5 MB error body becomes a 2 KB excerpt in the error and the record", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const huge = FakeOpenAi.error(500, "x".repeat(5_000_000))
      yield* server.enqueue(huge, huge)
      const { exit, record } = yield* run(openAi(server), "huge-error")
      const error = typedFailure(exit)
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
      expect(JSON.stringify(error).length).toBeLessThan(20_000)
      expect(JSON.stringify(record).length).toBeLessThan(100_000)
      const cause: unknown = "cause" in error ? error.cause : undefined
      expect(cause).toMatchObject({ _tag: "HttpResponseError", response: { status: 500 } })
      const body = typeof cause === "object" && cause !== null && "body" in cause ? String(cause.body) : ""
      expect(body.length).toBeGreaterThan(1_000)
      expect(body.length).toBeLessThan(2_100)
    }))

  it.scopedLive("hostile values: a small error body is handed on as it came (the provider's message stays readable)", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(FakeAnthropic.error(400, "max_tokens: must be positive"))
      const { exit } = yield* run(anthropic(server), "small-error")
      const error = typedFailure(exit)
      expect(error.message).toContain("max_tokens: must be positive")
      const cause: unknown = "cause" in error ? error.cause : undefined
      expect(cause).toMatchObject({ _tag: "HttpResponseError", reason: "StatusCode", response: { status: 400 } })
    }))
})
