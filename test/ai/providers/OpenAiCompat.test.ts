/**
 * Issue 19: the Chat Completions provider (`effect-agent-pipeline/openai-compat`)
 * over real HTTP on loopback, against a fake of each server that speaks it
 * with the server's own shapes (`test/support/FakeChatCompletions.ts`, built
 * from `test/fixtures/wire/`): vLLM, Ollama, llama.cpp, LM Studio, LiteLLM.
 *
 * - For each server an agent plans (structured output), runs a tool and
 *   streams its answer; what it sent is checked: `response_format`
 *   json_schema first; llama.cpp (an older build) rejects it with its real
 *   400 and is asked by a forced tool call; LiteLLM (UnsupportedParamsError)
 *   rejects json_schema and tools and is asked for plain JSON; the mode
 *   that answered is kept for the next planning call.
 * - Tools through `LanguageModel`: tool-call parts back, buffered and
 *   streamed (pieces gathered by index; Ollama's whole call in one chunk).
 * - Streams: usage from the usage chunk, a finish without one, the end of
 *   the body without `[DONE]`, a mid-stream `data: {"error": …}`.
 * - Errors: each server's error bodies (typed, status and message kept, the
 *   key never present), a 404 for an unknown model, bodies that do not read.
 * - The pipeline's policy applies: a 429 with `retry-after` is retried, a
 *   hang times out.
 */
import { type AiError, LanguageModel, Tool, Toolkit } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Context, Effect, Exit, Layer, Option, Redacted, Schema, Stream } from "effect"
import { Agent, type AgentResponse, type ExecutionRecord, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as OpenAiCompat from "effect-agent-pipeline/openai-compat"
import * as util from "node:util"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as Fake from "../../support/FakeChatCompletions.js"
import { plan, quoteStep, weatherStep } from "../../support/Harness.js"
import { PlanWire } from "../../support/Internal.js"
import * as WireServer from "../../support/WireServer.js"

const KEY = "sk-compat-test-0123456789abcdef"

const MODELS: Readonly<Record<Fake.Flavor, string>> = {
  vllm: "Qwen/Qwen2.5-7B-Instruct",
  ollama: "qwen2.5:7b",
  llamacpp: "qwen2.5-7b-instruct-q4_k_m.gguf",
  lmstudio: "qwen2.5-7b-instruct",
  litellm: "qwen"
}

const FAST: Pipeline.PipelineOptions = { modelRetryDelay: "5 millis", modelTimeout: "5 seconds" }

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** `body.a.b.c`, or `undefined`. */
const at = (body: unknown, ...path: ReadonlyArray<string | number>): unknown =>
  path.reduce<unknown>(
    (value, key) => (Array.isArray(value) ? value[key as number] : isRecord(value) ? value[key] : undefined),
    body
  )

const modelLayer = (server: Fake.FakeChatCompletions, options: Partial<OpenAiCompat.Options> = {}) =>
  OpenAiCompat.layer({ model: MODELS[server.flavor], apiUrl: server.apiUrl, apiKey: Redacted.make(KEY), ...options })

/** An agent on the demo tools over the fake server. */
const agentOn = (
  server: Fake.FakeChatCompletions,
  options: Pipeline.PipelineOptions = {},
  model: Partial<OpenAiCompat.Options> = {}
) =>
  Effect.map(
    Layer.build(Agent.layer({ model: modelLayer(server, model), tools: allTools, options: { ...FAST, ...options } })),
    (context) => {
      const store = Context.get(context, ExecutionStore.ExecutionStore)
      return {
        pipeline: Context.get(context, Pipeline.Pipeline),
        record: (id: string) =>
          Effect.map(Effect.orDie(store.get(id)), (r) => Option.getOrThrowWith(r, () => new Error(`no record ${id}`)))
      }
    }
  )

/** A `LanguageModel` over the fake server, alive as long as the test's Scope. */
const languageModel = (server: Fake.FakeChatCompletions, options: Partial<OpenAiCompat.Options> = {}) =>
  Effect.map(Layer.build(modelLayer(server, options)), (context) => Context.get(context, LanguageModel.LanguageModel))

/** The plan's JSON Schema, as every structured request carries it. */
const planSchema = JSON.parse(JSON.stringify({
  ...PlanWire.wireJsonSchema,
  description: "A routing plan: the tool calls (steps) that answer the request"
}))

const expectCommon = (request: Fake.ReceivedRequest, model: string) => {
  expect(`${request.method} ${request.path}`).toBe("POST /v1/chat/completions")
  expect(request.headers["authorization"]).toBe(`Bearer ${KEY}`)
  expect(request.headers["content-type"]).toMatch(/^application\/json/)
  expect(at(request.body, "model")).toBe(model)
}

/** A planning request in `mode`, and nothing of the other modes. */
const expectPlanning = (request: Fake.ReceivedRequest, model: string, mode: OpenAiCompat.StructuredOutput) => {
  expectCommon(request, model)
  const body = request.body
  expect(at(body, "stream")).toBeUndefined()
  expect(JSON.stringify(at(body, "messages"))).toContain("<user_request>")
  switch (mode) {
    case "json_schema":
      expect(at(body, "response_format")).toEqual({
        type: "json_schema",
        json_schema: { name: "routing_plan", schema: planSchema, strict: true }
      })
      expect(at(body, "tools")).toBeUndefined()
      expect(at(body, "tool_choice")).toBeUndefined()
      break
    case "tool":
      expect(at(body, "response_format")).toBeUndefined()
      expect(at(body, "tools")).toEqual([{
        type: "function",
        function: { name: "routing_plan", parameters: planSchema }
      }])
      expect(at(body, "tool_choice")).toEqual({ type: "function", function: { name: "routing_plan" } })
      break
    case "prompt":
      expect(at(body, "response_format")).toBeUndefined()
      expect(at(body, "tools")).toBeUndefined()
      expect(at(body, "messages", 0, "role")).toBe("system")
      expect(at(body, "messages", 0, "content")).toContain("Reply with only the JSON object \"routing_plan\"")
      expect(at(body, "messages", 0, "content")).toContain(JSON.stringify(planSchema))
      expect((at(body, "messages") as ReadonlyArray<unknown>).filter((m) => at(m, "role") === "system")).toHaveLength(1)
      break
  }
}

const expectStreamedSynthesis = (request: Fake.ReceivedRequest, model: string) => {
  expectCommon(request, model)
  expect(at(request.body, "stream")).toBe(true)
  expect(at(request.body, "stream_options")).toEqual({ include_usage: true })
  expect(at(request.body, "response_format")).toBeUndefined()
  expect(at(request.body, "tools")).toBeUndefined()
}

const tokensOf = (events: ReadonlyArray<AgentResponse.StreamEvent>) =>
  events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))

