/**
 * The wire test servers are faithful and do what they say:
 *
 * - every body and SSE event `FakeOpenAi` / `FakeAnthropic` send decodes with
 *   the provider package's own Schemas (the OpenAI client silently skips an
 *   event it cannot decode, so a wrong shape would only show as a missing
 *   token);
 * - each scripted misbehaviour (status + headers, a body that is not JSON, a
 *   delay, a hang, a stream cut after N events or mid-event) happens on the
 *   wire, and every request is recorded;
 * - what the real provider clients make of each misbehaviour (the AI error
 *   a retry or timeout policy will see).
 */
import { AiError, LanguageModel } from "@effect/ai"
import { AnthropicClient, Generated as AnthropicGenerated } from "@effect/ai-anthropic"
import { Generated as OpenAiGenerated, OpenAiClient } from "@effect/ai-openai"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Exit, Layer, Redacted, Schema, type Scope, Stream } from "effect"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as OpenAi from "effect-agent-pipeline/openai"
import * as FakeAnthropic from "../../support/FakeAnthropic.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import * as WireServer from "../../support/WireServer.js"

const request = (index: number, body: unknown): WireServer.ReceivedRequest => ({
  index,
  method: "POST",
  path: "/",
  query: "",
  headers: {},
  body
})

/** Renders a reply for a request body, as the server would. */
const render = (reply: WireServer.Reply, body: unknown): WireServer.Wire => reply.render(request(3, body))

const eventsOf = (wire: WireServer.Wire): ReadonlyArray<unknown> =>
  wire._tag === "Sse" ? wire.events.map((e) => JSON.parse(e.data)) : []

const bodyOf = (wire: WireServer.Wire): unknown => (wire._tag === "Body" ? JSON.parse(wire.body) : undefined)

const decodes = <A, I>(schema: Schema.Schema<A, I>, value: unknown): boolean => {
  const result = Schema.decodeUnknownEither(schema)(value)
  if (Either.isLeft(result)) throw new Error(`does not decode: ${result.left.message}\n${JSON.stringify(value)}`)
  return true
}

describe("FakeOpenAi speaks the Responses API as @effect/ai-openai decodes it", () => {
  const streamed = { model: "m", stream: true }
  const buffered = { model: "m" }

  it("message and function-call bodies decode as a Response; embeddings as a CreateEmbeddingResponse", () => {
    for (const reply of [FakeOpenAi.text("hi"), FakeOpenAi.json({ a: 1 }), FakeOpenAi.functionCall("tool", { x: 1 })]) {
      expect(decodes(OpenAiGenerated.Response, bodyOf(render(reply, buffered)))).toBe(true)
    }
    const embeddings = bodyOf(render(FakeOpenAi.embeddings(), { model: "e", input: ["a", "b"] }))
    expect(decodes(OpenAiGenerated.CreateEmbeddingResponse, embeddings)).toBe(true)
    expect(Schema.decodeUnknownSync(OpenAiGenerated.CreateEmbeddingResponse)(embeddings).data).toHaveLength(2)
  })

  it("every streamed event decodes as a ResponseStreamEvent, in the real order", () => {
    const text = eventsOf(render(FakeOpenAi.text("Hello world", { deltas: ["Hel", "lo world"] }), streamed))
    for (const event of text) expect(decodes(OpenAiClient.ResponseStreamEvent, event)).toBe(true)
    expect(text.map((e) => Schema.decodeUnknownSync(OpenAiClient.ResponseStreamEvent)(e).type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed"
    ])
    const call = eventsOf(render(FakeOpenAi.functionCall("get_weather", { city: "Paris" }), streamed))
    for (const event of call) expect(decodes(OpenAiClient.ResponseStreamEvent, event)).toBe(true)
    expect(call).toContainEqual(
      expect.objectContaining({ type: "response.function_call_arguments.done", arguments: "{\"city\":\"Paris\"}" })
    )
  })

  it("the model name is echoed and a stream is sent only when asked for", () => {
    expect(bodyOf(render(FakeOpenAi.text("x"), { model: "gpt-echo" }))).toMatchObject({
      model: "gpt-echo",
      id: "resp_3"
    })
    expect(render(FakeOpenAi.text("x"), streamed)._tag).toBe("Sse")
    expect(() => FakeOpenAi.text("abc", { deltas: ["a", "c"] })).toThrow(/do not make/)
  })
})

