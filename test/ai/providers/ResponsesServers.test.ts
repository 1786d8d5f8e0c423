/**
 * Issue 19 — lenient Responses decoding. `@effect/ai-openai` 0.41 decodes
 * `/v1/responses` with OpenAI's own strict `Response` Schema; vLLM, Ollama
 * 0.13.3–0.14.1, llama.cpp, LM Studio and LiteLLM's bridge leave out keys it
 * requires (vLLM: `error` alone), and a llama.cpp stream — no
 * `sequence_number`, no `output_index` — was dropped event by event. The
 * OpenAI provider fills the omitted keys before the decoder runs
 * (src/ai/internal/lenientResponses.ts, responsesShape.ts).
 *
 * - Over real HTTP on loopback, each server's bodies as the wire fixtures
 *   have them (test/fixtures/wire, SOURCES.md) decode through the client,
 *   and an agent on each server plans (structured output), runs a tool and
 *   answers — buffered, and streamed where the server streams.
 * - The normalizer on its own: the keys it fills and their values, complete
 *   bodies and events handed on byte for byte, what is not a Response
 *   passed through, the SSE splitter over arbitrary chunkings.
 */
import { Generated, OpenAiClient } from "@effect/ai-openai"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  Chunk,
  Context,
  Effect,
  Either,
  Exit,
  FastCheck,
  Layer,
  Option,
  Schema,
  type Scope,
  Stream
} from "effect"
import { Agent, type AgentResponse, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as OpenAi from "effect-agent-pipeline/openai"
import { allTools } from "../../../examples/shared/DemoTools.js"
import { lenientResponses, rewriter, type Segment, SseSplitter } from "../../../src/ai/internal/lenientResponses.js"
import {
  type Fallbacks,
  normalizeBody,
  normalizedBodyBytes,
  StreamEvents
} from "../../../src/ai/internal/responsesShape.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import * as Servers from "../../support/FakeResponsesServers.js"
import { weatherStep } from "../../support/Harness.js"
import { propertyRuns } from "../../support/PropertyRuns.js"
import * as WireServer from "../../support/WireServer.js"

const MODEL = "local-model"
const fallbacks: Fallbacks = { createdAt: () => 1_700_000_000, model: () => MODEL }

type Json = Record<string, any>
const parsed = (text: string): Json => JSON.parse(text) as Json

/** A Layer's service, alive as long as the current Scope. */
const serviceIn = <I, S, E>(tag: Context.Tag<I, S>, layer: Layer.Layer<I, E>): Effect.Effect<S, E, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, tag))

/** The provider's client (lenient), and `@effect/ai-openai`'s own (strict), on the server. */
const lenientClient = (server: Servers.FakeResponsesServer) =>
  serviceIn(OpenAiClient.OpenAiClient, OpenAi.layerClient({ apiUrl: server.apiUrl }))
const strictClient = (server: Servers.FakeResponsesServer) =>
  serviceIn(
    OpenAiClient.OpenAiClient,
    OpenAiClient.layer({ apiUrl: server.apiUrl }).pipe(Layer.provide(NodeHttpClient.layerUndici))
  )

const decodesAs = <A, I>(schema: Schema.Schema<A, I>, text: string): A => {
  const result = Schema.decodeUnknownEither(Schema.parseJson(schema))(text)
  if (Either.isLeft(result)) throw new Error(`does not decode: ${result.left.message}\n${text}`)
  return result.right
}

/** Every buffered Responses fixture: [server, file]. */
const bufferedFixtures: ReadonlyArray<readonly [Servers.Server, string]> = Servers.SERVERS.flatMap((server) => {
  const profile = Servers.PROFILES[server]
  return [profile.text, ...(profile.toolCall === undefined ? [] : [profile.toolCall])].map((file) =>
    [server, file] as const
  )
}).filter(([server, file], i, all) =>
  all.findIndex(([s, f]) => Servers.PROFILES[s].dir === Servers.PROFILES[server].dir && f === file) === i
)