const callsOf = (record: ExecutionRecord.ExecutionRecord) =>
  (record.modelCalls ?? []).map((c) => [c.purpose, c.attempt, c.outcome, c.usage] as const)

// ---------------------------------------------------------------------------
// The fake is the fixtures
// ---------------------------------------------------------------------------

const received = (body: unknown): Fake.ReceivedRequest => ({
  index: 0,
  method: "POST",
  path: "/v1/chat/completions",
  query: "",
  headers: {},
  body
})

const dataOf = (wire: WireServer.Wire): ReadonlyArray<string> =>
  wire._tag === "Sse" ? wire.events.map((e) => `data: ${e.data}`) : []

describe("FakeChatCompletions sends each server's fixtures", () => {
  for (const flavor of Fake.flavors) {
    it(`${flavor}: given the fixture's own content, a reply is the fixture, byte for byte`, () => {
      const lines: ReadonlyArray<string> = Fake.fixture(flavor, "chat-stream-text.sse.json")
      const chunks = lines.filter((l) => l !== "data: [DONE]").map((l) => JSON.parse(l.slice(6)))
      const deltas = chunks.flatMap((c) => {
        const content = at(c, "choices", 0, "delta", "content")
        return typeof content === "string" && content !== "" ? [content] : []
      })
      const usage = chunks.find((c) => at(c, "usage") !== undefined).usage
      const buffered = Fake.fixture(flavor, "chat-buffered-text.json")
      const model = buffered.model as string
      const text = Fake.text(flavor, deltas.join(""), { deltas, usage })
      const streamed = { model, stream: true, stream_options: { include_usage: true } }
      expect(dataOf(text.render(received(streamed)))).toEqual(lines)
      const body = text.render(received({ model }))
      expect(body._tag === "Body" && JSON.parse(body.body)).toEqual(
        Fake.fixture(flavor, "chat-buffered-text.json")
      )
      // Without include_usage: the same stream, less its usage chunk.
      expect(dataOf(text.render(received({ model, stream: true })))).toEqual(
        lines.filter((l) => !l.includes("\"usage\""))
      )
      // A tool call: the fixture's body; a stream of the fixture's chunks, its argument pieces re-cut.
      const call = Fake.fixture(flavor, "chat-buffered-tool-call.json")
      const [fixtureCall] = call.choices[0].message.tool_calls
      const tool = Fake.toolCall(flavor, fixtureCall.function.name, fixtureCall.function.arguments, {
        usage: call.usage
      })
      const toolBody = tool.render(received({ model: call.model }))
      expect(toolBody._tag === "Body" && JSON.parse(toolBody.body)).toEqual(call)
      const toolLines: ReadonlyArray<string> = Fake.fixture(flavor, "chat-stream-tool-call.sse.json")
      expect(dataOf(tool.render(received({ ...streamed, model: call.model }))).length).toBe(toolLines.length)
    })
  }
})

