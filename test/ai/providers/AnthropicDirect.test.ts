/**
 * Issue 20: `Anthropic.layer`'s direct path (the pipeline's `DirectModel`,
 * src/ai/internal/anthropicDirect.ts) against `@effect/ai-anthropic`'s
 * `LanguageModel` — the `LanguageModel` the same Layer provides — over
 * real HTTP on loopback (test/support/FakeAnthropic.ts, which records every
 * request). For planning (the forced `routing_plan` tool call), buffered
 * synthesis and streamed synthesis, with and without request settings and a
 * `withConfigOverride`: the same requests (method, URL, headers, and the
 * body as the same JSON text, key order included), the same answers (text,
 * usage, model id; the same stream parts), and the same typed failures.
 */
import { AiError, LanguageModel, type Response } from "@effect/ai"
import { AnthropicLanguageModel } from "@effect/ai-anthropic"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, Exit, Layer, Redacted, Stream } from "effect"
import { ModelProvider } from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as FakeAnthropic from "../../support/FakeAnthropic.js"
import { plan, quoteStep, weatherStep } from "../../support/Harness.js"
import * as WireServer from "../../support/WireServer.js"

const KEY = Redacted.make("sk-ant-test")

/** Both faces of one `Anthropic.layer` on `server`. */
const facesOn = (server: FakeAnthropic.FakeAnthropic, config?: Anthropic.Options["config"]) =>
  Effect.map(
    Layer.build(Anthropic.layer({ model: "claude-test", apiUrl: server.apiUrl, apiKey: KEY, config })),
    (context) => ({
      languageModel: Context.get(context, LanguageModel.LanguageModel),
      direct: Context.get(context, ModelProvider.DirectModel)
    })
  )

type Faces = Effect.Effect.Success<ReturnType<typeof facesOn>>

/** What went on the wire: the body as its JSON text (so key order counts too). */
const wire = (request: WireServer.ReceivedRequest) => ({
  method: request.method,
  url: `${request.path}${request.query}`,
  headers: request.headers,
  body: JSON.stringify(request.body)
})

/** The requests, in pairs (LanguageModel's, then the direct path's): each pair the same on the wire. */
const expectPairsEqual = (requests: ReadonlyArray<WireServer.ReceivedRequest>) => {
  expect(requests.length % 2).toBe(0)
  for (let i = 0; i < requests.length; i += 2) {
    expect(wire(requests[i + 1]!), `request ${i + 1} (direct) against ${i} (LanguageModel)`).toEqual(
      wire(requests[i]!)
    )
  }
}

/** Stream parts, but for the response's id (the fake numbers its answers) and timestamp (each is read at its own time). */
const comparable = (parts: ReadonlyArray<Response.StreamPart<{}>>) =>
  parts.map((part) => (part.type === "response-metadata" ? { ...part, id: "(id)", timestamp: "(read time)" } : part))

const PROMPT = "What's the weather in Lisbon? <context>quotes \"ACME\" — ✓ 東京</context>\n\ttrailing "

const planBoth = ({ direct, languageModel }: Faces, prompt = PROMPT) =>
  Effect.all([
    Effect.map(
      languageModel.generateObject({ prompt, schema: ModelProvider.PlanRequest, objectName: "routing_plan" }),
      ModelProvider.responseOfText
    ),
    direct.generatePlan(prompt)
  ])

const textBoth = ({ direct, languageModel }: Faces, prompt = PROMPT) =>
  Effect.all([
    Effect.map(languageModel.generateText({ prompt }), ModelProvider.responseOfText),
    direct.generateText(prompt)
  ])

const collect = <A, E>(stream: Stream.Stream<A, E>) => Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray)

const streamBoth = ({ direct, languageModel }: Faces, prompt = PROMPT) =>
  Effect.all([collect(languageModel.streamText({ prompt })), collect(direct.streamText!(prompt))])

const SETTINGS: Anthropic.Options["config"] = {
  max_tokens: 1000,
  temperature: 0.2,
  top_k: 5,
  top_p: 0.9,
  stop_sequences: ["END"],
  metadata: { user_id: "u-1" }
}

