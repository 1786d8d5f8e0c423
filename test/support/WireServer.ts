/**
 * A scripted HTTP server on loopback, the machinery under the provider fakes
 * (`FakeOpenAi`, `FakeAnthropic`): `@effect/platform-node`'s `NodeHttpServer`
 * on `127.0.0.1`, port 0, owned by the caller's Scope.
 *
 * - **Scripted per call.** Replies are queued with `enqueue` and answer
 *   requests in arrival order, whatever their path. A reply is rendered from
 *   the request it answers (so a provider fake streams when the client asked
 *   for a stream, echoes the model name, …). An unscripted request gets the
 *   fake's fallback (a 500 naming the request, unless the fake says otherwise).
 * - **Every way a server misbehaves.** A reply is a body with any status and
 *   headers ({@link status}, {@link notJson}), an SSE stream (optionally cut:
 *   the connection is destroyed after N events, or in the middle of the next
 *   one, see {@link cut}), or a hang (never answers, {@link hang}); any of
 *   them after a delay ({@link delayed}). Delays are real time: to the client
 *   this server is another process, so `TestClock` does not move it.
 * - **Recorded.** Every request (method, path, query, headers, parsed body)
 *   is kept for assertions, in arrival order (`requests`).
 *
 * Closing the Scope closes every connection (a hung request included) and
 * then the server.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Duration, Effect, Option, Ref, type Scope } from "effect"
import * as Http from "node:http"

/** One request the server received. */
export interface ReceivedRequest {
  /** Arrival order, from 0. */
  readonly index: number
  readonly method: string
  /** The URL path, e.g. `/v1/responses`. */
  readonly path: string
  /** The query string with its `?`, or `""`. */
  readonly query: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>
  /** The body parsed as JSON, else its text (`""` when empty). */
  readonly body: unknown
}

/** A server-sent event: its `event:` name (optional) and `data:` text. */
export interface SseEvent {
  readonly event?: string | undefined
  readonly data: string
}

/** Where a stream is cut: the connection is destroyed after `afterEvents` events (and `partialBytes` bytes of the next). */
export interface Cut {
  readonly afterEvents: number
  readonly partialBytes: number
}

/** What goes on the wire for one request. */
export type Wire =
  | {
    readonly _tag: "Body"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
  }
  | {
    readonly _tag: "Sse"
    readonly headers: Readonly<Record<string, string>>
    readonly events: ReadonlyArray<SseEvent>
    /** Real-time pause before each event (none by default). */
    readonly eventDelay: Duration.Duration | undefined
    readonly cut: Cut | undefined
  }
  | { readonly _tag: "Hang" }
  /** The connection is destroyed before any response byte: the client sees a reset. */
  | { readonly _tag: "Reset" }

/** One scripted reply: rendered from the request it answers, after an optional delay. */
export interface Reply {
  readonly delay: Duration.Duration | undefined
  readonly render: (request: ReceivedRequest) => Wire
}

/** A reply from a render function. */
export const reply = (render: (request: ReceivedRequest) => Wire): Reply => ({ delay: undefined, render })

/** The same reply, sent after `delay` (real time). */
export const delayed = (self: Reply, delay: Duration.DurationInput): Reply => ({
  ...self,
  delay: Duration.decode(delay)
})

/**
 * The same reply with its SSE stream cut: the connection is destroyed after
 * `afterEvents` events — with `midEvent: true`, after half of the next
 * event's bytes too (a token cut in two). A reply that is not a stream is
 * sent as it is.
 */
export const cut = (self: Reply, options: { readonly afterEvents: number; readonly midEvent?: boolean }): Reply => ({
  ...self,
  render: (request) => {
    const wire = self.render(request)
    if (wire._tag !== "Sse") return wire
    const next = wire.events[options.afterEvents]
    const partialBytes = options.midEvent === true && next !== undefined
      ? Math.max(1, Math.floor(Buffer.byteLength(frame(next)) / 2))
      : 0
    return { ...wire, cut: { afterEvents: options.afterEvents, partialBytes } }
  }
})

