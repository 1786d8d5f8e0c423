/**
 * The OpenAI-compatible servers that speak `/v1/responses` their own way —
 * vLLM, Ollama (current and 0.13.3–0.14.1), llama.cpp, LM Studio, LiteLLM's
 * bridge (current and before PR #26327), mock-llm — replayed from the wire
 * fixtures in `test/fixtures/wire/<server>/responses-*.json` (citations in
 * test/fixtures/wire/SOURCES.md), for tests that drive
 * `effect-agent-pipeline/openai` over real HTTP on loopback. Built on
 * {@link WireServer}: scripted per call, records every request.
 *
 * ```ts
 * const server = yield* FakeResponsesServers.make
 * yield* server.enqueue(
 *   FakeResponsesServers.plan("llamacpp", { steps: [...] }),  // the server's body, its text the plan
 *   FakeResponsesServers.text("llamacpp", "Paris: sunny.")    // its SSE stream when the request streams
 * )
 * ```
 *
 * - {@link text} / {@link json} / {@link plan}: the server's text body with
 *   the test's text in place of the fixture's (every key the server sends
 *   kept, every key it omits still omitted); a request with `stream: true`
 *   gets the server's SSE fixture (when it has one) with the test's deltas
 *   in place of the fixture's, and the full text wherever the fixture
 *   repeats it.
 * - {@link verbatim}: a fixture file exactly as it is on disk.
 */
import { Effect, Schema, type Scope } from "effect"
import { RoutingPlan } from "effect-agent-pipeline"
import { readFileSync } from "node:fs"
import * as WireServer from "./WireServer.js"

export type { ReceivedRequest, Reply } from "./WireServer.js"

/** A server as the fixtures have it. */
export type Server =
  | "vllm"
  | "ollama"
  | "ollama-0.13"
  | "llamacpp"
  | "lmstudio"
  | "litellm"
  | "litellm-pre-26327"
  | "mock-llm"

interface Profile {
  readonly dir: string
  /** The buffered text body. */
  readonly text: string
  /** The buffered function-call body, when the fixtures have one. */
  readonly toolCall?: string
  /** The SSE text stream (an array of raw lines), when the fixtures have one. */
  readonly stream?: string
}

export const PROFILES: Readonly<Record<Server, Profile>> = {
  vllm: { dir: "vllm", text: "responses-buffered-text.json", toolCall: "responses-buffered-tool-call.json" },
  ollama: {
    dir: "ollama",
    text: "responses-buffered-text.json",
    toolCall: "responses-buffered-tool-call.json",
    stream: "responses-stream-text.sse.json"
  },
  "ollama-0.13": {
    dir: "ollama-0.13",
    text: "responses-buffered-text.json",
    toolCall: "responses-buffered-tool-call.json",
    stream: "responses-stream-text.sse.json"
  },
  llamacpp: {
    dir: "llamacpp",
    text: "responses-buffered-text.json",
    toolCall: "responses-buffered-tool-call.json",
    stream: "responses-stream-text.sse.json"
  },
  lmstudio: { dir: "lmstudio", text: "responses-buffered-text.json" },
  litellm: {
    dir: "litellm",
    text: "responses-bridge-buffered-text.json",
    toolCall: "responses-bridge-buffered-tool-call.json"
  },
  "litellm-pre-26327": { dir: "litellm", text: "responses-bridge-buffered-text-pre-26327.json" },
  "mock-llm": { dir: "mock-llm", text: "responses-buffered-text.json" }
}

export const SERVERS = Object.keys(PROFILES) as ReadonlyArray<Server>

const fixtures = new URL("../fixtures/wire/", import.meta.url)

/** A fixture file's text, exactly as on disk. */
export const fixture = (dir: string, file: string): string => readFileSync(new URL(`${dir}/${file}`, fixtures), "utf8")

type Json = Record<string, unknown>
const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const records = (u: unknown): ReadonlyArray<Json> => (Array.isArray(u) ? u.filter(isRecord) : [])

/** Every `output_text` part of these output items gets `text`. */
const setText = (output: unknown, text: string): void => {
  for (const item of records(output)) {
    if (item["type"] !== "message") continue
    for (const part of records(item["content"])) if (part["type"] === "output_text") part["text"] = text
  }
}

/** The server's buffered text body (as its serializer lays it out), its text `text`. */
export const textBody = (server: Server, text: string): string => {
  const profile = PROFILES[server]
  const body = JSON.parse(fixture(profile.dir, profile.text)) as Json
  setText(body["output"], text)
  return JSON.stringify(body, null, 2)
}

/** An SSE fixture (`*.sse.json`, raw lines) as events (`event:` name, `data:` text), as on the wire. */
export const sseFixture = (dir: string, file: string): ReadonlyArray<WireServer.SseEvent> => {
  const events: Array<WireServer.SseEvent> = []
  let name: string | undefined
  for (const line of JSON.parse(fixture(dir, file)) as ReadonlyArray<string>) {
    if (line.startsWith("event: ")) name = line.slice("event: ".length)
    else if (line.startsWith("data: ")) {
      events.push({ event: name, data: line.slice("data: ".length) })
      name = undefined
    }
  }
  return events
}