describe("issue 19: each server's /responses answers decode through the OpenAI provider's client", () => {
  it.scoped("the issue: @effect/ai-openai's own client rejects vLLM's body for its missing `error` key; the provider's decodes it exactly as sent", () =>
    Effect.gen(function*() {
      const server = yield* Servers.make
      yield* server.enqueue(
        Servers.verbatim("vllm", "responses-buffered-text.json"),
        Servers.verbatim("vllm", "responses-buffered-text.json")
      )
      const strict = yield* Effect.exit((yield* strictClient(server)).createResponse({ model: "m", input: "hi" }))
      if (Exit.isSuccess(strict)) return expect.unreachable("the strict client decoded vLLM's body")
      const failure = Option.getOrThrow(Cause.failureOption(strict.cause))
      expect(failure._tag).toBe("MalformedOutput")
      expect(failure.message).toMatch(/\["error"\][\s\S]*is missing/)
      const response = yield* (yield* lenientClient(server)).createResponse({ model: "m", input: "hi" })
      expect(response.error).toBeNull()
      expect(response.output).toMatchObject([{
        type: "message",
        content: [{ text: "Hello! How can I help you today?" }]
      }])
    }))

  for (const [server, file] of bufferedFixtures) {
    it.scoped(`${server} ${file}, as on the wire, decodes with its content as sent`, () =>
      Effect.gen(function*() {
        const fake = yield* Servers.make
        yield* fake.enqueue(Servers.verbatim(server, file))
        const response = yield* (yield* lenientClient(fake)).createResponse({ model: "m", input: "hi" })
        const original = parsed(Servers.fixture(Servers.PROFILES[server].dir, file))
        expect(response.id).toBe(original["id"])
        expect(response.object).toBe("response")
        expect(response.model).toBe(original["model"])
        const texts = (items: ReadonlyArray<Json>) =>
          items.flatMap((item) =>
            item["type"] === "message"
              ? (item["content"] as ReadonlyArray<Json>).flatMap((p) => (p["text"] === null ? [] : [p["text"]]))
              : [[item["name"], item["arguments"], item["call_id"]]]
          )
        expect(texts(response.output as unknown as ReadonlyArray<Json>)).toEqual(texts(original["output"]))
        expect(response.usage?.input_tokens).toBe(original["usage"]?.["input_tokens"])
      }))
  }

  for (const server of ["llamacpp", "ollama-0.13", "ollama"] as const) {
    it.scoped(`${server}: every event of its stream reaches the client (the strict client alone keeps ${server === "ollama" ? "all" : "some or none"})`, () =>
      Effect.gen(function*() {
        const fake = yield* Servers.make
        const file = Servers.PROFILES[server].stream!
        yield* fake.enqueue(Servers.verbatim(server, file), Servers.verbatim(server, file))
        const typesOf = (client: OpenAiClient.Service) =>
          Effect.map(
            Stream.runCollect(client.createResponseStream({ model: MODEL, input: "hi" })),
            (events) => Chunk.toReadonlyArray(events).map((event) => event.type)
          )
        const strict = yield* typesOf(yield* strictClient(fake))
        const lenient = yield* typesOf(yield* lenientClient(fake))
        const sent = Servers.sseEvents(server).flatMap((e) => (e.data.startsWith("{") ? [parsed(e.data)["type"]] : []))
        expect(lenient).toEqual(sent)
        if (server === "llamacpp") expect(strict).toEqual([])
        if (server === "ollama") expect(strict).toEqual(sent)
        else expect(strict.length).toBeLessThan(sent.length)
      }))
  }
})

/** An agent on the demo tools over a server. */
const agentOn = (server: Servers.FakeResponsesServer) =>
  Effect.map(
    Layer.build(Agent.layer({
      model: OpenAi.layer({ model: MODEL, apiUrl: server.apiUrl }),
      tools: allTools,
      // A body the client cannot decode fails at once (no retry, no long wait).
      options: { modelRetries: 0, modelTimeout: "5 seconds" }
    })),
    (context) => ({
      pipeline: Context.get(context, Pipeline.Pipeline),
      store: Context.get(context, ExecutionStore.ExecutionStore)
    })
  )

const tokensOf = (events: ReadonlyArray<AgentResponse.StreamEvent>) =>
  events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))

const usageOf = (server: Servers.Server) => {
  const usage = parsed(Servers.fixture(Servers.PROFILES[server].dir, Servers.PROFILES[server].text))["usage"]
  return usage === undefined ? undefined : { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens }
}