// ---------------------------------------------------------------------------
// Real 400 bodies refusing structured output
// ---------------------------------------------------------------------------

/**
 * llama.cpp before json_schema support (tools/server/utils.hpp,
 * `oaicompat_completion_params_parse`: "response_format type must be one
 * of \"text\" or \"json_object\", but got: …"), in its error shape.
 */
const llamaCppRejectsJsonSchema = Fake.error("llamacpp", {
  message: "response_format type must be one of \"text\" or \"json_object\", but got: json_schema"
})

/**
 * LiteLLM's proxy before a model that takes neither `response_format` nor
 * tools: its UnsupportedParamsError ("… does not support parameters: …
 * To drop these, set `litellm.drop_params=True` …", BerriAI/litellm#33738
 * for the proxy's body, OpenHands#2464 for the message), in its error shape.
 */
const liteLlmRejects = (params: string) =>
  Fake.error("litellm", {
    message: `litellm.UnsupportedParamsError: ollama does not support parameters: ${params}, for model=qwen. ` +
      "To drop these, set `litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n drop_params: true`\n"
  })

// ---------------------------------------------------------------------------
// An agent per server: plan → tool → streamed answer
// ---------------------------------------------------------------------------

interface Scenario {
  readonly flavor: Fake.Flavor
  /** The mode planning ends up in. */
  readonly mode: OpenAiCompat.StructuredOutput
  /** The server's refusals before it (one per mode left). */
  readonly refusals: ReadonlyArray<Fake.Reply>
}

const scenarios: ReadonlyArray<Scenario> = [
  { flavor: "vllm", mode: "json_schema", refusals: [] },
  { flavor: "ollama", mode: "json_schema", refusals: [] },
  { flavor: "llamacpp", mode: "tool", refusals: [llamaCppRejectsJsonSchema] },
  { flavor: "lmstudio", mode: "json_schema", refusals: [] },
  {
    flavor: "litellm",
    mode: "prompt",
    refusals: [liteLlmRejects("['response_format']"), liteLlmRejects("['tools', 'tool_choice']")]
  }
]

/** The server's answer with a plan, in `mode`. */
const planReply = (
  flavor: Fake.Flavor,
  mode: OpenAiCompat.StructuredOutput,
  input: Parameters<typeof Fake.wirePlan>[0]
) => {
  const usage = { prompt_tokens: 321, completion_tokens: 45 }
  switch (mode) {
    case "json_schema":
      return Fake.plan(flavor, input, { usage })
    case "tool":
      return Fake.planCall(flavor, input, { usage })
    case "prompt":
      // A model asked for plain JSON likes a code fence around it.
      return Fake.text(flavor, `\`\`\`json\n${JSON.stringify(Fake.wirePlan(input))}\n\`\`\``, { usage })
  }
}

