/**
 * Test support for the server's streams: a model whose plans and tokens a
 * test controls (slow tokens, tokens held behind a gate, token usage), a
 * quote tool that can be held in flight, an agent over them, the
 * `AgentServer` over it on a real socket (port 0), the stream functions
 * mounted on a bare `HttpRouter` (for a short keep-alive period) — plus an
 * SSE reader built on `@effect/experimental`'s parser.
 */
import { Tool } from "@effect/ai"
import type * as Response from "@effect/ai/Response"
import { Sse as SseParser } from "@effect/experimental"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Duration, Effect, Exit, Layer, Option, Schema, Scope, Stream } from "effect"
import {
  Agent,
  type Approval,
  ExecutionStore,
  type Hook,
  ModelProvider,
  Pipeline,
  type PipelineRequest,
  ToolRegistry
} from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import { createServer } from "node:http"
import type * as ApiError from "../../../src/server/ApiError.js"
import { chatCompletions } from "../../../src/server/internal/chatCompletions.js"
import { ChatCompletionRequest } from "../../../src/server/internal/chatCompletionsWire.js"
import { rejectedData, requestStream } from "../../../src/server/internal/requestStream.js"
import type { StreamOptions } from "../../../src/server/internal/sse.js"

export const NAMESPACE = "test-tools"

/** What the test model answers. Plans and tokens are functions of the prompt (it contains the request). */
export interface ModelScript {
  readonly plan: (prompt: string) => unknown
  readonly tokens: (prompt: string) => ReadonlyArray<string>
  /** Waited for before each token (slow tokens, or tokens held behind a gate). */
  readonly beforeToken?: ((prompt: string, index: number) => Effect.Effect<void>) | undefined
  /** Token counts every call reports. */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number } | undefined
}

const promptText = (options: { readonly prompt: { readonly content: ReadonlyArray<unknown> } }): string =>
  JSON.stringify(options.prompt.content)

/** The test model as the `LanguageModel` (and the pipeline's direct interface). */
export const modelLayer = (script: ModelScript) =>
  ModelProvider.layer(ModelProvider.make({
    generateText: (options) =>
      Effect.sync((): Array<Response.PartEncoded> => {
        const prompt = promptText(options)
        const text = options.responseFormat.type === "json"
          ? JSON.stringify(script.plan(prompt))
          : script.tokens(prompt).join("")
        return [{ type: "text", text }, finish(script)]
      }),
    streamText: (options) =>
      Stream.suspend(() => {
        const prompt = promptText(options)
        const tokens = script.tokens(prompt)
        const before = script.beforeToken
        const deltas = Stream.fromIterable(tokens.map((delta, index) => ({ delta, index }))).pipe(
          Stream.mapEffect(({ delta, index }) =>
            Effect.as(
              before === undefined ? Effect.void : before(prompt, index),
              { type: "text-delta", id: "t", delta } satisfies Response.StreamPartEncoded
            )
          )
        )
        return Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-start", id: "t" }).pipe(
          Stream.concat(deltas),
          Stream.concat(Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-end", id: "t" }, finish(script)))
        )
      })
  }))

const finish = (script: ModelScript): Response.FinishPartEncoded => ({
  type: "finish",
  reason: "stop",
  usage: {
    inputTokens: script.usage?.inputTokens,
    outputTokens: script.usage?.outputTokens,
    totalTokens: script.usage === undefined ? undefined : script.usage.inputTokens + script.usage.outputTokens
  }
})

export const Quote = Tool.make("quote", {
  description: "A stock quote",
  parameters: { symbol: Schema.String },
  success: Schema.Struct({ symbol: Schema.String, price: Schema.Number })
})

export const Trade = Tool.make("trade", {
  description: "A trade (needs approval)",
  parameters: { symbol: Schema.String },
  success: Schema.Struct({ orderId: Schema.String })
})

/** A quote tool that waits for `hold` (when given) before it answers. */
export const quoteTool = (hold?: (symbol: string) => Effect.Effect<void>) =>
  ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "quotes",
    tool: Quote,
    handler: ({ symbol }) => Effect.as(hold === undefined ? Effect.void : hold(symbol), { symbol, price: 42 })
  })

export const tradeTool = ToolRegistry.entry({
  namespace: NAMESPACE,
  agent: "trading",
  tool: Trade,
  handler: ({ symbol }) => Effect.succeed({ orderId: `order-${symbol}` })
})

export const quoteStep = (stepId: string, symbol = "ACME") => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "quotes",
  capability: "quote",
  parameters: { symbol }
})

export const tradeStep = (stepId: string) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "trading",
  capability: "trade",
  parameters: { symbol: "ACME" }
})

/** Trades need a human's approval. */
export const tradesNeedApproval: Approval.ApprovalPolicy["Type"] = {
  evaluate: (_context, plan) =>
    Effect.succeed(
      plan.steps.some((s) => s.capability === "trade")
        ? { _tag: "Suspend", reason: "trades need approval" }
        : { _tag: "Approve" }
    )
}

