/**
 * A local server speaking Anthropic's Messages API wire format, for tests
 * that drive `@effect/ai-anthropic` (and so `effect-agent-pipeline/anthropic`)
 * over real HTTP on loopback. Built on {@link WireServer}: scripted per call,
 * records every request. It routes on the path only: the client sends
 * buffered calls to `/v1/messages?beta=true` and streams to `/v1/messages`.
 *
 * ```ts
 * const server = yield* FakeAnthropic.make             // scoped
 * yield* server.enqueue(
 *   FakeAnthropic.plan({ steps: [...] }),               // the forced tool call's input: the plan's wire form
 *   FakeAnthropic.text("Paris is sunny.", { deltas: ["Paris ", "is ", "sunny."] })
 * )
 * const model = Anthropic.layer({ model: "claude-test", apiUrl: server.url, apiKey: Redacted.make("sk-ant-test") })
 * ```
 *
 * A message reply ({@link text}, {@link toolUse}, {@link json},
 * {@link plan}) answers a plain request with a `Message` JSON body and a
 * request with `stream: true` with the real SSE sequence: `message_start`,
 * `content_block_start`, `ping`, one `content_block_delta` per delta
 * (`text_delta` or `input_json_delta`), `content_block_stop`,
 * `message_delta` (stop reason, output tokens), `message_stop`. Bodies and
 * events decode with `@effect/ai-anthropic`'s Schemas (tested): unlike the
 * OpenAI client, its stream fails on an event it cannot decode.
 *
 * Unscripted requests get a 500 with Anthropic's error body.
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { RoutingPlan } from "effect-agent-pipeline"
import * as WireServer from "./WireServer.js"

export { cut, delayed, hang, notJson, paced, status } from "./WireServer.js"
export type { ReceivedRequest, Reply } from "./WireServer.js"

/** Token counts a reply reports. */
export interface Usage {
  readonly input_tokens: number
  readonly output_tokens: number
}

/** The server, as a test sees it. */
export interface FakeAnthropic extends WireServer.WireServer {
  /** The `apiUrl` / `ANTHROPIC_BASE_URL` to give the client (no `/v1`). */
  readonly apiUrl: string
}

const DEFAULT_USAGE: Usage = { input_tokens: 42, output_tokens: 7 }

const { field, modelOf } = WireServer

/** The tool the request forces (`tool_choice: { type: "tool", name }`), if any. */
export const forcedTool = (request: WireServer.ReceivedRequest): string | undefined => {
  const choice = field(request.body, "tool_choice")
  const name = field(choice, "name")
  return field(choice, "type") === "tool" && typeof name === "string" ? name : undefined
}

type Block =
  | { readonly kind: "text"; readonly text: string; readonly deltas: ReadonlyArray<string> }
  | { readonly kind: "tool_use"; readonly name: string | undefined; readonly input: Readonly<Record<string, unknown>> }

const wordDeltas = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? [""]

const blockBody = (request: WireServer.ReceivedRequest, block: Block) =>
  block.kind === "text"
    ? { type: "text", text: block.text }
    : {
      type: "tool_use",
      id: `toolu_${request.index}`,
      name: block.name ?? forcedTool(request) ?? "unnamed_tool",
      input: block.input
    }

const stopReason = (block: Block) => (block.kind === "text" ? "end_turn" : "tool_use")

const messageBody = (
  request: WireServer.ReceivedRequest,
  content: ReadonlyArray<unknown>,
  stop_reason: string | null,
  usage: Usage
) => ({
  id: `msg_${request.index}`,
  type: "message",
  role: "assistant",
  model: modelOf(request),
  content,
  stop_reason,
  stop_sequence: null,
  usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens }
})

