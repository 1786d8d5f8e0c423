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
 * - Anything else (a 400, a refused key, output that is not a plan) is not
 *   retried here; a bad plan gets the planner's re-ask instead.
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
 * What a model call can fail with before the pipeline names it.
 *
 * @since 0.1.0
 */
export type ModelFailure = AiError.AiError | ModelTimeout

/**
 * The policy.
 *
 * @since 0.1.0
 */
export interface ModelPolicy {
  readonly timeout: Duration.Duration
  readonly retries: number
  readonly retryDelay: Duration.Duration
  readonly maxRetryDelay: Duration.Duration
  /** Re-asks after output that is not a plan. */
  readonly planReasks: number
  readonly recordCalls: ModelCallRecording
}

/**
 * The defaults: 60 s per attempt, 2 retries from 500 ms (at most 30 s
 * apart), 1 re-ask, model calls recorded in full.
 *
 * @since 0.1.0
 */
export const defaults: ModelPolicy = {
  timeout: Duration.seconds(60),
  retries: 2,
  retryDelay: Duration.millis(500),
  maxRetryDelay: Duration.seconds(30),
  planReasks: 1,
  recordCalls: "full"
}

const TRANSIENT_STATUS = new Set([408, 409, 429, 500, 502, 503, 504])

/**
 * Whether a failure is worth another attempt (see the module comment).
 * `MalformedOutput` counts only when the provider's client raised it (its
 * response did not parse); from `LanguageModel` itself it means the model's
 * output is not what was asked for.
 *
 * @since 0.1.0
 */
export const isTransient = (failure: ModelFailure): boolean => {
  switch (failure._tag) {
    case "ModelTimeout":
      return true
    case "HttpRequestError":
      return failure.reason === "Transport"
    case "HttpResponseError":
      return failure.reason !== "StatusCode" || TRANSIENT_STATUS.has(failure.response.status) ||
        failure.response.status >= 500
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
 */
export const withRetries = <A, E extends ModelFailure, R>(
  policy: ModelPolicy,
  attempt: (n: number) => Effect.Effect<A, E, R>,
  n = 1
): Effect.Effect<A, E, R> =>
  Effect.catchAll(attempt(n), (failure) =>
    Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
      Option.match(retryDelay(policy, failure, n, now), {
        onNone: () => Effect.fail(failure),
        onSome: (delay) => Effect.zipRight(Effect.sleep(delay), withRetries(policy, attempt, n + 1))
      })))