describe("FakeAnthropic speaks the Messages API as @effect/ai-anthropic decodes it", () => {
  const forced = { model: "c", tool_choice: { type: "tool", name: "routing_plan" } }

  it("text and tool_use bodies decode as a BetaMessage; the tool is the one the request forces", () => {
    expect(decodes(AnthropicGenerated.BetaMessage, bodyOf(render(FakeAnthropic.text("hi"), { model: "c" })))).toBe(true)
    const tool = bodyOf(render(FakeAnthropic.json({ steps: [] }), forced))
    expect(decodes(AnthropicGenerated.BetaMessage, tool)).toBe(true)
    expect(tool).toMatchObject({
      content: [{ type: "tool_use", name: "routing_plan", input: { steps: [] } }],
      stop_reason: "tool_use"
    })
  })

  it("every streamed event decodes as a MessageStreamEvent, in the real order", () => {
    const events = eventsOf(render(FakeAnthropic.text("Hello world"), { model: "c", stream: true }))
    for (const event of events) expect(decodes(AnthropicClient.MessageStreamEvent, event)).toBe(true)
    expect(events.map((e) => Schema.decodeUnknownSync(AnthropicClient.MessageStreamEvent)(e).type)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])
    const tool = eventsOf(render(FakeAnthropic.json({ a: [1, 2] }), { ...forced, stream: true }))
    for (const event of tool) expect(decodes(AnthropicClient.MessageStreamEvent, event)).toBe(true)
  })

  it("the error body decodes as Anthropic's error response", () => {
    expect(decodes(AnthropicGenerated.BetaErrorResponse, bodyOf(render(FakeAnthropic.error(429, "slow down"), {}))))
      .toBe(true)
  })
})

// ---------------------------------------------------------------------------
// Behaviours on the wire
// ---------------------------------------------------------------------------

/** A Layer's service, alive as long as the current Scope. */
const serviceIn = <I, S, E>(tag: Context.Tag<I, S>, layer: Layer.Layer<I, E>): Effect.Effect<S, E, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, tag))

const post = (url: string, body: unknown) =>
  Effect.flatMap(
    serviceIn(HttpClient.HttpClient, NodeHttpClient.layerUndici),
    (client) =>
      client.execute(
        HttpClientRequest.post(url).pipe(
          HttpClientRequest.bodyUnsafeJson(body),
          HttpClientRequest.setHeader("x-test", "yes")
        )
      )
  )

