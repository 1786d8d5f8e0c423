/**
 * Lenient Responses decoding (issue 19), on the wire: {@link lenientResponses}
 * is an `HttpClient` transform that hands the OpenAI client its answers to
 * `POST …/responses` (status 2xx) with the keys real servers leave out
 * filled in (what is filled, and why it means nothing: responsesShape.ts).
 * Only `effect-agent-pipeline/openai` installs it; the Anthropic provider
 * and every other request (`/embeddings`, an error status) never pass
 * through it beyond a status and URL check.
 *
 * - A buffered body is filled when the client reads it (`json` / `text`):
 *   read as the client reads it (whole), parsed only up to
 *   `normalizedBodyBytes`, re-serialized only up to `normalizedDepth`
 *   levels, handed on byte for byte when it is complete or is not a
 *   Response.
 * - A `text/event-stream` body is rewritten event by event as bytes
 *   arrive. {@link SseSplitter} cuts the text at blank lines whatever the
 *   chunking (a line ends in `\n`, `\r\n` or `\r`; a `\r` ending a chunk
 *   waits for the next, it may be half of a `\r\n`); what it hands back,
 *   concatenated, is what it was given. An event is held up to
 *   `normalizedBodyBytes` (UTF-16 units); a longer one streams through as
 *   it came, and the next is rewritten again. Only `data:` payloads are
 *   parsed; an event left alone keeps its exact text (its bytes, when they
 *   are UTF-8), a rewritten one gets one `data:` line in place of its first
 *   (other lines kept).
 */
import { HttpClient, HttpClientError, HttpClientResponse, HttpIncomingMessage, UrlParams } from "@effect/platform"
import { Effect, Inspectable, Stream } from "effect"
import { type Fallbacks, normalizeBody, normalizedBodyBytes, StreamEvents } from "./responsesShape.js"

/** A piece of the stream: a whole event (with its closing blank line), or text passed on as it came. */
export type Segment =
  | { readonly _tag: "Event"; readonly text: string }
  | { readonly _tag: "Raw"; readonly text: string }

const LF = 0x0a
const CR = 0x0d

/**
 * Cuts SSE text into events (see the module comment).
 *
 * @since 0.1.0
 * @category models
 */
export class SseSplitter {
  private buffer = ""
  /** Where scanning resumes in `buffer`. */
  private scan = 0
  /** Whether `buffer[scan]` starts a line. */
  private lineStart = true
  /** Passing an over-long event on as it came, up to its end. */
  private passing = false

  constructor(readonly maxEventChars: number) {}

  /** The events (and pass-through text) that `text` completes. */
  push(text: string): Array<Segment> {
    this.buffer += text
    return this.cut(false)
  }

  /** The stream ended: the events left, then whatever did not end in a blank line, as it came. */
  end(): Array<Segment> {
    const out = this.cut(true)
    if (this.buffer !== "") out.push({ _tag: "Raw", text: this.buffer })
    this.buffer = ""
    this.scan = 0
    this.lineStart = true
    this.passing = false
    return out
  }

  private cut(ended: boolean): Array<Segment> {
    const out: Array<Segment> = []
    const text = this.buffer
    const length = text.length
    let start = 0
    let i = this.scan
    let lineStart = this.lineStart
    // The next `\n` and `\r` at or after `i` (-1: none), found with `indexOf`, not char by char.
    let lf = text.indexOf("\n", i)
    let cr = text.indexOf("\r", i)
    while (i < length) {
      if (lf >= 0 && lf < i) lf = text.indexOf("\n", i)
      if (cr >= 0 && cr < i) cr = text.indexOf("\r", i)
      const next = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr)
      if (next !== i) {
        lineStart = false
        i = next < 0 ? length : next
        continue
      }
      const c = text.charCodeAt(i)
      let end = i + 1
      if (c === CR) {
        if (end === length && !ended) break // half of a `\r\n`, maybe
        if (end < length && text.charCodeAt(end) === LF) end++
      }
      if (lineStart) {
        out.push({ _tag: this.passing ? "Raw" : "Event", text: text.slice(start, end) })
        this.passing = false
        start = end
      }
      lineStart = true
      i = end
    }
    if (this.passing || i - start > this.maxEventChars) {
      // Over-long: what is scanned goes on as it came; a trailing `\r` waits.
      if (i > start) out.push({ _tag: "Raw", text: text.slice(start, i) })
      this.passing = true
      start = i
    }
    this.buffer = start === 0 ? text : text.slice(start)
    this.scan = i - start
    this.lineStart = lineStart
    return out
  }
}

