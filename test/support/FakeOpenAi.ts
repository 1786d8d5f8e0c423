/**
 * A local server speaking the OpenAI Responses API wire format, for tests
 * that drive `@effect/ai-openai` (and so `effect-agent-pipeline/openai`) over
 * real HTTP on loopback. Built on {@link WireServer}: scripted per call,
 * records every request.
 *
 * ```ts
 * const server = yield* FakeOpenAi.make                // scoped: closed with the test's Scope
 * yield* server.enqueue(
 *   FakeOpenAi.plan({ steps: [...] }),                  // structured output: the plan's strict wire form
 *   FakeOpenAi.error(429, "slow down", { headers: { "retry-after": "1" } }),
 *   FakeOpenAi.text("Paris is sunny.", { deltas: ["Paris ", "is ", "sunny."] })
 * )
 * const model = OpenAi.layer({ model: "gpt-test", apiUrl: server.apiUrl, apiKey: Redacted.make("sk-test") })
 * const [first] = yield* server.requests              // { path: "/v1/responses", headers, body, … }
 * ```
 *
 * A message reply ({@link text}, {@link json}, {@link plan},
 * {@link functionCall}) answers a plain request with a `Response` JSON body
 * and a request with `stream: true` with the real SSE event sequence:
 * `response.created`, `response.in_progress`, `response.output_item.added`,
 * `response.content_part.added`, one `response.output_text.delta` per delta,
 * `response.output_text.done`, `response.content_part.done`,
 * `response.output_item.done`, `response.completed` (with usage). Every body
 * and event decodes with `@effect/ai-openai`'s own Schemas (tested), because
 * its client skips events it cannot decode without a word.
 *
 * Unscripted requests: `POST /v1/embeddings` is answered with deterministic
 * vectors (the offline embedder's, 8 dimensions); anything else gets a 500
 * naming the request.
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { Embeddings, RoutingPlan } from "effect-agent-pipeline"
import * as WireServer from "./WireServer.js"

export { cut, delayed, hang, notJson, paced, status } from "./WireServer.js"
export type { ReceivedRequest, Reply } from "./WireServer.js"

/** Token counts a reply reports. */
export interface Usage {
  readonly input_tokens: number
  readonly output_tokens: number
}

/** The server, as a test sees it. */
export interface FakeOpenAi extends WireServer.WireServer {
  /** The `apiUrl` / `OPENAI_BASE_URL` to give the client: `{url}/v1`. */
  readonly apiUrl: string
}

export const CREATED_AT = 1_750_000_000
const DEFAULT_USAGE: Usage = { input_tokens: 42, output_tokens: 7 }
export const EMBEDDING_DIMENSIONS = 8

const { field, modelOf } = WireServer

const wantsStream = (request: WireServer.ReceivedRequest): boolean => field(request.body, "stream") === true

const usageBody = (usage: Usage) => ({
  input_tokens: usage.input_tokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: usage.output_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.input_tokens + usage.output_tokens
})

const responseBody = (
  request: WireServer.ReceivedRequest,
  status: "in_progress" | "completed",
  output: ReadonlyArray<unknown>,
  usage: Usage | null
) => ({
  id: `resp_${request.index}`,
  object: "response",
  created_at: CREATED_AT,
  status,
  error: null,
  incomplete_details: null,
  instructions: null,
  metadata: {},
  model: modelOf(request),
  output,
  parallel_tool_calls: true,
  temperature: 1,
  top_p: 1,
  tools: [],
  tool_choice: "auto",
  usage: usage === null ? null : usageBody(usage)
})

/** Word-sized deltas that concatenate back to `text`. */
const wordDeltas = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? [""]

type Item =
  | { readonly kind: "message"; readonly text: string; readonly deltas: ReadonlyArray<string> }
  | { readonly kind: "function_call"; readonly name: string; readonly arguments: string; readonly callId: string }

const itemBody = (item: Item, id: string, status: "in_progress" | "completed") =>
  item.kind === "message"
    ? {
      id,
      type: "message",
      role: "assistant",
      status,
      content: status === "in_progress" ? [] : [{ type: "output_text", text: item.text, annotations: [] }]
    }
    : {
      id,
      type: "function_call",
      status,
      call_id: item.callId,
      name: item.name,
      arguments: status === "in_progress" ? "" : item.arguments
    }

/** The event sequence the Responses API streams for one output item. */
export const streamEvents = (
  request: WireServer.ReceivedRequest,
  item: Item,
  usage: Usage
): ReadonlyArray<WireServer.JsonEvent> => {
  const id = item.kind === "message" ? `msg_${request.index}` : `fc_${request.index}`
  const events: Array<WireServer.JsonEvent> = []
  const push = (type: string, fields: Record<string, unknown>) =>
    events.push({ type, sequence_number: events.length, ...fields })
  const at = { output_index: 0 }
  push("response.created", { response: responseBody(request, "in_progress", [], null) })
  push("response.in_progress", { response: responseBody(request, "in_progress", [], null) })
  push("response.output_item.added", { ...at, item: itemBody(item, id, "in_progress") })
  if (item.kind === "message") {
    const part = { item_id: id, ...at, content_index: 0 }
    push("response.content_part.added", { ...part, part: { type: "output_text", text: "", annotations: [] } })
    for (const delta of item.deltas) push("response.output_text.delta", { ...part, delta, logprobs: [] })
    push("response.output_text.done", { ...part, text: item.text, logprobs: [] })
    push("response.content_part.done", { ...part, part: { type: "output_text", text: item.text, annotations: [] } })
  } else {
    for (const delta of wordDeltas(item.arguments)) {
      push("response.function_call_arguments.delta", { item_id: id, ...at, delta })
    }
    push("response.function_call_arguments.done", { item_id: id, ...at, arguments: item.arguments })
  }
  push("response.output_item.done", { ...at, item: itemBody(item, id, "completed") })
  push("response.completed", { response: responseBody(request, "completed", [itemBody(item, id, "completed")], usage) })
  return events
}