describe("WireServer: scripted misbehaviour on the wire", () => {
  it.scoped("answers in order with status, headers and body; records method, path, query, headers and parsed body", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.error(429, "slow down", { headers: { "retry-after": "2" } }),
        FakeOpenAi.notJson(),
        FakeOpenAi.status(503, { body: "upstream down", headers: { "content-type": "text/plain" } })
      )
      const first = yield* post(`${server.apiUrl}/responses?x=1`, { model: "m", n: 1 })
      expect(first.status).toBe(429)
      expect(first.headers["retry-after"]).toBe("2")
      expect(yield* first.json).toMatchObject({ error: { message: "slow down", type: "rate_limit_exceeded" } })
      const second = yield* post(`${server.apiUrl}/responses`, { n: 2 })
      expect(second.status).toBe(200)
      expect(yield* second.text).toBe("{\"id\":\"resp_1\",\"object\":\"resp")
      const third = yield* post(`${server.apiUrl}/other`, { n: 3 })
      expect([third.status, yield* third.text]).toEqual([503, "upstream down"])
      const unscripted = yield* post(`${server.apiUrl}/responses`, "not an object")
      expect(unscripted.status).toBe(500)
      expect(yield* unscripted.text).toContain("no scripted reply for POST /v1/responses")

      const requests = yield* server.requests
      expect(requests.map((r) => [r.index, r.method, r.path, r.query])).toEqual([
        [0, "POST", "/v1/responses", "?x=1"],
        [1, "POST", "/v1/responses", ""],
        [2, "POST", "/v1/other", ""],
        [3, "POST", "/v1/responses", ""]
      ])
      expect(requests[0]?.body).toEqual({ model: "m", n: 1 })
      expect(requests[3]?.body).toBe("not an object")
      expect(requests[0]?.headers["x-test"]).toBe("yes")
      expect(yield* server.pending).toBe(0)
    }))

  it.live("a delayed reply arrives after its delay (real time)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.delayed(FakeOpenAi.text("late"), "300 millis"))
      const [elapsed, response] = yield* Effect.timed(post(`${server.apiUrl}/responses`, { model: "m" }))
      expect(response.status).toBe(200)
      expect(Duration.toMillis(elapsed)).toBeGreaterThanOrEqual(280)
    })))

  it.live("a hang never answers: the client gives up, and closing the server does not wait for it", () =>
    Effect.gen(function*() {
      const [elapsed] = yield* Effect.timed(Effect.scoped(Effect.gen(function*() {
        const server = yield* FakeOpenAi.make
        yield* server.enqueue(FakeOpenAi.hang)
        const exit = yield* Effect.exit(
          Effect.timeout(post(`${server.apiUrl}/responses`, { model: "m" }), "300 millis")
        )
        expect(Exit.isFailure(exit) && String(exit.cause)).toContain("TimeoutException")
        expect((yield* server.requests).length).toBe(1)
      })))
      expect(Duration.toMillis(elapsed)).toBeLessThan(5_000)
    }))

  it.live("a hung request still open when the Scope closes is cut, and the server closes", () =>
    Effect.gen(function*() {
      const [elapsed] = yield* Effect.timed(Effect.scoped(Effect.gen(function*() {
        const server = yield* FakeOpenAi.make
        yield* server.enqueue(FakeOpenAi.hang)
        yield* Effect.forkScoped(post(`${server.apiUrl}/responses`, { model: "m" }))
        yield* Effect.sleep("100 millis")
        expect((yield* server.requests).length).toBe(1)
      })))
      expect(Duration.toMillis(elapsed)).toBeLessThan(5_000)
    }))

  it.live("a stream cut after N events delivers N events, then the connection dies (also mid-event)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const reply = FakeOpenAi.text("one two three four")
      yield* server.enqueue(
        FakeOpenAi.cut(reply, { afterEvents: 5 }),
        FakeOpenAi.cut(reply, { afterEvents: 5, midEvent: true })
      )
      for (const midEvent of [false, true]) {
        const response = yield* post(`${server.apiUrl}/responses`, { model: "m", stream: true })
        expect(response.status).toBe(200)
        expect(response.headers["content-type"]).toBe("text/event-stream")
        const received: Array<string> = []
        const exit = yield* Effect.exit(
          Stream.runForEach(Stream.decodeText(response.stream), (text) => Effect.sync(() => void received.push(text)))
        )
        expect(Exit.isFailure(exit)).toBe(true)
        const text = received.join("")
        const complete = text.split("\n\n").filter((f) => f.startsWith("event: "))
        const whole = midEvent ? complete.slice(0, -1) : complete.filter((f) => f.length > 0)
        expect(whole.length).toBe(5)
        expect(text.endsWith("\n\n")).toBe(!midEvent)
      }
    })))

  it.live("paced events arrive apart (real time)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.paced(FakeOpenAi.text("a b"), "40 millis"))
      const [elapsed, response] = yield* Effect.timed(
        Effect.flatMap(post(`${server.apiUrl}/responses`, { model: "m", stream: true }), (r) => r.text)
      )
      expect(response).toContain("response.completed")
      // 11 events, 40 ms apart.
      expect(Duration.toMillis(elapsed)).toBeGreaterThanOrEqual(400)
    })))
})

// ---------------------------------------------------------------------------
// What the real clients make of each misbehaviour
// ---------------------------------------------------------------------------

const aiErrorOf = <A>(exit: Exit.Exit<A, AiError.AiError>): AiError.AiError => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return failure
}

const openAiModel = (server: FakeOpenAi.FakeOpenAi) =>
  serviceIn(
    LanguageModel.LanguageModel,
    OpenAi.layer({ model: "m", apiUrl: server.apiUrl, apiKey: Redacted.make("k") })
  )

const anthropicModel = (server: FakeAnthropic.FakeAnthropic) =>
  serviceIn(
    LanguageModel.LanguageModel,
    Anthropic.layer({ model: "c", apiUrl: server.apiUrl, apiKey: Redacted.make("k") })
  )