describe("an agent on each Chat Completions server: plan (structured output) → tool → streamed answer", () => {
  for (const { flavor, mode, refusals } of scenarios) {
    it.scopedLive(`${flavor}: planning by ${mode}${refusals.length > 0 ? " after the server refused the modes before it" : ""}, two phases, tools run, the answer streams with usage`, () =>
      Effect.gen(function*() {
        const server = yield* Fake.make(flavor)
        const deltas = ["ACME ", "trades at ", "123.45; ", "Paris is ", "sunny ✓"]
        yield* server.enqueue(
          ...refusals,
          planReply(flavor, mode, plan([quoteStep("q1")], false)),
          planReply(flavor, mode, plan([weatherStep("w1", "Paris")])),
          Fake.text(flavor, deltas.join(""), { deltas, usage: { prompt_tokens: 500, completion_tokens: 9 } })
        )
        const agent = yield* agentOn(server)
        const events = Chunk.toReadonlyArray(
          yield* Stream.runCollect(agent.pipeline.stream({ request: "quote ACME, then the weather", requestId: "c-1" }))
        )

        expect(tokensOf(events)).toEqual(deltas)
        const last = events.at(-1)
        expect(last?._tag).toBe("Completed")
        if (last?._tag !== "Completed") return
        expect(last.response.response).toBe(deltas.join(""))
        expect(last.response.phases.map((p) => p.steps.map((s) => [s.step_id, s.status]))).toEqual([
          [["q1", "succeeded"]],
          [["w1", "succeeded"]]
        ])
        expect(last.response.phases[1]?.steps[0]?.output).toMatchObject({ city: "Paris" })

        const requests = yield* server.requests
        const model = MODELS[flavor]
        expect(requests).toHaveLength(refusals.length + 3)
        // The refused modes were asked once, in order, on the first planning call only.
        const modes: ReadonlyArray<OpenAiCompat.StructuredOutput> = ["json_schema", "tool", "prompt"]
        refusals.forEach((_, i) => expectPlanning(requests[i]!, model, modes[i]!))
        const [first, second, synthesis] = requests.slice(refusals.length)
        expectPlanning(first!, model, mode)
        // The mode that answered is the one the next call starts in.
        expectPlanning(second!, model, mode)
        expect(JSON.stringify(at(second!.body, "messages"))).toContain("q1")
        expectStreamedSynthesis(synthesis!, model)
        expect(JSON.stringify(at(synthesis!.body, "messages"))).toContain("Paris")
        expect(yield* server.pending).toBe(0)

        // One model call per planning phase, however many modes it took; usage from the server.
        const record = yield* agent.record("c-1")
        const planningUsage = { inputTokens: 321, outputTokens: 45, totalTokens: 366 }
        expect(callsOf(record)).toEqual([
          ["planning", 1, "succeeded", planningUsage],
          ["planning", 1, "succeeded", planningUsage],
          ["synthesis", 1, "succeeded", { inputTokens: 500, outputTokens: 9, totalTokens: 509 }]
        ])
      }))
  }

  it.scopedLive("each Layer build keeps its own mode: a new agent on the same server starts with json_schema again", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("llamacpp")
      yield* server.enqueue(
        llamaCppRejectsJsonSchema,
        Fake.planCall("llamacpp", plan([])),
        Fake.text("llamacpp", "first"),
        Fake.plan("llamacpp", plan([])),
        Fake.text("llamacpp", "second")
      )
      const first = yield* agentOn(server)
      expect(yield* first.pipeline.process({ request: "hi" })).toMatchObject({ _tag: "Completed" })
      const second = yield* agentOn(server)
      expect(yield* second.pipeline.process({ request: "hi" })).toMatchObject({ _tag: "Completed" })
      const requests = yield* server.requests
      expect(requests.map((r) => [at(r.body, "response_format", "type"), at(r.body, "tool_choice", "type")])).toEqual([
        ["json_schema", undefined],
        [undefined, "function"],
        [undefined, undefined],
        ["json_schema", undefined],
        [undefined, undefined]
      ])
    }))

  it.scopedLive("a 400 that does not name what the mode sends is the call's failure, not a fallback (vLLM's tool-choice 400 while asking by json_schema)", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("vllm")
      yield* server.enqueue(Fake.error("vllm"))
      const agent = yield* agentOn(server)
      const exit = yield* Effect.exit(agent.pipeline.process({ request: "q", requestId: "c-400" }))
      expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toMatchObject({
        _tag: "Some",
        value: { _tag: "PlanningError", reason: "model_failed" }
      })
      expect(yield* server.requests).toHaveLength(1)
    }))
})

// ---------------------------------------------------------------------------
// Structured output by forced tool call: whatever the finish reason
// ---------------------------------------------------------------------------

const Answer = Schema.Struct({ answer: Schema.Number })

describe("structured output by a forced tool call", () => {
  it.scopedLive("vLLM answers a named tool_choice with finish_reason \"stop\": the call's arguments are the object", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("vllm")
      yield* server.enqueue(Fake.toolCall("vllm", "answer", { answer: 42 }))
      const model = yield* languageModel(server, { structuredOutput: "tool" })
      const response = yield* model.generateObject({ prompt: "the answer?", schema: Answer, objectName: "answer" })
      expect(response.value).toEqual({ answer: 42 })
      expect(response.finishReason).toBe("stop")
      const [request] = yield* server.requests
      expect(at(request!.body, "tool_choice")).toEqual({ type: "function", function: { name: "answer" } })
      expect(at(request!.body, "tools", 0, "function", "name")).toBe("answer")
    }))

  it.scopedLive("llama.cpp treats a named tool_choice as auto: a model that answers in text is taken as it is", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("llamacpp")
      yield* server.enqueue(Fake.json("llamacpp", { answer: 7 }))
      const model = yield* languageModel(server, { structuredOutput: "tool" })
      const response = yield* model.generateObject({ prompt: "the answer?", schema: Answer, objectName: "answer" })
      expect(response.value).toEqual({ answer: 7 })
    }))
})

