/**
 * The HTTP side of the OpenAI-compatible provider (issue 19): `POST
 * {apiUrl}/chat/completions` over `@effect/platform`'s `HttpClient`, a
 * buffered answer as parsed JSON or a streamed one as the data of its
 * server-sent events. Its calls are behind the provider boundary
 * (providerBoundary.ts), as `OpenAi.layer`'s are: a failure is a safe
 * `AiError` — the request's method and URL, the response's status,
 * `retry-after` and rate-limit headers and a body excerpt, never the
 * request's headers or the key — and an error response's body is read as a
 * bounded excerpt.
 */
import { AiError } from "@effect/ai"
import { HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import { Effect, flow, identity, Option, type Redacted, Stream } from "effect"
import { eventData } from "./chatCompletionsSse.js"
import type { ChatRequest } from "./chatCompletionsWire.js"
import { httpConventions } from "./httpConventions.js"
import { boundErrorBodies, guardEffect, guardStream } from "./providerBoundary.js"
import type { Secrets } from "./secrets.js"

/**
 * The module the provider's errors name.
 *
 * @since 0.1.0
 * @category constants
 */
export const moduleName = "OpenAiCompatClient"

/**
 * Where the server is and how to reach it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /** The API base URL, ending in `/v1`. */
  readonly apiUrl: string
  /** Sent as `Authorization: Bearer …` when given. */
  readonly apiKey: Redacted.Redacted | undefined
  /** The user's rewrite of the HTTP client (extra headers, a proxy, …). */
  readonly transformClient: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/**
 * The two calls.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatClient {
  /** A buffered answer: the response body, parsed as JSON (its shape is checked by the caller). */
  readonly create: (request: ChatRequest) => Effect.Effect<unknown, AiError.AiError>
  /** A streamed answer (`stream: true` is added): the `data` of each event, `[DONE]` included. */
  readonly stream: (request: ChatRequest) => Stream.Stream<string, AiError.AiError>
  /** What a failure names as its request (for errors the server reports inside a 200). */
  readonly requestDetails: typeof AiError.HttpRequestDetails.Type
}

/**
 * The one place where the provider's HTTP client is transformed, after the
 * base URL, the key and `Accept: application/json` are set on each request
 * and before non-2xx statuses become failures: the user's
 * `transformClient`, then the conventions every provider follows
 * (`User-Agent`, trace propagation only to a collecting tracer, HTTP span
 * status; `httpConventions.ts`), then {@link boundErrorBodies} (error bodies read as a
 * bounded excerpt). *
 * @since 0.1.0
 * @category utils
 */
export const transformClient = (client: HttpClient.HttpClient, options: ClientOptions): HttpClient.HttpClient =>
  boundErrorBodies(httpConventions(options.transformClient === undefined ? client : options.transformClient(client)))

const path = "/chat/completions"

const translate = (method: string) => (error: HttpClientError.HttpClientError): Effect.Effect<never, AiError.AiError> =>
  error._tag === "RequestError"
    ? Effect.fail(AiError.HttpRequestError.fromRequestError({ module: moduleName, method, error }))
    : AiError.HttpResponseError.fromResponseError({ module: moduleName, method, error })

/**
 * The client over the `HttpClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: ClientOptions,
  secrets: Secrets
): Effect.Effect<ChatClient, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (base) => {
    const key = options.apiKey
    const client = transformClient(
      HttpClient.mapRequest(
        base,
        flow(
          HttpClientRequest.prependUrl(options.apiUrl),
          key === undefined ? identity : HttpClientRequest.bearerToken(key),
          HttpClientRequest.acceptJson
        )
      ),
      options
    ).pipe(HttpClient.filterStatusOk)

    const post = (body: ChatRequest) => HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUnsafeJson(body))

    const create = (request: ChatRequest): Effect.Effect<unknown, AiError.AiError> =>
      guardEffect(
        client.execute(post(request)).pipe(
          Effect.flatMap((response) => response.json),
          Effect.catchAll(translate("createChatCompletion"))
        ),
        moduleName,
        "createChatCompletion",
        secrets
      )

    const stream = (request: ChatRequest): Stream.Stream<string, AiError.AiError> =>
      guardStream(
        client.execute(post({ ...request, stream: true })).pipe(
          Effect.map((response) => response.stream),
          Stream.unwrapScoped,
          Stream.decodeText(),
          eventData,
          Stream.catchAll((error) => Stream.fromEffect(translate("createChatCompletionStream")(error)))
        ),
        moduleName,
        "createChatCompletionStream",
        secrets
      )

    return {
      create,
      stream,
      requestDetails: {
        method: "POST",
        url: `${options.apiUrl}${path}`,
        urlParams: [],
        hash: Option.none(),
        headers: {}
      }
    }
  })