describe("issue 19: an agent on each server plans (structured output), runs a tool and answers", () => {
  const agentServers = [
    "vllm",
    "ollama",
    "ollama-0.13",
    "llamacpp",
    "lmstudio",
    "litellm",
    "litellm-pre-26327"
  ] as const
  for (const server of agentServers) {
    it.scoped(`${server}: plan → weather tool → buffered answer`, () =>
      Effect.gen(function*() {
        const fake = yield* Servers.make
        yield* fake.enqueue(
          Servers.plan(server, { steps: [weatherStep("w1", "Lisbon")], reasoning: "a forecast is needed" }),
          Servers.text(server, "Lisbon: sunny, 24°C.")
        )
        const { pipeline, store } = yield* agentOn(fake)
        const result = yield* pipeline.process({ request: "What's the weather in Lisbon?", requestId: `rs-${server}` })
        if (result._tag !== "Completed") return expect.unreachable(JSON.stringify(result))
        expect(result.response.response).toBe("Lisbon: sunny, 24°C.")
        expect(result.response.phases[0]?.plan.reasoning).toBe("a forecast is needed")
        expect(result.response.phases[0]?.steps.map((s) => [s.step_id, s.status])).toEqual([["w1", "succeeded"]])
        expect(result.response.phases[0]?.steps[0]?.output).toMatchObject({ city: "Lisbon" })

        const requests = yield* fake.requests
        expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/responses", "POST /v1/responses"])
        expect(WireServer.field(WireServer.field(requests[0]?.body, "text"), "format")).toMatchObject({
          type: "json_schema",
          strict: true
        })
        const record = Option.getOrThrow(yield* store.get(`rs-${server}`))
        expect(record.modelCalls?.map((c) => [c.purpose, c.outcome, c.attempt])).toEqual([
          ["planning", "succeeded", 1],
          ["synthesis", "succeeded", 1]
        ])
        const usage = usageOf(server)
        if (usage !== undefined) expect(record.modelCalls?.[1]?.usage).toMatchObject(usage)
      }))
  }

  for (const server of ["ollama", "ollama-0.13", "llamacpp"] as const) {
    it.scoped(`${server}: plan → weather tool → streamed answer: the tokens are the server's deltas, and the stream finishes with its usage`, () =>
      Effect.gen(function*() {
        const fake = yield* Servers.make
        const deltas = ["Lisbon ", "is ", "sunny", ", 24°C", " — ünïcödé ✓"]
        yield* fake.enqueue(
          Servers.plan(server, { steps: [weatherStep("w1", "Lisbon")] }),
          Servers.text(server, deltas.join(""), { deltas })
        )
        const { pipeline, store } = yield* agentOn(fake)
        const events = Chunk.toReadonlyArray(
          yield* Stream.runCollect(pipeline.stream({ request: "weather in Lisbon?", requestId: `rs-s-${server}` }))
        )
        expect(tokensOf(events)).toEqual(deltas)
        const last = events.at(-1)
        if (last?._tag !== "Completed") return expect.unreachable(JSON.stringify(last))
        expect(last.response.response).toBe(deltas.join(""))
        expect(last.response.phases[0]?.steps.map((s) => [s.step_id, s.status])).toEqual([["w1", "succeeded"]])
        expect(WireServer.field((yield* fake.requests)[1]?.body, "stream")).toBe(true)
        const synthesis = Option.getOrThrow(yield* store.get(`rs-s-${server}`)).modelCalls?.[1]
        expect(synthesis).toMatchObject({ purpose: "synthesis", streamed: true, outcome: "succeeded" })
        // The finish (response.completed) was decoded: its usage is recorded.
        expect(synthesis?.usage).toMatchObject(usageOf(server)!)
      }))
  }
})