// ---------------------------------------------------------------------------
// Tools through LanguageModel
// ---------------------------------------------------------------------------

const GetWeather = Tool.make("get_weather", {
  description: "Get the weather",
  parameters: { city: Schema.String },
  success: Schema.String
})
const Weather = Toolkit.make(GetWeather)
const WeatherLive = Weather.toLayer({ get_weather: ({ city }) => Effect.succeed(`sunny in ${city}`) })

const expectToolRequest = (request: Fake.ReceivedRequest) => {
  expect(at(request.body, "tools")).toEqual([{
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the weather",
      parameters: {
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
        additionalProperties: false
      }
    }
  }])
  expect(at(request.body, "tool_choice")).toBe("auto")
}

describe("tools: tool-call parts back, buffered and streamed", () => {
  for (const flavor of Fake.flavors) {
    it.scopedLive(`${flavor}: buffered and streamed calls of a tool, the tool run by LanguageModel`, () =>
      Effect.gen(function*() {
        const server = yield* Fake.make(flavor)
        yield* server.enqueue(
          Fake.toolCall(flavor, "get_weather", { city: "Paris" }, {
            usage: { prompt_tokens: 180, completion_tokens: 20 }
          }),
          Fake.toolCall(flavor, "get_weather", { city: "Lisbon" }, {
            usage: { prompt_tokens: 181, completion_tokens: 21 }
          })
        )
        const model = yield* languageModel(server)

        const buffered = yield* model.generateText({ prompt: "weather in Paris?", toolkit: Weather })
        expect(buffered.toolCalls.map((c) => [c.name, c.params])).toEqual([["get_weather", { city: "Paris" }]])
        expect(buffered.toolResults.map((r) => r.result)).toEqual(["sunny in Paris"])
        expect(buffered.finishReason).toBe("tool-calls")
        expect(buffered.usage).toMatchObject({ inputTokens: 180, outputTokens: 20, totalTokens: 200 })

        const parts = Chunk.toReadonlyArray(
          yield* Stream.runCollect(model.streamText({ prompt: "weather in Lisbon?", toolkit: Weather }))
        )
        const call = parts.find((p) => p.type === "tool-call")
        expect(call?.type === "tool-call" && [call.name, call.params]).toEqual(["get_weather", { city: "Lisbon" }])
        const deltas = parts.flatMap((p) => (p.type === "tool-params-delta" ? [p.delta] : []))
        expect(deltas.join("")).toBe(JSON.stringify({ city: "Lisbon" }))
        const result = parts.find((p) => p.type === "tool-result")
        expect(result?.type === "tool-result" && result.result).toBe("sunny in Lisbon")
        const finish = parts.find((p) => p.type === "finish")
        expect(finish?.type === "finish" && [finish.reason, finish.usage.inputTokens, finish.usage.outputTokens])
          .toEqual(["tool-calls", 181, 21])
        // Every part of one call names the same id.
        const ids = new Set(parts.flatMap((p) => ("id" in p && p.type.startsWith("tool") ? [p.id] : [])))
        expect(ids.size).toBe(1)

        const requests = yield* server.requests
        for (const request of requests) expectToolRequest(request)
        expect(requests.map((r) => at(r.body, "stream"))).toEqual([undefined, true])
      }).pipe(Effect.provide(WeatherLive)))
  }

  it.scopedLive("a conversation with a tool call and its result goes back as assistant tool_calls and a tool message", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("ollama")
      yield* server.enqueue(Fake.text("ollama", "It is sunny in Paris."))
      const model = yield* languageModel(server)
      const response = yield* model.generateText({
        prompt: [
          { role: "system", content: "You are terse." },
          { role: "user", content: [{ type: "text", text: "weather in Paris?" }] },
          {
            role: "assistant",
            content: [{ type: "tool-call", id: "call_k3v9x2qa", name: "get_weather", params: { city: "Paris" } }]
          },
          {
            role: "tool",
            content: [{
              type: "tool-result",
              id: "call_k3v9x2qa",
              name: "get_weather",
              result: "sunny in Paris",
              isFailure: false,
              providerExecuted: false
            }]
          }
        ]
      })
      expect(response.text).toBe("It is sunny in Paris.")
      const [request] = yield* server.requests
      expect(at(request!.body, "messages")).toEqual([
        { role: "system", content: "You are terse." },
        { role: "user", content: "weather in Paris?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{
            id: "call_k3v9x2qa",
            type: "function",
            function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" }
          }]
        },
        { role: "tool", tool_call_id: "call_k3v9x2qa", content: "\"sunny in Paris\"" }
      ])
    }))
})