const isData = (line: string): boolean => line.startsWith("data:") || line === "data"

const valueOf = (line: string): string => {
  const value = line.slice(5)
  return value.charCodeAt(0) === 0x20 ? value.slice(1) : value
}

/** The lines of one event, its closing blank line left out. */
const linesOf = (event: string): Array<string> => event.split(/\r\n|\r|\n/).filter((line) => line !== "")

/**
 * An event's `data:` payload, or `undefined` when it has no `data:` line.
 *
 * @since 0.1.0
 * @category utils
 */
export const dataOf = (event: string): string | undefined => {
  // The common shape — `data: {…}\n\n`, maybe after `event: …\n` — without splitting.
  if (!event.includes("\r")) {
    const at = event.startsWith("data:") ? 0 : event.indexOf("\ndata:") + 1
    const stop = at === 0 && !event.startsWith("data:") ? -1 : event.indexOf("\n", at)
    if (stop >= 0 && stop + 2 === event.length) return valueOf(event.slice(at, stop))
  }
  const data = linesOf(event).filter(isData)
  return data.length === 0 ? undefined : data.map(valueOf).join("\n")
}

/**
 * The event with `data` as its payload: one `data:` line where its first
 * was, its other lines kept, lines ending in `\n`.
 *
 * @since 0.1.0
 * @category utils
 */
export const withData = (event: string, data: string): string => {
  const out: Array<string> = []
  let placed = false
  for (const line of linesOf(event)) {
    if (!isData(line)) out.push(line)
    else if (!placed) {
      placed = true
      out.push(`data: ${data}`)
    }
  }
  return `${out.join("\n")}\n\n`
}

/** Bytes in, bytes out: one rewriting pass over a stream. */
export interface Rewriter {
  /** The rewritten text a chunk completes (empty when it completes no event). */
  readonly push: (chunk: Uint8Array) => Uint8Array
  /** The rest, when the stream ends. */
  readonly end: () => Uint8Array
}

/**
 * A pass over one SSE stream: each event's payload goes through `rewrite`
 * (`undefined`: leave the event as it came). Text is decoded as UTF-8
 * across chunk boundaries (a byte-order mark is kept).
 *
 * @since 0.1.0
 * @category constructors
 */
export const rewriter = (
  rewrite: (data: string) => string | undefined,
  maxEventChars: number
): Rewriter => {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true })
  const encoder = new TextEncoder()
  const splitter = new SseSplitter(maxEventChars)
  const render = (segments: ReadonlyArray<Segment>): Uint8Array => {
    let text = ""
    for (const segment of segments) {
      if (segment._tag === "Raw") {
        text += segment.text
        continue
      }
      const data = dataOf(segment.text)
      const next = data === undefined ? undefined : rewrite(data)
      text += next === undefined ? segment.text : withData(segment.text, next)
    }
    return encoder.encode(text)
  }
  return {
    push: (chunk) => render(splitter.push(decoder.decode(chunk, { stream: true }))),
    end: () => {
      const rest = splitter.push(decoder.decode())
      return render([...rest, ...splitter.end()])
    }
  }
}