describe("issue 19: the normalizer fills only what the servers leave out", () => {
  const filled = (server: Servers.Server, file: string) => {
    const text = Servers.fixture(Servers.PROFILES[server].dir, file)
    const out = normalizeBody(text, fallbacks)
    decodesAs(Generated.Response, out)
    return { original: parsed(text), out: parsed(out) }
  }
  const NONE = {
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    temperature: null,
    top_p: null,
    tools: [],
    tool_choice: "auto",
    parallel_tool_calls: true
  }
  const ZERO_DETAILS = { input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } }

  it("vLLM: `error: null`, nothing else", () => {
    for (const file of ["responses-buffered-text.json", "responses-buffered-tool-call.json"]) {
      const { original, out } = filled("vllm", file)
      expect(out).toEqual({ ...original, error: null })
    }
  })

  it("llama.cpp and Ollama 0.13: every Response key they omit, with its \"none\" value; usage details zero; a function call keeps having no id", () => {
    for (
      const [server, file] of [
        ["llamacpp", "responses-buffered-text.json"],
        ["llamacpp", "responses-buffered-tool-call.json"],
        ["ollama-0.13", "responses-buffered-tool-call.json"]
      ] as const
    ) {
      const { original, out } = filled(server, file)
      expect(out).toEqual({ ...original, ...NONE, usage: { ...original["usage"], ...ZERO_DETAILS } })
    }
    const { out } = filled("llamacpp", "responses-buffered-tool-call.json")
    expect(out["output"][0]).not.toHaveProperty("id")
  })

  it("LM Studio and Ollama 0.13 text: `annotations: []` too; LM Studio's own output details kept", () => {
    for (const server of ["lmstudio", "ollama-0.13"] as const) {
      const { original, out } = filled(server, "responses-buffered-text.json")
      const [message] = original["output"]
      expect(out).toEqual({
        ...original,
        ...NONE,
        output: [{ ...message, content: [{ ...message.content[0], annotations: [] }] }],
        usage: { ...ZERO_DETAILS, ...original["usage"] }
      })
    }
    expect(filled("lmstudio", "responses-buffered-text.json").out["usage"]["output_tokens_details"]).toEqual({
      reasoning_tokens: 0
    })
  })

  it("LiteLLM's bridge: `null` usage details become zero counts, `object: \"chat.completion\"` (before PR #26327) `\"response\"`, a `text: null` part is dropped", () => {
    const current = filled("litellm", "responses-bridge-buffered-text.json")
    expect(current.out).toEqual({ ...current.original, usage: { ...current.original["usage"], ...ZERO_DETAILS } })
    const old = filled("litellm", "responses-bridge-buffered-text-pre-26327.json")
    expect(old.out).toEqual({ ...current.out, object: "response" })
    const tool = filled("litellm", "responses-bridge-buffered-tool-call.json")
    expect(tool.out["output"]).toEqual([{ ...tool.original["output"][0], content: [] }, tool.original["output"][1]])
  })

  it("a message without an id gets `msg_<index>`; created_at and model, when missing, come from the fallbacks", () => {
    const body = parsed(Servers.fixture("llamacpp", "responses-buffered-text.json"))
    delete body["output"][0]["id"]
    delete body["created_at"]
    delete body["model"]
    const out = parsed(normalizeBody(JSON.stringify(body), fallbacks))
    expect(out).toMatchObject({ created_at: 1_700_000_000, model: MODEL, output: [{ id: "msg_0" }] })
  })

  it("complete bodies are handed on byte for byte (Ollama ≥ 0.14.2, FakeOpenAi)", () => {
    for (const file of ["responses-buffered-text.json", "responses-buffered-tool-call.json"]) {
      const text = Servers.fixture("ollama", file)
      expect(normalizeBody(text, fallbacks)).toBe(text)
    }
    for (const reply of [FakeOpenAi.text("hi"), FakeOpenAi.functionCall("f", { a: 1 })]) {
      const wire = reply.render({ index: 0, method: "POST", path: "/v1/responses", query: "", headers: {}, body: {} })
      if (wire._tag !== "Body") return expect.unreachable()
      expect(normalizeBody(wire.body, fallbacks)).toBe(wire.body)
    }
  })

  it("what is not a Response passes through unchanged: not JSON, not an object, `output` not a list, a Chat Completions body, nested too deep, too large", () => {
    const deep = "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000)
    const lean = parsed(Servers.fixture("llamacpp", "responses-buffered-text.json"))
    const cases = [
      "",
      "{\"id\":\"resp_1\",\"object\":\"resp",
      "not json",
      "[1,2]",
      "null",
      JSON.stringify({ id: "resp_broken", object: "response", output: "not a list" }),
      JSON.stringify({ id: "r", object: "chat.completion", choices: [], output: [] }),
      JSON.stringify({ object: "response", output: [] }),
      "[".repeat(5_000) + "]".repeat(5_000),
      deep,
      JSON.stringify({ ...lean, usage: { nested: JSON.parse("[".repeat(300) + "]".repeat(300)) } }),
      JSON.stringify({ ...lean, padding: "x".repeat(normalizedBodyBytes) })
    ]
    for (const text of cases) expect(normalizeBody(text, fallbacks) === text).toBe(true)
  })

  it.scoped("only 2xx answers to POST …/responses are touched", () =>
    Effect.gen(function*() {
      const lean = Servers.fixture("llamacpp", "responses-buffered-text.json")
      const client = lenientResponses(HttpClient.make((request) =>
        Effect.succeed(HttpClientResponse.fromWeb(
          request,
          new Response(lean, { status: Number(request.headers["x-status"] ?? 200) })
        ))
      ))
      const textOf = (request: HttpClientRequest.HttpClientRequest) =>
        Effect.flatMap(client.execute(request), (response) => response.text)
      expect(yield* textOf(HttpClientRequest.get("http://h/v1/responses"))).toBe(lean)
      expect(yield* textOf(HttpClientRequest.post("http://h/v1/embeddings"))).toBe(lean)
      expect(yield* textOf(HttpClientRequest.post("http://h/v1/chat/completions"))).toBe(lean)
      expect(
        yield* textOf(
          HttpClientRequest.post("http://h/v1/responses").pipe(HttpClientRequest.setHeader("x-status", "404"))
        )
      )
        .toBe(lean)
      expect(parsed(yield* textOf(HttpClientRequest.post("http://h/v1/responses")))).toMatchObject({ error: null })
    }))
})