/** An agent over the test model, the quote and trade tools, and in-memory stores. */
export const agentLayer = (options: {
  readonly script: ModelScript
  readonly hold?: (symbol: string) => Effect.Effect<void>
  readonly hooks?: ReadonlyArray<Hook.Hook<never>>
}) =>
  Agent.layer({
    model: modelLayer(options.script),
    tools: [quoteTool(options.hold), tradeTool],
    hooks: options.hooks ?? [],
    approval: tradesNeedApproval
  })

/** What a test gets from {@link serve}. */
export interface Served {
  readonly url: string
  readonly store: ExecutionStore.ExecutionStore.Service
  readonly pipeline: Pipeline.Pipeline.Service
  /** Starts the server's shutdown (its streams see `draining`); completes once it is closed. */
  readonly drain: Effect.Effect<void>
}

const urlOf = (server: HttpServer.HttpServer) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : ""

/**
 * `AgentServer.layer` (port 0 on loopback, no rate limit) over `agent`,
 * for the current Scope. The server has a Scope of its own, so a test can
 * shut it down (`drain`) while the agent lives on.
 */
export const serve = (
  agent: Layer.Layer<Agent.Services, unknown>,
  options: { readonly pollInterval?: Duration.DurationInput; readonly drainTimeout?: Duration.DurationInput } = {}
) =>
  Effect.gen(function*() {
    const services = yield* Layer.build(agent)
    const serverScope = yield* Scope.make()
    yield* Effect.addFinalizer((exit) => Scope.close(serverScope, exit))
    const context = yield* Layer.buildWithScope(
      AgentServer.layer({
        port: 0,
        rateLimit: false,
        recordPollInterval: options.pollInterval ?? Duration.millis(50),
        drainTimeout: options.drainTimeout ?? Duration.seconds(5)
      }).pipe(Layer.provide(Layer.succeedContext(services))),
      serverScope
    )
    return {
      url: urlOf(Context.get(context, HttpServer.HttpServer)),
      store: Context.get(services, ExecutionStore.ExecutionStore),
      pipeline: Context.get(services, Pipeline.Pipeline),
      drain: Scope.close(serverScope, Exit.void)
    } satisfies Served
  })

const errorResponse = (error: ApiError.ApiError) => {
  const { status, ...body } = rejectedData(error)
  return HttpServerResponse.unsafeJson(body, { status })
}

// The router passes the body on as a caller would: unchecked (the stream function decodes it).
const untyped = (body: unknown): PipelineRequest.Input => body as PipelineRequest.Input

/**
 * The stream functions mounted on a plain `HttpRouter` (no AgentServer),
 * with a keep-alive period of the test's choosing (AgentServer's is fixed
 * at 15 s) — for the keep-alive test over a socket.
 */
export const serveMounted = (
  agent: Layer.Layer<Agent.Services, unknown>,
  options: { readonly keepAlive: Duration.DurationInput }
) =>
  Effect.gen(function*() {
    const streamOptions: StreamOptions = {
      pollInterval: Duration.millis(50),
      keepAlive: options.keepAlive,
      draining: Effect.never
    }
    const app = HttpRouter.empty.pipe(
      HttpRouter.post(
        "/v1/requests/stream",
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => request.json).pipe(
          Effect.orDie,
          Effect.flatMap((body) => requestStream(untyped(body), streamOptions)),
          Effect.catchAll((error) => Effect.succeed(errorResponse(error)))
        )
      ),
      HttpRouter.post(
        "/v1/chat/completions",
        HttpServerRequest.schemaBodyJson(ChatCompletionRequest).pipe(
          Effect.orDie,
          Effect.flatMap((body) => chatCompletions(body, streamOptions)),
          Effect.catchAll((error) => Effect.succeed(errorResponse(error)))
        )
      )
    )
    const context = yield* Layer.build(
      HttpServer.serve(app).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provideMerge(agent)
      )
    )
    return { url: urlOf(Context.get(context, HttpServer.HttpServer)) }
  })

/** One parsed SSE event. */
export interface ParsedEvent {
  readonly id: string | undefined
  readonly event: string
  readonly data: string
}

/** Reads an SSE body as it arrives: `onEvent` sees each event; resolves with all of them and the raw text. */
export const readSse = async (
  response: globalThis.Response,
  onEvent?: (event: ParsedEvent, all: ReadonlyArray<ParsedEvent>) => void
): Promise<{ readonly events: ReadonlyArray<ParsedEvent>; readonly raw: string }> => {
  const events: Array<ParsedEvent> = []
  let raw = ""
  const parser = SseParser.makeParser((e) => {
    if (e._tag !== "Event") return
    const parsed = { id: e.id, event: e.event, data: e.data }
    events.push(parsed)
    onEvent?.(parsed, events)
  })
  const body = response.body
  if (body === null) return { events, raw }
  const decoder = new TextDecoder()
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true })
    raw += text
    parser.feed(text)
  }
  return { events, raw }
}

/** The record of `requestId` once it is no longer running (polled live). */
export const settledRecord = (store: ExecutionStore.ExecutionStore.Service, requestId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      const found = yield* Effect.orDie(store.get(requestId))
      if (Option.isSome(found) && found.value.lifecycle?.status !== "running") return found.value
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.dieMessage(`record ${requestId} did not settle`)
  })
