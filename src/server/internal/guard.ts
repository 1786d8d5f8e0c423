/**
 * The middleware every route goes through (`/v1/*`, `/openapi.json`,
 * `/docs` and the viewer's assets alike), in this order:
 *
 * 1. the request's fiber joins the server's set, so shutdown can wait for
 *    it and interrupt it after the drain timeout;
 * 2. a draining server answers 503 `shutting_down`;
 * 3. the rate limit, per key (or per remote address without a valid one):
 *    429 with `retry-after`;
 * 4. the API key, when one is configured: 401 unless the path is public;
 * 5. a declared body length over the limit: 413, before anything is read.
 *
 * It also turns every failure into the stable error body: an `ApiError`
 * with its status, the platform's decode error as 400 `malformed`, an
 * unknown route as 404, and a defect as 500 whose body says nothing of it
 * (the defect is logged).
 */
import type { RateLimiter } from "@effect/experimental"
import {
  HttpApiBuilder,
  HttpApiError,
  type HttpApp,
  HttpMethod,
  HttpServerError,
  HttpServerRequest,
  type HttpServerResponse
} from "@effect/platform"
import { Cause, Duration, Effect, FiberSet, type Layer, Option } from "effect"
import { createHash } from "node:crypto"
import * as ApiError from "../ApiError.js"
import * as Auth from "./auth.js"
import * as ErrorResponse from "./errorResponse.js"
import { checkDeclaredLength } from "./requestBody.js"
import type { ShutdownSignal } from "./shutdown.js"

/** What the guard enforces. */
export interface GuardOptions {
  readonly keyCheck: Auth.KeyCheck | undefined
  readonly rateLimit:
    | {
      readonly limiter: RateLimiter.RateLimiter
      readonly limit: number
      readonly window: Duration.DurationInput
    }
    | undefined
  readonly maxBodyBytes: number
  readonly shutdown: ShutdownSignal
  readonly requests: FiberSet.FiberSet<unknown, unknown>
}

const unauthorized = new ApiError.Unauthorized({
  error: {
    type: "authentication_error",
    code: "unauthorized",
    message: "an API key is required: send `Authorization: Bearer <key>` or `x-api-key: <key>`"
  }
})

const shuttingDown = new ApiError.Unavailable({
  error: { type: "unavailable_error", code: "shutting_down", message: "the server is shutting down" }
})

const rateLimited = (retryAfter: Duration.Duration): ApiError.TooManyRequests => {
  const seconds = Math.max(1, Math.ceil(Duration.toMillis(retryAfter) / 1000))
  return new ApiError.TooManyRequests({
    error: {
      type: "rate_limit_error",
      code: "rate_limited",
      message: `too many requests; retry after ${seconds} s`,
      retryAfterSeconds: seconds
    }
  })
}

const limiterFailed = new ApiError.Unavailable({
  error: { type: "unavailable_error", code: "rate_limit_store_failed", message: "the rate limit store failed" }
})

const pathOf = (url: string): string => {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

const clip = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}…` : text)

/** A failure or defect as the response with the stable body; an interruption stays one. */
const respondTo = (
  cause: Cause.Cause<unknown>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (ErrorResponse.isApiError(error)) return Effect.succeed(ErrorResponse.toResponse(error))
    if (error instanceof HttpApiError.HttpApiDecodeError) {
      const issue = error.issues[0]
      const param = issue === undefined ? "" : issue.path.map(String).join(".")
      const message = issue?.message ?? error.message
      return Effect.succeed(ErrorResponse.toResponse(
        new ApiError.BadRequest({
          error: param === ""
            ? { type: "invalid_request_error", code: "malformed", message }
            : { type: "invalid_request_error", code: "malformed", message, param }
        })
      ))
    }
    if (error instanceof HttpServerError.RouteNotFound) {
      return Effect.map(
        HttpServerRequest.HttpServerRequest,
        (request) => ErrorResponse.toResponse(ErrorResponse.routeNotFound(request.method, clip(pathOf(request.url))))
      )
    }
  }
  return Effect.as(
    Effect.logError("AgentServer: request failed with a defect", cause),
    ErrorResponse.toResponse(ErrorResponse.internalError())
  )
}

const keyId = (key: string): string => `key:${createHash("sha256").update(key, "utf8").digest("hex").slice(0, 32)}`

/** The middleware. */
export const make = (options: GuardOptions) => (app: HttpApp.Default): HttpApp.Default =>
  Effect.gen(function*() {
    yield* Effect.withFiberRuntime<void>((fiber) => Effect.sync(() => FiberSet.unsafeAdd(options.requests, fiber)))
    if (yield* options.shutdown.isDraining) return yield* shuttingDown
    const request = yield* HttpServerRequest.HttpServerRequest
    const presented = Auth.presentedKey(request.headers)
    const authorized = options.keyCheck === undefined ||
      (presented !== undefined && options.keyCheck.matches(presented))
    if (options.rateLimit !== undefined) {
      const { limit, limiter, window } = options.rateLimit
      const key = options.keyCheck !== undefined && authorized && presented !== undefined
        ? keyId(presented)
        : `address:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
      yield* limiter.consume({ algorithm: "fixed-window", onExceeded: "fail", limit, window, key }).pipe(
        Effect.mapError((error): ApiError.ApiError =>
          error.reason === "Exceeded" ? rateLimited(error.retryAfter) : limiterFailed
        )
      )
    }
    if (!authorized && !Auth.isPublicPath(pathOf(request.url))) return yield* unauthorized
    if (HttpMethod.hasBody(request.method)) yield* checkDeclaredLength(request, options.maxBodyBytes)
    return yield* app
  }).pipe(Effect.catchAllCause(respondTo))

/** The middleware as the API's global middleware (it wraps every route on the API's router). */
export const layer = (options: GuardOptions): Layer.Layer<never> => HttpApiBuilder.middleware(make(options))