const NONE_STREAM = { error: null, instructions: null, tools: [], tool_choice: "auto", parallel_tool_calls: true }

/** The data payloads of a stream, each through one StreamEvents (undefined: left as it came). */
const rewritten = (events: ReadonlyArray<WireServer.SseEvent>) => {
  const state = new StreamEvents(fallbacks)
  return events.map((e) => state.rewrite(e.data))
}

describe("issue 19: stream events", () => {
  it("llama.cpp: sequence_number counts, output_index / content_index / item_id are filled, lean Responses made whole", () => {
    const events = Servers.sseEvents("llamacpp")
    const out = rewritten(events).map((data, i) => (data === undefined ? events[i]!.data : data))
    expect(out.at(-1)).toBe("[DONE]")
    const decoded = out.slice(0, -1).map((data) => decodesAs(OpenAiClient.ResponseStreamEvent, data))
    expect(decoded.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    const json = out.slice(0, -1).map(parsed)
    for (const event of json.slice(2, 9)) expect(event["output_index"]).toBe(0)
    for (const event of json.slice(3, 8)) {
      expect(event).toMatchObject({ content_index: 0, item_id: json[2]!["item"]["id"] })
    }
    expect(json[0]!["response"]).toMatchObject({ ...NONE_STREAM, created_at: 1_700_000_000, model: MODEL, output: [] })
    expect(json[3]!["part"]).toEqual({ type: "output_text", text: "", annotations: [] })
    // The completed Response keeps its own created_at and model.
    expect(json[9]!["response"]).toMatchObject({ created_at: 1_760_000_000, model: "qwen2.5-7b-instruct-q4_k_m.gguf" })
  })

  it("Ollama 0.13: its lean created/completed Responses get the stream's created_at and the request's model", () => {
    const out = rewritten(Servers.sseEvents("ollama-0.13"))
    const created = parsed(out[0]!)
    const completed = parsed(out.at(-1)!)
    expect(created["response"]).toMatchObject({ created_at: 1_700_000_000, model: MODEL, output: [], error: null })
    expect(completed["response"]).toMatchObject({ created_at: 1_700_000_000, model: MODEL })
    expect(completed["response"]["output"][0]["content"][0]["annotations"]).toEqual([])
    // Its numbered, indexed events are left as they came (only their parts' annotations were missing).
    expect(out[4]).toBeUndefined()
  })

  it("two items streamed without ids or indices (llama.cpp's shape: a message, then a function call): each event decodes, tied to its item", () => {
    const call = { type: "function_call", call_id: "fc_abc", name: "get_weather", status: "in_progress", arguments: "" }
    const message = { type: "message", role: "assistant", status: "in_progress", content: [] }
    const events: ReadonlyArray<Json> = [
      { type: "response.created", response: { id: "resp_1", object: "response", status: "in_progress" } },
      { type: "response.output_item.added", item: message },
      { type: "response.content_part.added", part: { type: "output_text", text: "" } },
      { type: "response.output_text.delta", delta: "Checking." },
      { type: "response.output_item.done", item: { ...message, status: "completed", content: [] } },
      { type: "response.output_item.added", item: call },
      { type: "response.function_call_arguments.delta", delta: "{\"city\":" },
      { type: "response.function_call_arguments.delta", delta: "\"Paris\"}" },
      { type: "response.function_call_arguments.done", arguments: "{\"city\":\"Paris\"}" },
      { type: "response.output_item.done", item: { ...call, status: "completed", arguments: "{\"city\":\"Paris\"}" } }
    ]
    const out = rewritten(events.map((e) => ({ data: JSON.stringify(e) }))).map((data) => parsed(data!))
    for (const event of out) decodesAs(OpenAiClient.ResponseStreamEvent, JSON.stringify(event))
    expect(out.map((e) => e["sequence_number"])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(out.slice(1).map((e) => e["output_index"])).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1])
    expect(out[1]!["item"]["id"]).toBe("msg_0")
    expect(out[3]).toMatchObject({ item_id: "msg_0", content_index: 0 })
    expect(out[4]!["item"]["id"]).toBe("msg_0")
    expect(out[5]!["item"]["id"]).toBe("item_1")
    expect(out.slice(6, 9).map((e) => e["item_id"])).toEqual(["item_1", "item_1", "item_1"])
    expect(out[9]!["item"]).toMatchObject({ id: "item_1", call_id: "fc_abc" })
  })

  it("complete streams (Ollama ≥ 0.14.2, FakeOpenAi) are left alone, event for event", () => {
    expect(rewritten(Servers.sseEvents("ollama"))).toEqual(Servers.sseEvents("ollama").map(() => undefined))
    for (const reply of [FakeOpenAi.text("Hello world"), FakeOpenAi.functionCall("f", { a: [1, 2] })]) {
      const wire = reply.render({ index: 0, method: "POST", path: "/", query: "", headers: {}, body: { stream: true } })
      if (wire._tag !== "Sse") return expect.unreachable()
      expect(rewritten(wire.events)).toEqual(wire.events.map(() => undefined))
    }
  })

  it("an event that is not JSON, or nests too deep, is left as it came", () => {
    const state = new StreamEvents(fallbacks)
    for (const data of ["[DONE]", "", "{", "{\"no\":\"type\"}", "[".repeat(300) + "]".repeat(300)]) {
      expect(state.rewrite(data)).toBeUndefined()
    }
    expect(state.rewrite(`{"type":"response.output_text.delta","delta":${"[".repeat(300)}${"]".repeat(300)}}`))
      .toBeUndefined()
  })
})

