/**
 * A local server speaking the Chat Completions API (`POST
 * /v1/chat/completions`) the way a real server does, for tests that drive
 * `effect-agent-pipeline/openai-compat` over real HTTP on loopback. Built on
 * {@link WireServer} (scripted per call, records every request) and on the
 * wire fixtures of each server (`test/fixtures/wire/<flavor>/`, sources in
 * `test/fixtures/wire/SOURCES.md`): every body, chunk and error a reply
 * sends is the flavor's fixture, with only the content the test scripts
 * substituted (the text, a tool call's name and arguments, token counts,
 * an error's message) and the request's model echoed.
 *
 * ```ts
 * const server = yield* FakeChatCompletions.make("ollama")   // scoped
 * yield* server.enqueue(
 *   FakeChatCompletions.plan("ollama", { steps: [...] }),     // the plan as the message content
 *   FakeChatCompletions.text("ollama", "Paris is sunny.", { deltas: ["Paris ", "is ", "sunny."] })
 * )
 * const model = OpenAiCompat.layer({ model: "qwen2.5:7b", apiUrl: server.apiUrl })
 * ```
 *
 * A text or tool-call reply answers a plain request with the flavor's
 * buffered body, and a request with `stream: true` with the flavor's chunk
 * sequence: its first chunk (the role; Ollama, LM Studio and LiteLLM put
 * the first text in it), one chunk per delta, its finish chunk (vLLM puts
 * the last text in it), its usage chunk only when the request asked for it
 * (`stream_options.include_usage`) and `data: [DONE]`. A streamed tool call
 * is cut into as many argument pieces as the flavor's fixture has (Ollama:
 * the whole call in one chunk). vLLM answers a named `tool_choice` with its
 * own buffered shape (`finish_reason: "stop"`, `content: ""`).
 */
import { Effect, Schema, type Scope } from "effect"
import { RoutingPlan } from "effect-agent-pipeline"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as WireServer from "./WireServer.js"

export { cut, delayed, hang, notJson, paced, reset, status } from "./WireServer.js"
export type { ReceivedRequest, Reply } from "./WireServer.js"

/** The servers whose wire format is faked. */
export type Flavor = "vllm" | "ollama" | "llamacpp" | "lmstudio" | "litellm"

/** Every flavor. */
export const flavors: ReadonlyArray<Flavor> = ["vllm", "ollama", "llamacpp", "lmstudio", "litellm"]

/** The server, as a test sees it. */
export interface FakeChatCompletions extends WireServer.WireServer {
  readonly flavor: Flavor
  /** The `apiUrl` / `OPENAI_BASE_URL` to give the client: `{url}/v1`. */
  readonly apiUrl: string
}

/** Token counts a reply reports. */
export interface Usage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
}

type Json = any

const DONE = "[DONE]"
const fixtures = fileURLToPath(new URL("../fixtures/wire/", import.meta.url))

/** A fixture file of a server, parsed (a fresh copy each time: replies edit it). */
export const fixture = (server: string, file: string): Json =>
  JSON.parse(readFileSync(`${fixtures}${server}/${file}`, "utf8"))

/** The data of each line of an `*.sse.json` fixture: a parsed chunk, or `[DONE]`. */
const events = (server: string, file: string): Array<Json> =>
  (fixture(server, file) as ReadonlyArray<string>).map((line) => {
    const data = line.replace(/^data: ?/, "")
    return data === DONE ? DONE : JSON.parse(data)
  })

const { field, modelOf } = WireServer

const wantsStream = (request: WireServer.ReceivedRequest): boolean => field(request.body, "stream") === true

const wantsUsage = (request: WireServer.ReceivedRequest): boolean =>
  field(field(request.body, "stream_options"), "include_usage") === true

const namesAFunction = (request: WireServer.ReceivedRequest): boolean =>
  typeof field(request.body, "tool_choice") === "object"

/** Word-sized deltas that concatenate back to `text`. */
const wordDeltas = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? [""]

const echoModel = (body: Json, request: WireServer.ReceivedRequest): Json => {
  if (typeof body === "object" && body !== null && "model" in body) body.model = modelOf(request)
  return body
}