// ---------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------

const streamParts = (model: LanguageModel.Service) =>
  Effect.map(Stream.runCollect(model.streamText({ prompt: "hi" })), Chunk.toReadonlyArray)

const textOf = (parts: ReadonlyArray<{ readonly type: string }>) =>
  parts.flatMap((p) => (p.type === "text-delta" && "delta" in p ? [p.delta] : [])).join("")

describe("streams", () => {
  for (const flavor of Fake.flavors) {
    it.scopedLive(`${flavor}: text deltas, one finish; without a usage chunk or [DONE] the stream still finishes`, () =>
      Effect.gen(function*() {
        const server = yield* Fake.make(flavor)
        const deltas = ["Hel", "lo, ", "wor", "ld"]
        yield* server.enqueue(
          Fake.text(flavor, "Hello, world", { deltas, usage: { prompt_tokens: 3, completion_tokens: 4 } }),
          Fake.text(flavor, "Hello, world", { deltas, usageChunk: false }),
          Fake.text(flavor, "Hello, world", { deltas, usageChunk: false, done: false })
        )
        const model = yield* languageModel(server)
        for (const withUsage of [true, false, false]) {
          const parts = yield* streamParts(model)
          expect(textOf(parts)).toBe("Hello, world")
          const finishes = parts.filter((p) => p.type === "finish")
          expect(finishes).toHaveLength(1)
          const finish = finishes[0]
          expect(finish?.type === "finish" && finish.reason).toBe("stop")
          expect(finish?.type === "finish" && finish.usage.inputTokens).toBe(withUsage ? 3 : undefined)
          expect(parts.at(-1)?.type).toBe("finish")
          expect(parts.filter((p) => p.type === "text-start")).toHaveLength(1)
          expect(parts.filter((p) => p.type === "text-end")).toHaveLength(1)
          expect(parts[0]).toMatchObject({ type: "response-metadata" })
        }
      }))
  }

  const midStream: ReadonlyArray<readonly [Fake.Flavor, string, number, string]> = [
    ["vllm", "Internal server error", 500, ""],
    ["llamacpp", "slot unavailable", 500, "Hello"],
    ["litellm", "litellm.APIConnectionError: Connection error.", 500, "Hello"]
  ]
  for (const [flavor, message, status, before] of midStream) {
    it.scopedLive(`${flavor}: a mid-stream data: {"error": …} fails the stream with a typed HttpResponseError after what came before`, () =>
      Effect.gen(function*() {
        const server = yield* Fake.make(flavor)
        yield* server.enqueue(Fake.streamError(flavor))
        const model = yield* languageModel(server)
        const received: Array<string> = []
        const exit = yield* Effect.exit(
          Stream.runForEach(model.streamText({ prompt: "hi" }), (part) =>
            Effect.sync(() => {
              if (part.type === "text-delta") received.push(part.delta)
            }))
        )
        expect(received.join("")).toBe(before)
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        expect(error?._tag).toBe("HttpResponseError")
        if (error?._tag !== "HttpResponseError") return
        expect(error.response.status).toBe(status)
        expect(error.module).toBe("OpenAiCompatClient")
        expect(error.message).toContain(message)
        expect(error.request).toMatchObject({ method: "POST", url: `${server.apiUrl}/chat/completions`, headers: {} })
      }))
  }

  it.scopedLive("through the pipeline, a mid-stream error is a SynthesisError and the tokens already sent stay sent", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("llamacpp")
      yield* server.enqueue(Fake.plan("llamacpp", plan([])), Fake.streamError("llamacpp"))
      const agent = yield* agentOn(server)
      const tokens: Array<string> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(agent.pipeline.stream({ request: "q", requestId: "c-mid" }), (event) =>
          Effect.sync(() => {
            if (event._tag === "Token") tokens.push(event.text)
          }))
      )
      expect(Exit.isFailure(exit) && Option.getOrUndefined(Cause.failureOption(exit.cause))).toMatchObject({
        _tag: "SynthesisError"
      })
      expect(tokens).toEqual(["Hello"])
      expect((yield* agent.record("c-mid")).deliveredText).toBe("Hello")
    }))
})

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

const errorFiles: ReadonlyArray<readonly [Fake.Flavor, string]> = [
  ["vllm", "error-400.json"],
  ["vllm", "error-400-legacy.json"],
  ["vllm", "error-404-model.json"],
  ["ollama", "error-400.json"],
  ["ollama", "error-404-model.json"],
  ["llamacpp", "error-400.json"],
  ["llamacpp", "error-400-context.json"],
  ["lmstudio", "error-400.json"],
  ["litellm", "error-400.json"]
]