const itemReply = (item: Item, usage: Usage | undefined): WireServer.Reply =>
  WireServer.reply((request) => {
    const id = item.kind === "message" ? `msg_${request.index}` : `fc_${request.index}`
    const used = usage ?? DEFAULT_USAGE
    return wantsStream(request)
      ? WireServer.sseOf(streamEvents(request, item, used))
      : WireServer.jsonBody(responseBody(request, "completed", [itemBody(item, id, "completed")], used))
  })

/**
 * An assistant message with `text`. Streamed as `deltas` (default: one per
 * word, whitespace kept) when the request asks for a stream.
 */
export const text = (
  text: string,
  options: { readonly deltas?: ReadonlyArray<string>; readonly usage?: Usage } = {}
): WireServer.Reply => {
  const deltas = options.deltas ?? wordDeltas(text)
  if (deltas.join("") !== text) {
    throw new Error(`FakeOpenAi.text: the deltas ${JSON.stringify(deltas)} do not make ${JSON.stringify(text)}`)
  }
  return itemReply({ kind: "message", text, deltas }, options.usage)
}

/** Structured output: the message text is `value` as JSON (what strict json_schema output looks like). */
export const json = (value: unknown, options: { readonly usage?: Usage } = {}): WireServer.Reply =>
  text(JSON.stringify(value), options)

/** A plan as a strict-mode model writes it: the wire form (`PlanWire.PlanWire`) of `input`. */
export const plan = (input: RoutingPlan.RoutingPlanInput, options: { readonly usage?: Usage } = {}): WireServer.Reply =>
  json(Schema.encodeSync(RoutingPlan.PlanFromWire)(Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)(input)), options)

/** A function call item: the model calls tool `name` with `args` (JSON-encoded unless a string). */
export const functionCall = (
  name: string,
  args: unknown,
  options: { readonly callId?: string; readonly usage?: Usage } = {}
): WireServer.Reply =>
  itemReply({
    kind: "function_call",
    name,
    arguments: typeof args === "string" ? args : JSON.stringify(args),
    callId: options.callId ?? "call_1"
  }, options.usage)

/** An error response with OpenAI's error body (`{ error: { message, type, code } }`). */
export const error = (
  code: number,
  message: string,
  options: { readonly type?: string; readonly headers?: Readonly<Record<string, string>> } = {}
): WireServer.Reply =>
  WireServer.status(code, {
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    body: {
      error: {
        message,
        type: options.type ??
          (code === 429 ? "rate_limit_exceeded" : code >= 500 ? "server_error" : "invalid_request_error"),
        param: null,
        code: null
      }
    }
  })

/** A 200 whose body is JSON but not a `Response` (a provider fault, not a bad plan). */
export const brokenBody: WireServer.Reply = WireServer.status(200, {
  body: { id: "resp_broken", object: "response", output: "not a list" }
})

const inputsOf = (request: WireServer.ReceivedRequest): ReadonlyArray<string> => {
  const input = field(request.body, "input")
  if (typeof input === "string") return [input]
  return Array.isArray(input) ? input.map((x) => (typeof x === "string" ? x : JSON.stringify(x))) : []
}

const embeddingsBody = (request: WireServer.ReceivedRequest, vectors: ReadonlyArray<ReadonlyArray<number>>) => ({
  object: "list",
  data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
  model: modelOf(request),
  usage: { prompt_tokens: 3 * vectors.length, total_tokens: 3 * vectors.length }
})

/** An embeddings response: `vectors` (default: the offline embedder's, 8 dimensions, one per input). */
export const embeddings = (vectors?: ReadonlyArray<ReadonlyArray<number>>): WireServer.Reply =>
  WireServer.reply((request) =>
    WireServer.jsonBody(
      embeddingsBody(
        request,
        vectors ?? inputsOf(request).map((input) => Embeddings.embedOffline(input, EMBEDDING_DIMENSIONS))
      )
    )
  )

/** Starts the server for the current Scope. */
export const make: Effect.Effect<FakeOpenAi, never, Scope.Scope> = Effect.map(
  WireServer.make({
    name: "FakeOpenAi",
    fallback: (request) =>
      request.method === "POST" && request.path === "/v1/embeddings"
        ? embeddings().render(request)
        : {
          _tag: "Body",
          status: 500,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            error: {
              message: `FakeOpenAi: no scripted reply for ${request.method} ${request.path}`,
              type: "server_error"
            }
          })
        }
  }),
  (server) => ({ ...server, apiUrl: `${server.url}/v1` })
)

/** The server as a service, for `it.layer` / `Layer.provide`. */
export class Server extends Context.Tag("test/FakeOpenAi/Server")<Server, FakeOpenAi>() {}

/** A server per Layer build. */
export const layer: Layer.Layer<Server> = Layer.scoped(Server, make)