const withUsage = (body: Json, usage: Usage | undefined): Json => {
  if (usage !== undefined && body.usage) {
    body.usage.prompt_tokens = usage.prompt_tokens
    body.usage.completion_tokens = usage.completion_tokens
    body.usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
  }
  return body
}

const sse = (chunks: ReadonlyArray<Json>): WireServer.Wire => ({
  _tag: "Sse",
  headers: {},
  events: chunks.map((chunk) => ({ data: chunk === DONE ? DONE : JSON.stringify(chunk) })),
  eventDelay: undefined,
  cut: undefined
})

const deltaOf = (chunk: Json): Json => chunk?.choices?.[0]?.delta
const hasText = (chunk: Json): boolean => typeof deltaOf(chunk)?.content === "string" && deltaOf(chunk).content !== ""
const isUsage = (chunk: Json): boolean => chunk !== DONE && chunk.usage !== undefined
const isFinish = (chunk: Json): boolean =>
  chunk !== DONE && !isUsage(chunk) && typeof chunk.choices?.[0]?.finish_reason === "string"

/** What a streamed reply may leave out, as some servers do. */
export interface StreamOptions {
  /** Send the usage chunk when it is asked for (default true). */
  readonly usageChunk?: boolean
  /** End with `data: [DONE]` (default: as the flavor does); false: the body just ends. */
  readonly done?: boolean
}

/** The flavor's stream of `deltas`: its chunks, the text substituted. */
const textStream = (
  flavor: Flavor,
  request: WireServer.ReceivedRequest,
  deltas: ReadonlyArray<string>,
  usage: Usage | undefined,
  options: StreamOptions
): ReadonlyArray<Json> => {
  const all = events(flavor, "chat-stream-text.sse.json")
  const [head, ...rest] = all
  const finish = rest.find(isFinish)
  const usageChunk = rest.find(isUsage)
  const template = rest.filter((chunk) => chunk !== DONE && chunk !== finish && !isUsage(chunk) && hasText(chunk))
    .at(-1)
  const queue = [...deltas]
  const out: Array<Json> = []
  if (hasText(head)) deltaOf(head).content = queue.shift() ?? ""
  out.push(head)
  const last = hasText(finish) ? queue.pop() ?? "" : undefined
  for (const delta of queue) {
    const chunk = structuredClone(template)
    deltaOf(chunk).content = delta
    out.push(chunk)
  }
  if (last !== undefined) deltaOf(finish).content = last
  out.push(finish)
  if (usageChunk !== undefined && wantsUsage(request) && options.usageChunk !== false) {
    out.push(withUsage(usageChunk, usage))
  }
  if (all.includes(DONE) && options.done !== false) out.push(DONE)
  return out.map((chunk) => (chunk === DONE ? chunk : echoModel(chunk, request)))
}

/**
 * An assistant message with `text`; streamed as `deltas` (default: one per
 * word, whitespace kept).
 */
export const text = (
  flavor: Flavor,
  content: string,
  options: StreamOptions & { readonly deltas?: ReadonlyArray<string>; readonly usage?: Usage } = {}
): WireServer.Reply => {
  const deltas = options.deltas ?? wordDeltas(content)
  if (deltas.join("") !== content) {
    throw new Error(`FakeChatCompletions.text: ${JSON.stringify(deltas)} do not make ${JSON.stringify(content)}`)
  }
  return WireServer.reply((request) => {
    if (wantsStream(request)) return sse(textStream(flavor, request, deltas, options.usage, options))
    const body = fixture(flavor, "chat-buffered-text.json")
    body.choices[0].message.content = content
    return WireServer.jsonBody(withUsage(echoModel(body, request), options.usage))
  })
}

/** Structured output as the message content: `value` as JSON. */
export const json = (flavor: Flavor, value: unknown, options: { readonly usage?: Usage } = {}): WireServer.Reply =>
  text(flavor, JSON.stringify(value), options)

/** A plan's wire form (`PlanWire`), as a strict-mode model writes it. */
export const wirePlan = (input: RoutingPlan.RoutingPlanInput): unknown =>
  Schema.encodeSync(RoutingPlan.PlanFromWire)(Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)(input))

/** A plan as the message content (json_schema or plain-JSON structured output). */
export const plan = (flavor: Flavor, input: RoutingPlan.RoutingPlanInput, options: { readonly usage?: Usage } = {}) =>
  json(flavor, wirePlan(input), options)

