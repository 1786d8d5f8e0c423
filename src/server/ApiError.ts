/**
 * What the HTTP server answers when a request cannot be served: one error
 * class per status code, each with the same stable JSON body —
 * `{ "_tag": "<class>", "error": { "type", "code", "message", "param"?, "retryAfterSeconds"? } }`.
 * The inner `error` object has the fields of OpenAI's error body, so an
 * OpenAI client reading `/v1/chat/completions` shows the message as it
 * would OpenAI's.
 *
 * {@link fromPipelineError} decides which status each library error gets
 * (the table is in `docs/server.md`).
 *
 * @since 0.1.0
 */
import { HttpApiSchema } from "@effect/platform"
import { Match, Schema } from "effect"
import type { PipelineError } from "../domain/PipelineError.js"
import type { ExecutionStoreError, RecordDecodeError } from "../stores/contract/ExecutionStore.js"

/**
 * The body every error response carries under `error`.
 *
 * - `type`: the status family (`invalid_request_error`, `authentication_error`,
 *   `not_found_error`, `conflict_error`, `rate_limit_error`, `server_error`,
 *   `unavailable_error`)
 * - `code`: what went wrong, stable (`malformed`, `too_large`, `not_found`,
 *   `plan_mismatch`, `hook_denied`, …)
 * - `message`: for people; may change between releases
 * - `param`: where in the request body the problem is, when known
 *
 * @since 0.1.0
 * @category models
 */