/** `created_at` from the HTTP `Date` header (else the clock); `model` from the request's JSON body. */
const fallbacksOf = (response: HttpClientResponse.HttpClientResponse): Fallbacks => {
  let createdAt: number | undefined
  let model: { readonly value: string | undefined } | undefined
  return {
    createdAt: () => {
      if (createdAt !== undefined) return createdAt
      const date = Date.parse(response.headers["date"] ?? "")
      return createdAt = Math.floor((Number.isNaN(date) ? Date.now() : date) / 1000)
    },
    model: () => {
      if (model !== undefined) return model.value
      const body = response.request.body
      let value: unknown
      try {
        if (body._tag === "Uint8Array" && body.body.length <= normalizedBodyBytes) {
          value = (JSON.parse(new TextDecoder().decode(body.body)) as Record<string, unknown> | null)?.["model"]
        }
      } catch {
        // Not JSON: no model to name.
      }
      model = { value: typeof value === "string" ? value : undefined }
      return model.value
    }
  }
}

const encoder = new TextEncoder()

/** The response with another body; everything else is the original's. */
class Rebodied extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId
  private cachedText: Effect.Effect<string, HttpClientError.ResponseError> | undefined

  constructor(
    readonly source: HttpClientResponse.HttpClientResponse,
    private readonly body:
      | { readonly _tag: "Text"; readonly text: Effect.Effect<string, HttpClientError.ResponseError> }
      | { readonly _tag: "Stream"; readonly stream: Stream.Stream<Uint8Array, HttpClientError.ResponseError> }
  ) {
    super()
  }
  get request() {
    return this.source.request
  }
  get status() {
    return this.source.status
  }
  get headers() {
    return this.source.headers
  }
  get cookies() {
    return this.source.cookies
  }
  get remoteAddress() {
    return this.source.remoteAddress
  }
  get formData() {
    return this.source.formData
  }
  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return this.cachedText ??= Effect.runSync(Effect.cached(
      this.body._tag === "Text" ? this.body.text : Stream.mkString(Stream.decodeText(this.body.stream))
    ))
  }
  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return this.body._tag === "Stream"
      ? this.body.stream
      : Stream.map(Stream.fromEffect(this.text), (text) => encoder.encode(text))
  }
  private decode<A>(f: (text: string) => A): Effect.Effect<A, HttpClientError.ResponseError> {
    return Effect.tryMap(this.text, {
      try: f,
      catch: (cause) =>
        new HttpClientError.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
    })
  }
  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return this.decode((text): unknown => (text === "" ? null : JSON.parse(text)))
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return this.decode((text) => encoder.encode(text).buffer as ArrayBuffer)
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return this.decode((text) => UrlParams.fromInput(new URLSearchParams(text)))
  }
  toJSON(): unknown {
    return this.source.toJSON()
  }
}

/** A 2xx answer to `POST …/responses`. */
const isResponsesAnswer = (response: HttpClientResponse.HttpClientResponse): boolean => {
  if (response.status < 200 || response.status > 299 || response.request.method !== "POST") return false
  const url = response.request.url
  const end = url.search(/[?#]/)
  return (end < 0 ? url : url.slice(0, end)).endsWith("/responses")
}

const lenient = (response: HttpClientResponse.HttpClientResponse): HttpClientResponse.HttpClientResponse => {
  const fallbacks = fallbacksOf(response)
  if ((response.headers["content-type"] ?? "").toLowerCase().startsWith("text/event-stream")) {
    return new Rebodied(response, {
      _tag: "Stream",
      stream: Stream.suspend(() => {
        const pass = rewriter(new StreamEvents(fallbacks).rewrite, normalizedBodyBytes)
        return response.stream.pipe(
          Stream.map(pass.push),
          Stream.concat(Stream.sync(pass.end)),
          Stream.filter((bytes) => bytes.length > 0)
        )
      })
    })
  }
  return new Rebodied(response, {
    _tag: "Text",
    text: Effect.map(response.text, (text) => normalizeBody(text, fallbacks))
  })
}

/**
 * The client, its answers to `POST …/responses` (2xx, buffered or SSE)
 * filled in as the module comment says; every other response untouched.
 *
 * @since 0.1.0
 * @category utils
 */
export const lenientResponses = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transformResponse(
    client,
    (effect) => Effect.map(effect, (response) => (isResponsesAnswer(response) ? lenient(response) : response))
  )