/** `text` cut into `count` pieces (the last ones may be empty when it is short). */
const pieces = (text: string, count: number): ReadonlyArray<string> => {
  const size = Math.ceil(text.length / count)
  return Array.from({ length: count }, (_, i) => text.slice(i * size, (i + 1) * size))
}

const toolStream = (
  flavor: Flavor,
  request: WireServer.ReceivedRequest,
  name: string,
  args: string,
  usage: Usage | undefined
): ReadonlyArray<Json> => {
  const all = events(flavor, "chat-stream-tool-call.sse.json")
  const carriesArgs = (chunk: Json): boolean => {
    const piece = deltaOf(chunk)?.tool_calls?.[0]?.function?.arguments
    return typeof piece === "string" && piece !== ""
  }
  const argPieces = pieces(args, all.filter(carriesArgs).length)
  let next = 0
  const out: Array<Json> = []
  for (const chunk of all) {
    if (chunk === DONE) {
      out.push(DONE)
      continue
    }
    if (isUsage(chunk) && !wantsUsage(request)) continue
    const call = deltaOf(chunk)?.tool_calls?.[0]
    if (call?.function?.name !== undefined) call.function.name = name
    if (carriesArgs(chunk)) call.function.arguments = argPieces[next++]
    out.push(echoModel(isUsage(chunk) ? withUsage(chunk, usage) : chunk, request))
  }
  return out
}

/**
 * A call of the function `name` with `args` (JSON-encoded unless a string).
 * Buffered: the flavor's tool-call body (vLLM, asked with a named
 * `tool_choice`: its `finish_reason: "stop"` body).
 */
export const toolCall = (
  flavor: Flavor,
  name: string,
  args: unknown,
  options: { readonly usage?: Usage } = {}
): WireServer.Reply => {
  const encoded = typeof args === "string" ? args : JSON.stringify(args)
  return WireServer.reply((request) => {
    if (wantsStream(request)) return sse(toolStream(flavor, request, name, encoded, options.usage))
    const named = flavor === "vllm" && namesAFunction(request)
    const body = fixture(flavor, named ? "chat-buffered-named-tool-choice.json" : "chat-buffered-tool-call.json")
    const call = body.choices[0].message.tool_calls[0]
    call.function.name = name
    call.function.arguments = encoded
    return WireServer.jsonBody(withUsage(echoModel(body, request), options.usage))
  })
}

/** A plan as the arguments of a forced call of `routing_plan` (structured output by tool call). */
export const planCall = (
  flavor: Flavor,
  input: RoutingPlan.RoutingPlanInput,
  options: { readonly usage?: Usage } = {}
) => toolCall(flavor, "routing_plan", wirePlan(input), options)

/**
 * An error response from the flavor's fixture `file` (default
 * `error-400.json`): its status and body, `message` substituted when given.
 */
export const error = (
  flavor: Flavor,
  options: {
    readonly file?: string
    readonly status?: number
    readonly message?: string
    readonly headers?: Readonly<Record<string, string>>
  } = {}
): WireServer.Reply => {
  const { body, status } = fixture(flavor, options.file ?? "error-400.json")
  if (options.message !== undefined) {
    if (typeof body.error === "object" && body.error !== null) body.error.message = options.message
    else body.message = options.message
  }
  return WireServer.status(options.status ?? status, {
    body,
    ...(options.headers === undefined ? {} : { headers: options.headers })
  })
}

/** The flavor's stream that fails mid-way with `data: {"error": …}` (vLLM, llama.cpp, LiteLLM). */
export const streamError = (flavor: Flavor): WireServer.Reply =>
  WireServer.reply((request) =>
    sse(
      events(flavor, "chat-stream-error-midstream.sse.json").map((chunk) =>
        chunk === DONE || "error" in chunk ? chunk : echoModel(chunk, request)
      )
    )
  )

/** Starts a server of `flavor` for the current Scope. */
export const make = (flavor: Flavor): Effect.Effect<FakeChatCompletions, never, Scope.Scope> =>
  Effect.map(
    WireServer.make({ name: `FakeChatCompletions(${flavor})` }),
    (server) => ({ ...server, flavor, apiUrl: `${server.url}/v1` })
  )