/** The server's SSE text stream, as on the wire. */
export const sseEvents = (server: Server): ReadonlyArray<WireServer.SseEvent> => {
  const file = PROFILES[server].stream
  if (file === undefined) throw new Error(`FakeResponsesServers: ${server} has no stream fixture`)
  return sseFixture(PROFILES[server].dir, file)
}

/**
 * The server's SSE stream with `deltas` as its text deltas (the first
 * delta event of the fixture is the template of each) and their
 * concatenation wherever the fixture repeats the full text. Sequence
 * numbers are renumbered when the fixture has them.
 */
export const streamOf = (server: Server, deltas: ReadonlyArray<string>): ReadonlyArray<WireServer.SseEvent> => {
  const full = deltas.join("")
  const out: Array<{ readonly event: string | undefined; readonly data: Json | string }> = []
  let numbered = false
  for (const { data, event } of sseEvents(server)) {
    if (!data.startsWith("{")) {
      out.push({ event, data })
      continue
    }
    const json = JSON.parse(data) as Json
    if ("sequence_number" in json) numbered = true
    switch (json["type"]) {
      case "response.output_text.delta": {
        if (out.some((e) => isRecord(e.data) && e.data["type"] === json["type"])) continue
        for (const delta of deltas) out.push({ event, data: { ...json, delta } })
        continue
      }
      case "response.output_text.done":
        json["text"] = full
        break
      case "response.content_part.done":
        if (isRecord(json["part"])) json["part"]["text"] = full
        break
      case "response.output_item.done":
        setText([json["item"]], full)
        break
      case "response.completed":
        if (isRecord(json["response"])) setText(json["response"]["output"], full)
        break
    }
    out.push({ event, data: json })
  }
  let sequence = 0
  return out.map(({ data, event }) => {
    if (typeof data === "string") return { event, data }
    return { event, data: JSON.stringify(numbered ? { ...data, sequence_number: sequence++ } : data) }
  })
}

const wantsStream = (request: WireServer.ReceivedRequest): boolean => WireServer.field(request.body, "stream") === true

/** A body as the server sends it (status 200, its JSON content type). */
const body = (server: Server, text: string): WireServer.Wire => ({
  _tag: "Body",
  status: 200,
  headers: { "content-type": server.startsWith("ollama") ? "application/json; charset=utf-8" : "application/json" },
  body: text
})

/** Word-sized deltas that concatenate back to `text`. */
const wordDeltas = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? [""]

/**
 * An assistant message with `text` as `server` sends it: its buffered body,
 * or — asked for a stream, and the server has a stream fixture — its SSE
 * stream with `deltas` (default: one per word).
 */
export const text = (
  server: Server,
  text: string,
  options: { readonly deltas?: ReadonlyArray<string> } = {}
): WireServer.Reply => {
  const deltas = options.deltas ?? wordDeltas(text)
  if (deltas.join("") !== text) throw new Error(`FakeResponsesServers.text: the deltas do not make ${text}`)
  return WireServer.reply((request) =>
    wantsStream(request) && PROFILES[server].stream !== undefined
      ? { _tag: "Sse", headers: {}, events: streamOf(server, deltas), eventDelay: undefined, cut: undefined }
      : body(server, textBody(server, text))
  )
}

/** Structured output as `server` sends it: the message text is `value` as JSON. */
export const json = (server: Server, value: unknown): WireServer.Reply => text(server, JSON.stringify(value))

/** A plan as `server` sends it: the wire form of `input` as its message text. */
export const plan = (server: Server, input: RoutingPlan.RoutingPlanInput): WireServer.Reply =>
  json(server, Schema.encodeSync(RoutingPlan.PlanFromWire)(Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)(input)))

/** A fixture file of `server`'s, sent exactly as it is on disk: a body, or (`.sse.json`) its SSE lines. */
export const verbatim = (server: Server, file: string): WireServer.Reply =>
  WireServer.reply(() =>
    file.endsWith(".sse.json")
      ? {
        _tag: "Sse",
        headers: {},
        events: sseFixture(PROFILES[server].dir, file),
        eventDelay: undefined,
        cut: undefined
      }
      : body(server, fixture(PROFILES[server].dir, file))
  )

/** The server, as a test sees it. */
export interface FakeResponsesServer extends WireServer.WireServer {
  /** The `apiUrl` to give the client: `{url}/v1`. */
  readonly apiUrl: string
}

/** Starts a server for the current Scope (unscripted requests get a 500 naming them). */
export const make: Effect.Effect<FakeResponsesServer, never, Scope.Scope> = Effect.map(
  WireServer.make({ name: "FakeResponsesServers" }),
  (server) => ({ ...server, apiUrl: `${server.url}/v1` })
)