describe("the provider clients' view of each misbehaviour", () => {
  it.scoped("OpenAI: a status is HttpResponseError (with its headers); a 200 that is not JSON is HttpResponseError Decode; JSON that is not a Response is MalformedOutput from createResponse", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(
        FakeOpenAi.error(429, "slow down", { headers: { "retry-after": "1" } }),
        FakeOpenAi.error(500, "boom"),
        FakeOpenAi.notJson(),
        FakeOpenAi.brokenBody
      )
      const model = yield* openAiModel(server)
      const errors: Array<AiError.AiError> = []
      for (let i = 0; i < 4; i++) errors.push(aiErrorOf(yield* Effect.exit(model.generateText({ prompt: "hi" }))))
      const [rateLimited, serverError, notJson, broken] = errors
      expect(
        rateLimited?._tag === "HttpResponseError" &&
          [rateLimited.response.status, rateLimited.response.headers["retry-after"]]
      )
        .toEqual([429, "1"])
      expect(serverError?._tag === "HttpResponseError" && serverError.response.status).toBe(500)
      // Unparsable JSON fails in the HTTP layer; JSON of the wrong shape in the client's Schema.
      expect(notJson?._tag === "HttpResponseError" && [notJson.reason, notJson.response.status]).toEqual([
        "Decode",
        200
      ])
      expect(broken?._tag === "MalformedOutput" && [broken.module, broken.method]).toEqual([
        "OpenAiClient",
        "createResponse"
      ])
    }))

  it.live("OpenAI: a stream cut mid-event fails the stream after the tokens already received", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      // created, in_progress, item added, part added, then 2 of 4 deltas and half of the third.
      yield* server.enqueue(FakeOpenAi.cut(FakeOpenAi.text("a b c d"), { afterEvents: 6, midEvent: true }))
      const model = yield* openAiModel(server)
      const deltas: Array<string> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(model.streamText({ prompt: "hi" }), (part) =>
          Effect.sync(() => {
            if (part.type === "text-delta") deltas.push(part.delta)
          }))
      )
      expect(deltas).toEqual(["a ", "b "])
      expect(aiErrorOf(exit)._tag).toMatch(/^Http(Request|Response)Error$/)
    })))

  it.scoped("Anthropic: a status is HttpResponseError; JSON that is not a Message is MalformedOutput from createMessage; not JSON is HttpResponseError Decode", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.error(429, "slow down", { headers: { "retry-after": "3" } }),
        FakeAnthropic.error(529, "overloaded"),
        FakeAnthropic.brokenBody,
        FakeAnthropic.notJson()
      )
      const model = yield* anthropicModel(server)
      const errors: Array<AiError.AiError> = []
      for (let i = 0; i < 4; i++) errors.push(aiErrorOf(yield* Effect.exit(model.generateText({ prompt: "hi" }))))
      const [rateLimited, overloaded, broken, notJson] = errors as [
        AiError.AiError,
        AiError.AiError,
        AiError.AiError,
        AiError.AiError
      ]
      expect(
        rateLimited._tag === "HttpResponseError" &&
          [rateLimited.response.status, rateLimited.response.headers["retry-after"]]
      )
        .toEqual([429, "3"])
      expect(overloaded._tag === "HttpResponseError" && overloaded.response.status).toBe(529)
      expect(broken._tag === "MalformedOutput" && [broken.module, broken.method]).toEqual([
        "AnthropicClient",
        "createMessage"
      ])
      expect(notJson._tag === "HttpResponseError" && [notJson.reason, notJson.response.status]).toEqual(["Decode", 200])
      const paths = (yield* server.requests).map((r) => `${r.path}${r.query}`)
      expect(paths).toEqual(Array.from({ length: 4 }, () => "/v1/messages?beta=true"))
    }))

  it.live("Anthropic: a stream cut after N events fails after the text already received", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      // message_start, block start, ping, then 2 deltas.
      yield* server.enqueue(FakeAnthropic.cut(FakeAnthropic.text("a b c d"), { afterEvents: 5 }))
      const model = yield* anthropicModel(server)
      const parts = yield* Effect.exit(Stream.runCollect(model.streamText({ prompt: "hi" })))
      expect(aiErrorOf(parts)._tag).toMatch(/^Http(Request|Response)Error$/)
      const [request] = yield* server.requests
      expect(request?.path).toBe("/v1/messages")
    })))
})

// The servers are also usable as Layers.
describe("FakeOpenAi.layer / FakeAnthropic.layer", () => {
  it.scoped("provide a started server", () =>
    Effect.gen(function*() {
      const openai = yield* FakeOpenAi.Server
      const anthropic = yield* FakeAnthropic.Server
      expect(openai.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
      expect(anthropic.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    }).pipe(Effect.provide(Layer.merge(FakeOpenAi.layer, FakeAnthropic.layer))))
})