export const ErrorDetail = Schema.Struct({
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  param: Schema.optional(Schema.String),
  retryAfterSeconds: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ErrorDetail = typeof ErrorDetail.Type

/**
 * 400: the request body, a parameter or a decision is malformed, has a
 * field a request does not have, or nests too deep.
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends Schema.TaggedError<BadRequest>("effect-agent-pipeline/server/BadRequest")(
  "BadRequest",
  { error: ErrorDetail },
  HttpApiSchema.annotations({ status: 400 })
) {}

/**
 * 401: an API key is configured and the request carries none, or another.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("effect-agent-pipeline/server/Unauthorized")(
  "Unauthorized",
  { error: ErrorDetail },
  HttpApiSchema.annotations({ status: 401 })
) {}

/**
 * 404: no record, or no checkpoint, with that id.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends Schema.TaggedError<NotFound>("effect-agent-pipeline/server/NotFound")(
  "NotFound",
  { error: ErrorDetail },
  HttpApiSchema.annotations({ status: 404 })
) {}

/**
 * 409: the checkpoint is being resumed by someone else, or the plan digest
 * the approver saw is not the checkpoint's, or the request id is in use.
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends Schema.TaggedError<Conflict>("effect-agent-pipeline/server/Conflict")(
  "Conflict",
  { error: ErrorDetail },
  HttpApiSchema.annotations({ status: 409 })
) {}

/**
 * 413: the request body is larger than the server accepts.
 *
 * @since 0.1.0
 * @category errors
 */
export class PayloadTooLarge
  extends Schema.TaggedError<PayloadTooLarge>("effect-agent-pipeline/server/PayloadTooLarge")(
    "PayloadTooLarge",
    { error: ErrorDetail },
    HttpApiSchema.annotations({ status: 413 })
  )
{}

/**
 * 422: the request was valid, but the agent could not serve it — the model
 * gave no valid plan, a hook failed or denied it, synthesis failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unprocessable extends Schema.TaggedError<Unprocessable>("effect-agent-pipeline/server/Unprocessable")(
  "Unprocessable",
  { error: ErrorDetail },
  HttpApiSchema.annotations({ status: 422 })
) {}

/**
 * 429: the caller's key (or address) is over its rate limit;
 * `retryAfterSeconds` and the `retry-after` header say when to try again.
 *
 * @since 0.1.0
 * @category errors
 */
export class TooManyRequests
  extends Schema.TaggedError<TooManyRequests>("effect-agent-pipeline/server/TooManyRequests")(
    "TooManyRequests",
    { error: ErrorDetail },
    HttpApiSchema.annotations({ status: 429 })
  )
{}

/**
 * 500: a defect on the server. The body never carries the defect's text.
 *
 * @since 0.1.0
 * @category errors
 */
export class InternalError extends Schema.TaggedError<InternalError>("effect-agent-pipeline/server/InternalError")(
  "InternalError",
  { error: ErrorDetail },
  HttpApiSchema.annotations({ status: 500 })
) {}

/**
 * 503: a store the request needs failed, or the server is shutting down.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unavailable extends Schema.TaggedError<Unavailable>("effect-agent-pipeline/server/Unavailable")(
  "Unavailable",
  { error: ErrorDetail },
  HttpApiSchema.annotations({ status: 503 })
) {}

/**
 * Every error the server answers with.
 *
 * @since 0.1.0
 * @category models
 */
export type ApiError =
  | BadRequest
  | Unauthorized
  | NotFound
  | Conflict
  | PayloadTooLarge
  | Unprocessable
  | TooManyRequests
  | InternalError
  | Unavailable

/**
 * The errors of {@link ApiError}, for an endpoint's `addError`s.
 *
 * @since 0.1.0
 * @category schemas
 */
export const all = [
  BadRequest,
  Unauthorized,
  NotFound,
  Conflict,
  PayloadTooLarge,
  Unprocessable,
  TooManyRequests,
  InternalError,
  Unavailable
] as const

/**
 * The status and body a library error gets.
 *
 * @example
 * ```ts
 * import { PipelineError } from "effect-agent-pipeline"
 * import { ApiError } from "effect-agent-pipeline/server"
 *
 * const error = ApiError.fromPipelineError(
 *   new PipelineError.CheckpointError({ reason: "not_found", checkpointId: "c1", detail: "no such checkpoint" })
 * )
 * error._tag // "NotFound"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPipelineError: (error: PipelineError) => ApiError = Match.type<PipelineError>().pipe(
  Match.tagsExhaustive({
    InvalidRequest: (e) =>
      e.reason === "too_large"
        ? new PayloadTooLarge({ error: detail("invalid_request_error", e.reason, e.message, e.path) })
        : e.reason === "request_id_in_use"
        ? new Conflict({ error: detail("conflict_error", e.reason, e.message, e.path) })
        : new BadRequest({ error: detail("invalid_request_error", e.reason, e.message, e.path) }),
    CheckpointError: (e) => {
      switch (e.reason) {
        case "not_found":
          return new NotFound({ error: detail("not_found_error", e.reason, e.message) })
        case "already_claimed":
        case "plan_mismatch":
          return new Conflict({ error: detail("conflict_error", e.reason, e.message) })
        case "invalid_decision":
          return new BadRequest({ error: detail("invalid_request_error", e.reason, e.message, "decision") })
        case "tampered":
          return new Unprocessable({ error: detail("invalid_request_error", e.reason, e.message) })
        case "not_saved":
          return new Unavailable({ error: detail("unavailable_error", e.reason, e.message) })
      }
    },
    HookDenied: (e) => new Unprocessable({ error: detail("invalid_request_error", "hook_denied", e.message) }),
    RequiredAfterPlanningError: (e) =>
      new Unprocessable({ error: detail("invalid_request_error", "required_hook_rejected", e.message) }),
    HookContractError: (e) => new Unprocessable({ error: detail("server_error", "hook_contract", e.message) }),
    HookFailed: (e) => new Unprocessable({ error: detail("server_error", "hook_failed", e.message) }),
    PlanningError: (e) => new Unprocessable({ error: detail("server_error", `planning_${e.reason}`, e.message) }),
    SynthesisError: (e) =>
      new Unprocessable({ error: detail("server_error", `synthesis_${e.reason ?? "failed"}`, e.message) })
  })
)

/**
 * A store failure: 503, with the store's operation but not its cause (which
 * may name hosts or carry driver text).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStoreError = (error: ExecutionStoreError): Unavailable =>
  new Unavailable({
    error: detail("unavailable_error", "store_failed", `the execution store failed (${error.operation})`)
  })

/**
 * A stored record that does not decode: 422, code `record_corrupt` or
 * `record_future_version` — the same for the record and for its events.
 * The body never carries the stored text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRecordDecodeError = (error: RecordDecodeError): Unprocessable =>
  new Unprocessable({
    error: detail(
      "server_error",
      `record_${error.reason}`,
      `the stored record does not decode (${error.reason})`
    )
  })

const detail = (type: string, code: string, message: string, param?: string): ErrorDetail =>
  param === undefined || param === "" ? { type, code, message } : { type, code, message, param }