/** The same reply with its SSE events paced `delay` apart (real time). */
export const paced = (self: Reply, delay: Duration.DurationInput): Reply => ({
  ...self,
  render: (request) => {
    const wire = self.render(request)
    return wire._tag === "Sse" ? { ...wire, eventDelay: Duration.decode(delay) } : wire
  }
})

/**
 * A response with any status, headers and body: a body that is not a string
 * is sent as JSON (e.g. `status(429, { headers: { "retry-after": "1" }, body: {...} })`).
 */
export const status = (
  code: number,
  options: { readonly headers?: Readonly<Record<string, string>>; readonly body?: unknown } = {}
): Reply =>
  reply(() => ({
    _tag: "Body",
    status: code,
    headers: { "content-type": "application/json", ...options.headers },
    body: options.body === undefined
      ? ""
      : typeof options.body === "string"
      ? options.body
      : JSON.stringify(options.body)
  }))

/** A 200 whose JSON body is not JSON (default: a truncated object). */
export const notJson = (text = "{\"id\":\"resp_1\",\"object\":\"resp"): Reply => status(200, { body: text })

/** A reply that never comes: the request stays open until the client gives up or the server closes. */
export const hang: Reply = reply(() => ({ _tag: "Hang" }))

/** No reply: the connection is reset (destroyed) as soon as the request arrived. */
export const reset: Reply = reply(() => ({ _tag: "Reset" }))

/**
 * A loopback URL that refuses connections: a port that was just bound and
 * released (nothing listens on it; the kernel does not hand it out again at
 * once).
 */
export const refusingUrl: Effect.Effect<string> = Effect.async<string>((resume) => {
  const probe = Http.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const address = probe.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    probe.close(() => resume(Effect.succeed(`http://127.0.0.1:${port}`)))
  })
})

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** `body[key]` when `body` is an object, else `undefined`. */
export const field = (body: unknown, key: string): unknown => (isRecord(body) ? body[key] : undefined)

/** The `model` a request body names (`unknown-model` when none). */
export const modelOf = (request: ReceivedRequest): string => {
  const model = field(request.body, "model")
  return typeof model === "string" ? model : "unknown-model"
}

/** The SSE frame of one event. */
export const frame = (event: SseEvent): string =>
  `${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${event.data}\n\n`

/** A JSON body with status 200. */
export const jsonBody = (body: unknown, headers: Readonly<Record<string, string>> = {}): Wire => ({
  _tag: "Body",
  status: 200,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

/** A JSON event of a provider's stream: its `type` names it. */
export type JsonEvent = { readonly type: string } & Readonly<Record<string, unknown>>

/** An SSE stream of JSON events, each named by its `type`. */
export const sseOf = (events: ReadonlyArray<JsonEvent>): Wire => ({
  _tag: "Sse",
  headers: {},
  events: events.map((event) => ({ event: event.type, data: JSON.stringify(event) })),
  eventDelay: undefined,
  cut: undefined
})

/** The server, as a test sees it. */
export interface WireServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** Queues replies; each answers one request, in arrival order. */
  readonly enqueue: (...replies: ReadonlyArray<Reply>) => Effect.Effect<void>
  /** Every request received so far, in arrival order. */
  readonly requests: Effect.Effect<ReadonlyArray<ReceivedRequest>>
  /** How many queued replies have not been used. */
  readonly pending: Effect.Effect<number>
}

/** A real-time sleep: the server's delays must not depend on the test's clock. */
const sleepReal = (duration: Duration.Duration): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Duration.toMillis(duration))
    return Effect.sync(() => clearTimeout(timer))
  })

/** Writes a chunk and waits until Node handed it to the socket (or the socket failed). */
const write = (response: Http.ServerResponse, chunk: string | Uint8Array): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    response.write(chunk, () => resume(Effect.void))
  })