describe("Anthropic direct path: the same requests and answers as @effect/ai-anthropic's LanguageModel", () => {
  for (const [label, config] of [["default settings", undefined], ["request settings", SETTINGS]] as const) {
    it.scoped(`planning, buffered and streamed synthesis (${label}): the same requests, byte for byte; the same answers`, () =>
      Effect.gen(function*() {
        const server = yield* FakeAnthropic.make
        const faces = yield* facesOn(server, config)
        const reply = FakeAnthropic.plan(plan([weatherStep("w1", "Lisbon"), quoteStep("q1")]), {
          usage: { input_tokens: 120, output_tokens: 33 }
        })
        const deltas = ["Lisbon ", "is ", "sunny", " — ✓"]
        const answer = FakeAnthropic.text(deltas.join(""), { deltas, usage: { input_tokens: 80, output_tokens: 9 } })
        yield* server.enqueue(reply, reply, answer, answer, answer, answer)

        const [lmPlan, directPlan] = yield* planBoth(faces)
        expect(directPlan).toEqual(lmPlan)
        expect(directPlan.usage).toEqual({ inputTokens: 120, outputTokens: 33, totalTokens: 153 })
        expect(directPlan.modelId).toBe("claude-test")
        expect(JSON.parse(directPlan.text)).toHaveProperty("steps")

        const [lmText, directText] = yield* textBoth(faces)
        expect(directText).toEqual(lmText)
        expect(directText).toEqual({
          text: deltas.join(""),
          usage: { inputTokens: 80, outputTokens: 9, totalTokens: 89 },
          modelId: "claude-test"
        })

        const [lmParts, directParts] = yield* streamBoth(faces)
        expect(comparable(directParts)).toEqual(comparable(lmParts))
        expect(directParts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []))).toEqual(deltas)

        const requests = yield* server.requests
        expect(requests.map((r) => `${r.path}${r.query}`)).toEqual([
          ...Array(4).fill("/v1/messages?beta=true"),
          "/v1/messages",
          "/v1/messages"
        ])
        expectPairsEqual(requests)
        const [planning] = requests
        expect(planning!.body).toMatchObject({
          max_tokens: config?.max_tokens ?? 4096,
          model: "claude-test",
          messages: [{ role: "user", content: [{ type: "text", text: PROMPT }] }],
          tool_choice: { type: "tool", name: "routing_plan", disable_parallel_tool_use: true }
        })
        if (config !== undefined) expect(planning!.body).toMatchObject(config)
      }))
  }

  it.scoped("a withConfigOverride in force at the call is sent on both paths", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      const faces = yield* facesOn(server, { temperature: 0.2 })
      yield* server.enqueue(FakeAnthropic.plan(plan([])), FakeAnthropic.plan(plan([])))
      yield* server.enqueue(FakeAnthropic.text("ok"), FakeAnthropic.text("ok"))
      const override = AnthropicLanguageModel.withConfigOverride({ temperature: 0.7, max_tokens: 64 })
      yield* override(planBoth(faces, "plan it"))
      yield* override(streamBoth(faces, "say ok"))
      const requests = yield* server.requests
      expectPairsEqual(requests)
      for (const r of requests) expect(r.body).toMatchObject({ temperature: 0.7, max_tokens: 64 })
    }))
})

/** A reply streaming `events` (one SSE event each). */
const sse = (events: (request: WireServer.ReceivedRequest) => ReadonlyArray<WireServer.JsonEvent>) =>
  WireServer.reply((request) => WireServer.sseOf(events(request)))

const USAGE = { input_tokens: 3, output_tokens: 4 }

/** A text answer's events cut after its first delta, then an `error` event (an overloaded server). */
const overloadedMidStream = sse((request) => [
  ...FakeAnthropic.streamEvents(request, { kind: "text", text: "ab", deltas: ["a", "b"] }, USAGE).slice(0, 4),
  { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }
])

/** A thinking block, then a text block: the text is the answer, on either path. */
const thinkingThenText = sse((request) => {
  const [start, ...rest] = FakeAnthropic.streamEvents(request, { kind: "text", text: "42", deltas: ["4", "2"] }, USAGE)
  const shifted = rest.map((e) => ("index" in e && typeof e.index === "number" ? { ...e, index: e.index + 1 } : e))
  return [
    start!,
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
    { type: "content_block_stop", index: 0 },
    ...shifted
  ]
})