// ---------------------------------------------------------------------------
// The SSE splitter over arbitrary chunkings
// ---------------------------------------------------------------------------

const terminator = FastCheck.constantFrom("\n", "\r\n", "\r")
const line = FastCheck.tuple(
  FastCheck.constantFrom("data: ", "data:", "event: ", "id: ", ": ", "retry: "),
  FastCheck.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, "_"))
).map(([field, value]) => field + value)
// An event: its lines, then a blank line (a `\r` line end followed by `\n` would read as one `\r\n`).
const event = FastCheck.tuple(
  FastCheck.array(FastCheck.tuple(line, terminator), { minLength: 1, maxLength: 4 }),
  terminator
)
  .map(([lines, end]) => {
    const body = lines.map(([l, t]) => l + t).join("")
    return body + (body.endsWith("\r") && end === "\n" ? "\r" : end)
  })
const cutsOf = (text: string, fractions: ReadonlyArray<number>) => {
  const points = [...new Set(fractions.map((f) => Math.floor(f * text.length)))].sort((a, b) => a - b)
  return [0, ...points, text.length].slice(1).map((end, i, all) => text.slice(i === 0 ? 0 : all[i - 1], end))
}
const split = (splitter: SseSplitter, chunks: ReadonlyArray<string>): ReadonlyArray<Segment> => [
  ...chunks.flatMap((chunk) => splitter.push(chunk)),
  ...splitter.end()
]
const eventsOf = (segments: ReadonlyArray<Segment>) => segments.flatMap((s) => (s._tag === "Event" ? [s.text] : []))
const joined = (segments: ReadonlyArray<Segment>) => segments.map((s) => s.text).join("")