const parseBody = (text: string): unknown => {
  if (text === "") return ""
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Streams SSE frames on the raw Node response, so a cut can destroy the socket mid-stream. */
const streamSse = (response: Http.ServerResponse, wire: Extract<Wire, { _tag: "Sse" }>) =>
  Effect.gen(function*() {
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      ...wire.headers
    })
    response.flushHeaders()
    for (let i = 0; i < wire.events.length; i++) {
      if (wire.cut !== undefined && i === wire.cut.afterEvents) {
        if (wire.cut.partialBytes > 0) {
          yield* write(response, Buffer.from(frame(wire.events[i]!)).subarray(0, wire.cut.partialBytes))
        }
        break
      }
      if (wire.eventDelay !== undefined) yield* sleepReal(wire.eventDelay)
      yield* write(response, frame(wire.events[i]!))
    }
    if (wire.cut !== undefined) {
      // The connection dies without ending the chunked body: the client sees a reset mid-stream.
      response.destroy()
      return yield* Effect.never
    }
    yield* Effect.async<void>((resume) => {
      response.end(() => resume(Effect.void))
    })
    return HttpServerResponse.empty()
  })

/**
 * Starts a server on `127.0.0.1`, port 0, for the current Scope.
 *
 * @param name   names the server in its fallback answers
 * @param fallback answers a request when no reply is queued
 */
export const make = (options: {
  readonly name: string
  readonly fallback?: ((request: ReceivedRequest) => Wire) | undefined
}): Effect.Effect<WireServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Ref.make<ReadonlyArray<Reply>>([])
    const received = yield* Ref.make<ReadonlyArray<ReceivedRequest>>([])
    const fallback = options.fallback ??
      ((request: ReceivedRequest): Wire => ({
        _tag: "Body",
        status: 500,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          error: {
            message: `${options.name}: no scripted reply for ${request.method} ${request.path}`,
            type: "server_error"
          }
        })
      }))

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const text = yield* Effect.orElseSucceed(request.text, () => "")
      const url = new URL(request.url, "http://fake.invalid")
      const headers: Record<string, string> = {}
      for (const [key, value] of Object.entries(request.headers)) headers[key.toLowerCase()] = value
      const next = yield* Ref.modify(received, (all) => {
        const entry: ReceivedRequest = {
          index: all.length,
          method: request.method,
          path: url.pathname,
          query: url.search,
          headers,
          body: parseBody(text)
        }
        return [entry, [...all, entry]]
      })
      const scripted = yield* Ref.modify(queue, (replies) => [Option.fromNullable(replies[0]), replies.slice(1)])
      const wire = Option.match(scripted, { onNone: () => fallback(next), onSome: (r) => r.render(next) })
      if (Option.isSome(scripted) && scripted.value.delay !== undefined) yield* sleepReal(scripted.value.delay)
      switch (wire._tag) {
        case "Hang":
          return yield* Effect.never
        case "Reset":
          NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()
          return yield* Effect.never
        case "Body":
          return HttpServerResponse.text(wire.body, {
            status: wire.status,
            headers: wire.headers,
            contentType: wire.headers["content-type"] ?? "application/json"
          })
        case "Sse":
          return yield* streamSse(NodeHttpServerRequest.toServerResponse(request), wire)
      }
    })

    const nodeServer = Http.createServer()
    const server = yield* Effect.orDie(NodeHttpServer.make(() => nodeServer, { host: "127.0.0.1", port: 0 }))
    // Runs before the server's own close (finalizers run in reverse): a hung
    // request or a kept-alive connection would otherwise hold the close forever.
    yield* Effect.addFinalizer(() => Effect.sync(() => nodeServer.closeAllConnections()))
    yield* server.serve(app)
    const address = server.address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage(`${options.name}: not a TCP server`)
    return {
      url: `http://127.0.0.1:${address.port}`,
      enqueue: (...replies) => Ref.update(queue, (queued) => [...queued, ...replies]),
      requests: Ref.get(received),
      pending: Effect.map(Ref.get(queue), (queued) => queued.length)
    }
  })
