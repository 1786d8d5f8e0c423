/**
 * An `ApiError` as the response it is: its status, its stable JSON body
 * (`{ "_tag", "error": { … } }`), and — for 429 — the `retry-after` header.
 * Used wherever the server answers outside an endpoint's own error
 * encoding (auth, rate limit, body size, unknown routes, defects).
 */
import { HttpServerResponse } from "@effect/platform"
import { Schema } from "effect"
import * as ApiError from "../ApiError.js"

const statuses: Record<ApiError.ApiError["_tag"], number> = {
  BadRequest: 400,
  Unauthorized: 401,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  Unprocessable: 422,
  TooManyRequests: 429,
  InternalError: 500,
  Unavailable: 503
}

const AnyApiError = Schema.Union(...ApiError.all)
const encode = Schema.encodeSync(AnyApiError)

/** The HTTP status of an error. */
export const statusOf = (error: ApiError.ApiError): number => statuses[error._tag]

/** Whether a value is one of the `ApiError` classes. */
export const isApiError: (u: unknown) => u is ApiError.ApiError = Schema.is(AnyApiError)

/** The encoded body of an error. */
export const bodyOf = (error: ApiError.ApiError): typeof AnyApiError.Encoded => encode(error)

/** The response of an error. */
export const toResponse = (error: ApiError.ApiError): HttpServerResponse.HttpServerResponse => {
  const retryAfter = error.error.retryAfterSeconds
  const headers: Record<string, string> = {}
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter)
  // The rest of an oversized body is not worth waiting for on this connection.
  if (error._tag === "PayloadTooLarge") headers["connection"] = "close"
  return HttpServerResponse.unsafeJson(bodyOf(error), { status: statusOf(error), headers })
}

/** A 500 whose body says nothing of the defect. */
export const internalError = (): ApiError.InternalError =>
  new ApiError.InternalError({
    error: { type: "server_error", code: "internal", message: "the server failed; the failure is logged" }
  })

/** 404 for a route the server does not have. */
export const routeNotFound = (method: string, path: string): ApiError.NotFound =>
  new ApiError.NotFound({
    error: { type: "not_found_error", code: "route_not_found", message: `no route ${method} ${path}` }
  })
