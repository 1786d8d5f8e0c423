/**
 * How long a model call may take and which failures are tried again.
 *
 * - Every attempt has a timeout (`timeout`; for a stream, the longest wait
 *   for its next part). An overrun is {@link ModelTimeout}.
 * - Transient failures are retried, up to `retries` times per model: HTTP
 *   429 / 408 / 409 / 5xx, transport failures (refused or reset
 *   connections), a provider response that does not parse, and timeouts.
 *   The delay doubles from `retryDelay`; a `retry-after` (or
 *   `retry-after-ms`) header is honoured instead. A delay above
 *   `maxRetryDelay` is not waited for: the call fails at once.
 * - Anything else (a 400, a refused key, output that is not a plan, output
 *   over `maxOutputBytes`) is not retried here; a bad plan gets the
 *   planner's re-ask instead.
 * - The model's text output is bounded (`maxOutputBytes`, UTF-8 bytes): a
 *   buffered answer over it fails the call with {@link ModelOutputTooLarge};
 *   a stream stops at it the same way (what was sent stays sent). The
 *   record keeps the output up to the limit, marked as cut.
 *
 * Retrying lives in a catch on the failure path: a call that succeeds pays
 * for one handler frame, no schedule or driver.
 *
 * @since 0.1.0
 */
import type { AiError } from "@effect/ai"
import { Duration, Effect, Option, Schema } from "effect"
import type { ModelCallRecording } from "../domain/ModelCall.js"

/**
 * A model call that did not answer within its timeout.
 *
 * @since 0.1.0
 * @category errors
 */
export class ModelTimeout extends Schema.TaggedError<ModelTimeout>("effect-agent-pipeline/ModelTimeout")(
  "ModelTimeout",
  { timeoutMillis: Schema.Number }
) {
  override get message(): string {
    return `the model did not answer within ${Duration.format(Duration.millis(this.timeoutMillis))}`
  }
}

/**
 * A model answered with more text than the policy's `maxOutputBytes`
 * (UTF-8 bytes). `receivedBytes` is what had arrived when the call was
 * stopped: the whole answer for a buffered call, the limit plus the
 * delta that crossed it for a stream.
 *
 * @since 0.1.0
 * @category errors
 */
export class ModelOutputTooLarge extends Schema.TaggedError<ModelOutputTooLarge>(
  "effect-agent-pipeline/ModelOutputTooLarge"
)("ModelOutputTooLarge", {
  maxBytes: Schema.Number,
  receivedBytes: Schema.Number,
  streamed: Schema.Boolean
}) {
  override get message(): string {
    return this.streamed
      ? `the model's streamed output passed the ${this.maxBytes}-byte limit (maxOutputBytes); ` +
        "the stream was stopped at it"
      : `the model's output is ${this.receivedBytes} bytes, over the ${this.maxBytes}-byte limit (maxOutputBytes)`
  }
}

/**
 * What a model call can fail with before the pipeline names it.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelFailure = AiError.AiError | ModelTimeout | ModelOutputTooLarge

/**
 * The policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelPolicy {
  readonly timeout: Duration.Duration
  readonly retries: number
  readonly retryDelay: Duration.Duration
  readonly maxRetryDelay: Duration.Duration
  /** Re-asks after output that is not a plan. */
  readonly planReasks: number
  readonly recordCalls: ModelCallRecording
  /**
   * The most text one model call may answer, in UTF-8 bytes: a buffered
   * answer over it fails, a stream stops at it (see the module comment).
   */
  readonly maxOutputBytes: number
}

/**
 * The defaults: 60 s per attempt, 2 retries from 500 ms (at most 30 s
 * apart), 1 re-ask, model calls recorded in full, 1 MiB of output per call.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: ModelPolicy = {
  timeout: Duration.seconds(60),
  retries: 2,
  retryDelay: Duration.millis(500),
  maxRetryDelay: Duration.seconds(30),
  planReasks: 1,
  recordCalls: "full",
  maxOutputBytes: 1_048_576
}

const transientStatus = new Set([408, 409, 429, 500, 502, 503, 504])

/**
 * Whether a failure is worth another attempt (see the module comment).
 * `MalformedOutput` counts only when the provider's client raised it (its
 * response did not parse); from `LanguageModel` itself it means the model's
 * output is not what was asked for.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTransient = (failure: ModelFailure): boolean => {
  switch (failure._tag) {
    case "ModelTimeout":
      return true
    case "ModelOutputTooLarge":
      return false
    case "HttpRequestError":
      return failure.reason === "Transport"
    case "HttpResponseError":
      // An error status decides, readable body or not (a 401 whose body did
      // not decode is still a 401); a 2xx that did not decode is the
      // provider's fault.
      return failure.response.status >= 400
        ? transientStatus.has(failure.response.status) || failure.response.status >= 500
        : failure.reason !== "StatusCode"
    case "MalformedOutput":
      return failure.module !== "LanguageModel"
    default:
      return false
  }
}

const header = (headers: Readonly<Record<string, string>>, name: string): string | undefined => {
  for (const key in headers) if (key.toLowerCase() === name) return headers[key]
  return undefined
}

/** The wait a `retry-after-ms` / `retry-after` header asks for (seconds or an HTTP date). */
const retryAfterMillis = (failure: ModelFailure, now: number): number | undefined => {
  if (failure._tag !== "HttpResponseError") return undefined
  const headers = failure.response.headers
  const ms = Number(header(headers, "retry-after-ms"))
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = header(headers, "retry-after")
  if (value === undefined || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * How long to wait before retry number `retry` (1-based) after `failure`,
 * or none when it is not retried.
 *
 * @example
 * ```ts
 * import { ModelPolicy } from "effect-agent-pipeline"
 *
 * ModelPolicy.retryDelay(ModelPolicy.defaults, new ModelPolicy.ModelTimeout({ timeoutMillis: 10 }), 1, Date.now())
 * // Option.some(Duration.millis(500))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const retryDelay = (
  policy: ModelPolicy,
  failure: ModelFailure,
  retry: number,
  now: number
): Option.Option<Duration.Duration> => {
  if (retry > policy.retries || !isTransient(failure)) return Option.none()
  const max = Duration.toMillis(policy.maxRetryDelay)
  const asked = retryAfterMillis(failure, now)
  if (asked !== undefined) return asked <= max ? Option.some(Duration.millis(asked)) : Option.none()
  return Option.some(Duration.millis(Math.min(max, Duration.toMillis(policy.retryDelay) * 2 ** (retry - 1))))
}

/**
 * Runs `attempt(1)`, and on a transient failure waits and runs
 * `attempt(2)`, … (on the fiber's `Clock`, so `TestClock` drives the waits).
 *
 * @since 0.1.0
 * @category utils
 */
export const withRetries = <A, E extends ModelFailure, R>(
  policy: ModelPolicy,
  attempt: (n: number) => Effect.Effect<A, E, R>,
  n = 1
): Effect.Effect<A, E, R> =>
  Effect.catchAll(
    attempt(n),
    (failure) =>
      Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
        Option.match(retryDelay(policy, failure, n, now), {
          onNone: () =>
            Effect.fail(failure),
          onSome: (delay) => Effect.zipRight(Effect.sleep(delay), withRetries(policy, attempt, n + 1))
        }))
  )