const exitOf = <A>(effect: Effect.Effect<A, AiError.AiError>) => Effect.exit(effect)

describe("Anthropic direct path: the same failures and odd answers as LanguageModel", () => {
  const failures = [
    ["a 429", FakeAnthropic.error(429, "slow down", { headers: { "retry-after": "3" } })],
    ["a 500", FakeAnthropic.error(500, "boom")],
    ["a body that is not a Message", FakeAnthropic.brokenBody],
    ["a body that is not JSON", WireServer.notJson()],
    // LanguageModel cannot decode a tool call in an answer without tools, nor a plan without one.
    ["a tool call in a text answer", FakeAnthropic.toolUse({ a: 1 }, { name: "lookup" })],
    ["a text answer to a plan", FakeAnthropic.text("no plan here")]
  ] as const
  for (const [label, reply] of failures) {
    it.scoped(`${label}: the same exit for a plan, a text and a stream`, () =>
      Effect.gen(function*() {
        const server = yield* FakeAnthropic.make
        const { direct, languageModel } = yield* facesOn(server)
        yield* server.enqueue(reply, reply, reply, reply, reply, reply)
        const lmPlan = yield* exitOf(
          languageModel.generateObject({ prompt: "p", schema: ModelProvider.PlanRequest, objectName: "routing_plan" })
            .pipe(Effect.map(ModelProvider.responseOfText))
        )
        const directPlan = yield* exitOf(direct.generatePlan("p"))
        const lmText = yield* exitOf(
          Effect.map(languageModel.generateText({ prompt: "t" }), ModelProvider.responseOfText)
        )
        const directText = yield* exitOf(direct.generateText("t"))
        const lmStream = yield* exitOf(collect(languageModel.streamText({ prompt: "s" })))
        const directStream = yield* exitOf(collect(direct.streamText!("s")))
        const pairs: ReadonlyArray<
          readonly [Exit.Exit<unknown, AiError.AiError>, Exit.Exit<unknown, AiError.AiError>]
        > = [
          [directPlan, lmPlan],
          [directText, lmText],
          [directStream, lmStream]
        ]
        yield* Effect.forEach(pairs, ([d, l]) =>
          Effect.sync(() => {
            if (Exit.isSuccess(l)) {
              expect(Exit.isSuccess(d) && comparableExit(d.value)).toEqual(comparableExit(l.value))
              return
            }
            expect(Exit.isFailure(d)).toBe(true)
            const [de, le] = [failureOf(d), failureOf(l)]
            expect(AiError.isAiError(de)).toBe(true)
            // The same error: the same class and where it came from; what it says is the same
            // but for a parse error of LanguageModel's Schema, which the direct path describes.
            expect([de?._tag, de?.module, de?.method]).toEqual([le?._tag, le?.module, le?.method])
            if (le?.module !== "LanguageModel" || le.description !== undefined) {
              expect(de).toEqual(le)
            }
          }))
        expectPairsEqual(yield* server.requests)
      }))
  }

  it.scoped("a stream with an error event or a thinking block: the same parts", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      const faces = yield* facesOn(server)
      yield* server.enqueue(overloadedMidStream, overloadedMidStream, thinkingThenText, thinkingThenText)
      const [lmOverloaded, directOverloaded] = yield* streamBoth(faces)
      expect(directOverloaded.map((p) => p.type)).toEqual(["response-metadata", "text-start", "text-delta", "error"])
      expect(comparable(directOverloaded)).toEqual(comparable(lmOverloaded))
      const [lmThinking, directThinking] = yield* streamBoth(faces)
      expect(directThinking.filter((p) => p.type === "text-delta").map((p) => p.delta)).toEqual(["4", "2"])
      // The reasoning parts' provider metadata (the signature) is not kept on the direct path.
      const withoutMetadata = (parts: ReadonlyArray<Response.StreamPart<{}>>) =>
        comparable(parts).map((p) => (p.type.startsWith("reasoning") ? { ...p, metadata: {} } : p))
      expect(withoutMetadata(directThinking)).toEqual(withoutMetadata(lmThinking))
    }))
})

const failureOf = (exit: Exit.Exit<unknown, AiError.AiError>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

const comparableExit = (value: unknown) =>
  Array.isArray(value) ? comparable(value as ReadonlyArray<Response.StreamPart<{}>>) : value