const messageIn = (body: unknown): string => {
  const error = at(body, "error")
  return String(isRecord(error) ? error["message"] : at(body, "message"))
}

describe("error bodies of each server: typed, status and message kept, the key never present", () => {
  for (const [flavor, file] of errorFiles) {
    it.scopedLive(`${flavor} ${file}`, () =>
      Effect.gen(function*() {
        const server = yield* Fake.make(flavor)
        const { body, status } = Fake.fixture(flavor, file)
        yield* server.enqueue(Fake.error(flavor, { file }), Fake.error(flavor, { file }))
        const model = yield* languageModel(server)
        for (
          const call of [model.generateText({ prompt: "hi" }), Stream.runDrain(model.streamText({ prompt: "hi" }))]
        ) {
          const exit = yield* Effect.exit(call as Effect.Effect<unknown, AiError.AiError>)
          const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
          expect(error?._tag).toBe("HttpResponseError")
          if (error?._tag !== "HttpResponseError") return
          expect(error.response.status).toBe(status)
          expect(error.reason).toBe("StatusCode")
          // The server's body, whole (it is small), and its message in the error's.
          expect(JSON.parse(error.body ?? "")).toEqual(body)
          expect(error.message).toContain(JSON.stringify(messageIn(body)).slice(1, -1))
          expect(error.message).toContain(String(status))
          expect(error.request.headers).toEqual({})
          for (
            const printed of [
              JSON.stringify(error),
              util.inspect(error, { depth: Infinity }),
              Cause.pretty(Cause.fail(error))
            ]
          ) {
            expect(printed).not.toContain(KEY)
            expect(printed.toLowerCase()).not.toContain("authorization")
          }
        }
      }))
  }

  it.scopedLive("a server quoting the key back in an error inside a 200 (a body, a stream event): the key is scrubbed", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("vllm")
      const quoted = { error: { message: `invalid key ${KEY}`, type: "AuthenticationError", code: 401 } }
      yield* server.enqueue(
        Fake.status(200, { body: quoted }),
        WireServer.reply(() => ({
          _tag: "Sse",
          headers: {},
          events: [{ data: JSON.stringify(quoted) }],
          eventDelay: undefined,
          cut: undefined
        }))
      )
      const model = yield* languageModel(server)
      const buffered = yield* Effect.flip(model.generateText({ prompt: "hi" }))
      const streamed = yield* Effect.flip(Stream.runDrain(model.streamText({ prompt: "hi" })))
      for (const error of [buffered, streamed]) {
        expect(error._tag === "HttpResponseError" && error.response.status).toBe(401)
        for (const printed of [JSON.stringify(error), util.inspect(error, { depth: Infinity }), error.message]) {
          expect(printed).not.toContain(KEY)
          expect(printed).toContain("invalid key <redacted>")
        }
      }
    }))

  it.scopedLive("hostile values: a body and a stream event nested 5,000 deep are typed failures, never a defect", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("ollama")
      const deep = "[".repeat(5_000) + "]".repeat(5_000)
      const deepContent = `{"choices":[{"delta":{"content":${"{\"a\":".repeat(5_000)}1${"}".repeat(5_000)}}}]}`
      yield* server.enqueue(
        Fake.status(200, { body: deep }),
        WireServer.reply(() => ({
          _tag: "Sse",
          headers: {},
          events: [{ data: deepContent }],
          eventDelay: undefined,
          cut: undefined
        }))
      )
      const model = yield* languageModel(server)
      const buffered = yield* Effect.exit(model.generateText({ prompt: "hi" }))
      const streamed = yield* Effect.exit(Stream.runDrain(model.streamText({ prompt: "hi" })))
      for (const exit of [buffered, streamed] as ReadonlyArray<Exit.Exit<unknown, AiError.AiError>>) {
        expect(Exit.isFailure(exit) && [...Cause.defects(exit.cause)]).toEqual([])
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        expect(error).toMatchObject({ _tag: "MalformedOutput", module: "OpenAiCompatClient" })
        expect(() => JSON.stringify(error)).not.toThrow()
        expect(() => Cause.pretty(Exit.isFailure(exit) ? exit.cause : Cause.empty)).not.toThrow()
      }
    }))

  it.scopedLive("a 404 for an unknown model fails planning once (not retried): PlanningError model_failed naming the model", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("ollama")
      yield* server.enqueue(Fake.error("ollama", { file: "error-404-model.json" }))
      const agent = yield* agentOn(server)
      const exit = yield* Effect.exit(agent.pipeline.process({ request: "q", requestId: "c-404" }))
      const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
      expect(error?.message).toContain("model 'nope:latest' not found")
      expect(JSON.stringify(error)).not.toContain(KEY)
      expect(yield* server.requests).toHaveLength(1)
    }))

  it.scopedLive("a 200 that is not JSON is HttpResponseError Decode; JSON that is not a completion is MalformedOutput (both retried by the pipeline)", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("vllm")
      yield* server.enqueue(
        Fake.notJson("{\"id\":\"chatcmpl-1\",\"choi"),
        Fake.status(200, { body: { id: "chatcmpl-1", choices: "none" } }),
        Fake.plan("vllm", plan([])),
        Fake.text("vllm", "fine")
      )
      const model = yield* languageModel(server)
      const first = yield* Effect.flip(model.generateText({ prompt: "hi" }))
      expect(first._tag === "HttpResponseError" && [first.reason, first.response.status]).toEqual(["Decode", 200])
      const second = yield* Effect.flip(model.generateText({ prompt: "hi" }))
      expect(second._tag === "MalformedOutput" && [second.module, second.method]).toEqual([
        "OpenAiCompatClient",
        "createChatCompletion"
      ])
    }))
})