/** The event sequence the Messages API streams for one content block. */
export const streamEvents = (
  request: WireServer.ReceivedRequest,
  block: Block,
  usage: Usage
): ReadonlyArray<WireServer.JsonEvent> => {
  const body = blockBody(request, block)
  const start = block.kind === "text" ? { type: "text", text: "" } : { ...body, input: {} }
  const deltas = block.kind === "text"
    ? block.deltas.map((text) => ({ type: "text_delta", text }))
    : wordDeltas(JSON.stringify(block.input)).map((partial_json) => ({ type: "input_json_delta", partial_json }))
  return [
    { type: "message_start", message: messageBody(request, [], null, { ...usage, output_tokens: 1 }) },
    { type: "content_block_start", index: 0, content_block: start },
    { type: "ping" },
    ...deltas.map((delta) => ({ type: "content_block_delta", index: 0, delta })),
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: stopReason(block), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens }
    },
    { type: "message_stop" }
  ]
}

const blockReply = (block: Block, usage: Usage | undefined): WireServer.Reply =>
  WireServer.reply((request) => {
    const used = usage ?? DEFAULT_USAGE
    return field(request.body, "stream") === true
      ? WireServer.sseOf(streamEvents(request, block, used))
      : WireServer.jsonBody(messageBody(request, [blockBody(request, block)], stopReason(block), used))
  })

/** An assistant text block. Streamed as `deltas` (default: one per word) when the request asks for a stream. */
export const text = (
  text: string,
  options: { readonly deltas?: ReadonlyArray<string>; readonly usage?: Usage } = {}
): WireServer.Reply => {
  const deltas = options.deltas ?? wordDeltas(text)
  if (deltas.join("") !== text) {
    throw new Error(`FakeAnthropic.text: the deltas ${JSON.stringify(deltas)} do not make ${JSON.stringify(text)}`)
  }
  return blockReply({ kind: "text", text, deltas }, options.usage)
}

/** A tool_use block calling `name` (default: the tool the request forces) with `input`. */
export const toolUse = (
  input: Readonly<Record<string, unknown>>,
  options: { readonly name?: string; readonly usage?: Usage } = {}
): WireServer.Reply => blockReply({ kind: "tool_use", name: options.name, input }, options.usage)

/** Structured output: the forced tool's call with `value` as its input. */
export const json = (
  value: Readonly<Record<string, unknown>>,
  options: { readonly usage?: Usage } = {}
): WireServer.Reply => toolUse(value, options)

/** A plan as the forced `routing_plan` tool call: the wire form (`PlanWire.PlanWire`) of `input`. */
export const plan = (input: RoutingPlan.RoutingPlanInput, options: { readonly usage?: Usage } = {}): WireServer.Reply =>
  json(Schema.encodeSync(RoutingPlan.PlanFromWire)(Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)(input)), options)

/** An error response with Anthropic's error body (`{ type: "error", error: { type, message } }`). */
export const error = (
  code: number,
  message: string,
  options: { readonly type?: string; readonly headers?: Readonly<Record<string, string>> } = {}
): WireServer.Reply =>
  WireServer.status(code, {
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    body: {
      type: "error",
      error: {
        type: options.type ??
          (code === 429
            ? "rate_limit_error"
            : code === 529
            ? "overloaded_error"
            : code >= 500
            ? "api_error"
            : "invalid_request_error"),
        message
      }
    }
  })

/** A 200 whose body is JSON but not a `Message` (a provider fault, not a bad plan). */
export const brokenBody: WireServer.Reply = WireServer.status(200, {
  body: { id: "msg_broken", type: "message", content: 7 }
})

/** Starts the server for the current Scope. */
export const make: Effect.Effect<FakeAnthropic, never, Scope.Scope> = Effect.map(
  WireServer.make({
    name: "FakeAnthropic",
    fallback: (request) => ({
      _tag: "Body",
      status: 500,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        type: "error",
        error: { type: "api_error", message: `FakeAnthropic: no scripted reply for ${request.method} ${request.path}` }
      })
    })
  }),
  (server) => ({ ...server, apiUrl: server.url })
)

/** The server as a service, for `it.layer` / `Layer.provide`. */
export class Server extends Context.Tag("test/FakeAnthropic/Server")<Server, FakeAnthropic>() {}

/** A server per Layer build. */
export const layer: Layer.Layer<Server> = Layer.scoped(Server, make)