describe("issue 19: the SSE splitter", () => {
  it("cuts at blank lines whatever the chunking: the same events as the text in one piece, and nothing lost or added", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(event, { maxLength: 8 }),
        FastCheck.array(FastCheck.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        FastCheck.string({ maxLength: 6 }).map((s) => s.replace(/[\r\n]/g, "")),
        (events, fractions, tail) => {
          const text = events.join("") + tail
          // Random cuts; one character at a time (every `\r\n` cut in two); the text in one piece.
          for (const chunks of [cutsOf(text, fractions), [...text], [text]]) {
            const segments = split(new SseSplitter(1 << 20), chunks)
            expect(joined(segments)).toBe(text)
            expect(eventsOf(segments)).toEqual(events)
          }
        }
      ),
      { numRuns: propertyRuns(5_000) }
    )
  })

  it("holds at most maxEventChars of an event: a longer one streams through as it came, the events around it stay whole", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(event, { maxLength: 8 }),
        FastCheck.array(FastCheck.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        (events, fractions) => {
          const max = 24
          const text = events.join("")
          const segments = split(new SseSplitter(max), cutsOf(text, fractions))
          expect(joined(segments)).toBe(text)
          // The whole events are the input's, in order; every event within the limit is whole.
          const whole = eventsOf(segments)
          let from = 0
          for (const e of whole) {
            const at = events.indexOf(e, from)
            expect(at).toBeGreaterThanOrEqual(0)
            from = at + 1
          }
          for (const e of events) if (e.length <= max) expect(whole).toContain(e)
        }
      ),
      { numRuns: propertyRuns(2_000) }
    )
  })

  it("bytes: the rewritten llama.cpp stream is the same however its bytes are chunked (UTF-8 split mid-character too), and decodes event for event", () => {
    const deltas = ["Lisbon ", "ünïcödé ", "✓ 🌍"]
    const wire = Servers.streamOf("llamacpp", deltas).map(WireServer.frame).join("")
    const bytes = new TextEncoder().encode(wire)
    const run = (chunks: ReadonlyArray<Uint8Array>) => {
      const pass = rewriter(new StreamEvents(fallbacks).rewrite, normalizedBodyBytes)
      return Buffer.concat([...chunks.map(pass.push), pass.end()]).toString("utf8")
    }
    const whole = run([bytes])
    const data = whole.split("\n").filter((l) => l.startsWith("data: {")).map((l) => l.slice(6))
    expect(data.map((d) => decodesAs(OpenAiClient.ResponseStreamEvent, d).type)).toHaveLength(11)
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), (at) => {
        const points = [0, ...[...new Set(at)].sort((a, b) => a - b), bytes.length]
        expect(run(points.slice(1).map((end, i) => bytes.subarray(points[i]!, end)))).toBe(whole)
      }),
      { numRuns: propertyRuns(1_000) }
    )
  })

  it("bytes: a complete stream comes out byte for byte; an over-long event passes through untouched and the next is still filled", () => {
    const wire = Servers.sseEvents("ollama").map(WireServer.frame).join("")
    const pass = rewriter(new StreamEvents(fallbacks).rewrite, normalizedBodyBytes)
    expect(Buffer.concat([pass.push(new TextEncoder().encode(wire)), pass.end()]).toString("utf8")).toBe(wire)

    const long = `data: {"type":"response.output_text.delta","delta":"${"x".repeat(200)}"}\n\n`
    const short = `data: {"type":"response.output_text.delta","delta":"y"}\n\n`
    const small = rewriter(new StreamEvents(fallbacks).rewrite, 64)
    const out = Buffer.concat([
      ...[long.slice(0, 100), long.slice(100), short].map((s) => small.push(new TextEncoder().encode(s))),
      small.end()
    ]).toString("utf8")
    expect(out.startsWith(long)).toBe(true)
    expect(parsed(out.slice(long.length).replace(/^data: /, ""))).toMatchObject({ delta: "y", output_index: 0 })
  })
})