// ---------------------------------------------------------------------------
// The pipeline's policy applies to this LanguageModel like any other
// ---------------------------------------------------------------------------

describe("model policy over Chat Completions", () => {
  it.scopedLive("a 429 with retry-after is retried after the wait it asks for; both attempts recorded", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("vllm")
      yield* server.enqueue(
        Fake.error("vllm", { status: 429, message: "rate limited", headers: { "retry-after": "0.15" } }),
        Fake.plan("vllm", plan([quoteStep("q1")])),
        Fake.text("vllm", "ACME is up.")
      )
      const agent = yield* agentOn(server)
      const result = yield* agent.pipeline.process({ request: "quote ACME", requestId: "c-429" })
      expect(result._tag === "Completed" && result.response.response).toBe("ACME is up.")
      const record = yield* agent.record("c-429")
      expect(callsOf(record).map(([purpose, attempt, outcome]) => [purpose, attempt, outcome])).toEqual([
        ["planning", 1, "failed"],
        ["planning", 2, "succeeded"],
        ["synthesis", 1, "succeeded"]
      ])
      const [first, second] = record.modelCalls ?? []
      expect(first?.error).toContain("429")
      expect(second!.startedAt - (first!.startedAt + first!.durationMs)).toBeGreaterThanOrEqual(140)
    }))

  it.scopedLive("a server that never answers: each attempt times out at modelTimeout, then PlanningError timed_out", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("ollama")
      yield* server.enqueue(Fake.hang, Fake.hang)
      const agent = yield* agentOn(server, { modelTimeout: "300 millis", modelRetries: 1 })
      const exit = yield* Effect.exit(agent.pipeline.process({ request: "q", requestId: "c-hang" }))
      expect(Exit.isFailure(exit) && Option.getOrUndefined(Cause.failureOption(exit.cause))).toMatchObject({
        _tag: "PlanningError",
        reason: "timed_out"
      })
      const record = yield* agent.record("c-hang")
      expect(callsOf(record).map(([purpose, attempt, outcome]) => [purpose, attempt, outcome])).toEqual([
        ["planning", 1, "timed_out"],
        ["planning", 2, "timed_out"]
      ])
    }))

  it.scopedLive("no API key: no authorization header (a local server that needs none); settings sent as they are", () =>
    Effect.gen(function*() {
      const server = yield* Fake.make("ollama")
      yield* server.enqueue(Fake.plan("ollama", plan([])), Fake.text("ollama", "nothing to do"))
      const context = yield* Layer.build(
        Agent.layer({
          model: OpenAiCompat.layer({
            model: "qwen2.5:7b",
            apiUrl: `${server.apiUrl}/`,
            config: { temperature: 0, top_k: 20, model: "not this one", stream: true }
          }),
          tools: allTools
        })
      )
      const result = yield* Context.get(context, Pipeline.Pipeline).process({ request: "hi" })
      expect(result._tag === "Completed" && result.response.response).toBe("nothing to do")
      const requests = yield* server.requests
      expect(requests.map((r) => [r.path, r.headers["authorization"]])).toEqual([
        ["/v1/chat/completions", undefined],
        ["/v1/chat/completions", undefined]
      ])
      // Request settings go with every call, as they are; the fields the provider owns are its own.
      expect(requests.map((r) => [at(r.body, "temperature"), at(r.body, "top_k"), at(r.body, "model")])).toEqual([
        [0, 20, "qwen2.5:7b"],
        [0, 20, "qwen2.5:7b"]
      ])
    }))
})
