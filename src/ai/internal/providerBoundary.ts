/**
 * The provider boundary (issue 17): what the OpenAI and Anthropic clients
 * hand back crosses it once, translated, so nothing above — `@effect/ai`'s
 * `LanguageModel` and its spans, the pipeline, its records, logs and typed
 * errors — ever holds a request's headers or a hostile response's shape.
 *
 * - {@link boundErrorBodies} (an `HttpClient` transform): an error
 *   response's body is read up to {@link errorBodyBytes} bytes and handed
 *   on as it came when it is small and shallow, else as a text excerpt.
 *   The clients format an error body into their `AiError`
 *   (`JSON.stringify` of the parsed body): a JSON body nested 5,000 deep
 *   overflowed the stack there — a defect instead of a typed failure — and
 *   a 50 MB body became a 100 MB message. A success body is not touched
 *   (streams stay streams).
 * - {@link guardEffect} / {@link guardStream} (around each client call):
 *   every failure becomes its safe `AiError` (safeAiError.ts); a
 *   `RangeError` the client died with while reading a response (a stack
 *   overflow on nesting, a string over the engine's limit) becomes
 *   `MalformedOutput` — the response could not be read, which is the
 *   provider's fault, not a bug of the program.
 */
import { AiError } from "@effect/ai"
import { HttpClient, type HttpClientError, HttpClientResponse } from "@effect/platform"
import { Cause, Chunk, Effect, Option, Stream } from "effect"
import { nestsDeeperThan } from "./jsonDepth.js"
import { safeAiError } from "./safeAiError.js"
import type { Secrets } from "./secrets.js"

/**
 * How much of an error response's body is read.
 *
 * @since 0.1.0
 * @category constants
 */
export const errorBodyBytes = 2_048

/**
 * How deeply an error response's JSON body may nest and still be handed on as JSON.
 *
 * @since 0.1.0
 * @category constants
 */
export const errorBodyDepth = 64

const droppedHeaders = new Set(["content-type", "content-length", "content-encoding", "transfer-encoding"])

interface Prefix {
  readonly text: string
  readonly complete: boolean
}

/** The first `max` bytes of a body, as text (a cut character becomes U+FFFD). */
const prefixOf = (response: HttpClientResponse.HttpClientResponse, max: number) =>
  Effect.map(
    Stream.runFoldWhile(
      response.stream,
      { chunks: Chunk.empty<Uint8Array>(), size: 0 },
      (acc) => acc.size <= max,
      (acc, chunk) => ({ chunks: Chunk.append(acc.chunks, chunk), size: acc.size + chunk.length })
    ),
    ({ chunks, size }): Prefix => {
      const bytes = Buffer.concat(Chunk.toReadonlyArray(chunks)).subarray(0, max)
      return { text: new TextDecoder("utf-8", { fatal: false }).decode(bytes), complete: size <= max }
    }
  )

const rebuilt = (response: HttpClientResponse.HttpClientResponse, body: string, contentType: string) => {
  const headers = new Headers({ "content-type": contentType })
  for (const name in response.headers) {
    const value = response.headers[name]
    if (droppedHeaders.has(name) || value === undefined) continue
    try {
      headers.set(name, value)
    } catch {
      // A header value the Fetch API refuses is not worth failing for.
    }
  }
  return HttpClientResponse.fromWeb(response.request, new Response(body, { status: response.status, headers }))
}

/**
 * An error response as the client may read it: a small, shallow body as it
 * came (the clients decode their providers' error bodies); anything else as
 * a text excerpt.
 */
const bounded = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.ResponseError> =>
  Effect.map(
    prefixOf(response, errorBodyBytes),
    ({ complete, text }) =>
      complete && !nestsDeeperThan(text, errorBodyDepth)
        ? rebuilt(response, text, response.headers["content-type"] ?? "application/json")
        : rebuilt(
          response,
          `${text}… (${complete ? `nested over ${errorBodyDepth} levels` : `cut at ${errorBodyBytes} bytes`})`,
          "text/plain; charset=utf-8"
        )
  )

// The statuses a Fetch `Response` can be built with (an error status out of
// range — a hostile 999 — is handed on as it came).
const isErrorStatus = (status: number) => status >= 400 && status <= 599

/**
 * The client, its error responses (status 400 to 599) read as described
 * in the module comment.
 *
 * @since 0.1.0
 * @category utils
 */
export const boundErrorBodies = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transformResponse(
    client,
    (effect) =>
      Effect.flatMap(
        effect,
        (response) => (isErrorStatus(response.status) ? bounded(response) : Effect.succeed(response))
      )
  )

const unreadable = (module: string, method: string, defect: RangeError): AiError.AiError =>
  safeAiError(
    new AiError.MalformedOutput({
      module,
      method,
      description: `the response could not be read (${defect.message}): it is nested too deeply or too large`
    })
  )

const rangeError = (defect: unknown): Option.Option<RangeError> =>
  defect instanceof RangeError ? Option.some(defect) : Option.none()

/**
 * A client call whose failures are safe `AiError`s (see the module comment).
 *
 * @since 0.1.0
 * @category utils
 */
export const guardEffect = <A>(
  effect: Effect.Effect<A, AiError.AiError>,
  module: string,
  method: string,
  secrets: Secrets
): Effect.Effect<A, AiError.AiError> =>
  effect.pipe(
    Effect.mapError((error) => safeAiError(error, secrets)),
    Effect.catchSomeDefect((defect) =>
      Option.map(rangeError(defect), (error) => Effect.fail(unreadable(module, method, error)))
    )
  )

/**
 * A client stream whose failures are safe `AiError`s (see the module comment).
 *
 * @since 0.1.0
 * @category utils
 */
export const guardStream = <A, R>(
  stream: Stream.Stream<A, AiError.AiError, R>,
  module: string,
  method: string,
  secrets: Secrets
): Stream.Stream<A, AiError.AiError, R> =>
  stream.pipe(
    Stream.mapError((error) => safeAiError(error, secrets)),
    Stream.catchSomeCause((cause) =>
      Option.map(
        Option.flatMap(Cause.dieOption(cause), rangeError),
        (error) => Stream.fail(unreadable(module, method, error))
      )
    )
  )
