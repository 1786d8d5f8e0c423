/**
 * `ModelPolicy` (issue 9): which failures are retried, and after how long.
 */
import { AiError } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import { ModelPolicy } from "effect-agent-pipeline"
import { httpStatus, reset } from "../support/FlakyModel.js"

const policy: ModelPolicy.ModelPolicy = {
  ...ModelPolicy.defaults,
  retries: 3,
  retryDelay: Duration.millis(100),
  maxRetryDelay: Duration.seconds(10)
}
const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)
const delayOf = (failure: ModelPolicy.ModelFailure, retry = 1) =>
  Option.map(ModelPolicy.retryDelay(policy, failure, retry, NOW), Duration.toMillis)

describe("ModelPolicy", () => {
  it("issue 9: transient failures: 408, 409, 429, 5xx, transport resets, timeouts, a provider response that does not parse", () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) {
      expect(ModelPolicy.isTransient(httpStatus(status))).toBe(true)
    }
    for (const status of [400, 401, 403, 404, 422]) expect(ModelPolicy.isTransient(httpStatus(status))).toBe(false)
    expect(ModelPolicy.isTransient(reset())).toBe(true)
    expect(ModelPolicy.isTransient(new ModelPolicy.ModelTimeout({ timeoutMillis: 1 }))).toBe(true)
    expect(ModelPolicy.isTransient(new AiError.MalformedOutput({ module: "OpenAiClient", method: "createResponse" })))
      .toBe(true)
    // From LanguageModel itself: the model's output is not what was asked for (re-asked, not retried).
    expect(ModelPolicy.isTransient(new AiError.MalformedOutput({ module: "LanguageModel", method: "generateObject" })))
      .toBe(false)
    expect(ModelPolicy.isTransient(new AiError.UnknownError({ module: "X", method: "y" }))).toBe(false)
  })

  it("issue 17: an error status decides whether its body decoded or not; an over-limit output is not retried", () => {
    const decodeFailure = (status: number) =>
      new AiError.HttpResponseError({
        module: "AnthropicClient",
        method: "createMessage",
        reason: "Decode",
        request: {
          method: "POST",
          url: "http://127.0.0.1/v1/messages",
          urlParams: [],
          hash: Option.none(),
          headers: {}
        },
        response: { status, headers: {} }
      })
    expect(ModelPolicy.isTransient(decodeFailure(401))).toBe(false)
    expect(ModelPolicy.isTransient(decodeFailure(404))).toBe(false)
    expect(ModelPolicy.isTransient(decodeFailure(429))).toBe(true)
    expect(ModelPolicy.isTransient(decodeFailure(503))).toBe(true)
    // A 200 whose body did not decode is the provider's fault: retried.
    expect(ModelPolicy.isTransient(decodeFailure(200))).toBe(true)
    expect(
      ModelPolicy.isTransient(new ModelPolicy.ModelOutputTooLarge({ maxBytes: 1, receivedBytes: 2, streamed: false }))
    )
      .toBe(false)
  })

  it("issue 9: backoff doubles from retryDelay up to maxRetryDelay; no retry past `retries`", () => {
    expect([1, 2, 3].map((n) => delayOf(httpStatus(500), n))).toEqual([
      Option.some(100),
      Option.some(200),
      Option.some(400)
    ])
    expect(delayOf(httpStatus(500), 4)).toEqual(Option.none())
    expect(Option.map(ModelPolicy.retryDelay({ ...policy, retries: 20 }, httpStatus(500), 12, NOW), Duration.toMillis))
      .toEqual(Option.some(10_000))
    expect(delayOf(httpStatus(400))).toEqual(Option.none())
  })

  it("issue 9: retry-after (seconds or an HTTP date) and retry-after-ms are honoured, case-insensitively, up to maxRetryDelay", () => {
    expect(delayOf(httpStatus(429, { "retry-after": "3" }))).toEqual(Option.some(3000))
    expect(delayOf(httpStatus(429, { "Retry-After": "0.5" }))).toEqual(Option.some(500))
    expect(delayOf(httpStatus(503, { "retry-after": new Date(NOW + 4000).toUTCString() }))).toEqual(Option.some(4000))
    expect(delayOf(httpStatus(429, { "retry-after-ms": "250", "retry-after": "9" }))).toEqual(Option.some(250))
    // Longer than the policy waits: not retried at all.
    expect(delayOf(httpStatus(429, { "retry-after": "60" }))).toEqual(Option.none())
    // Unreadable: the backoff applies.
    expect(delayOf(httpStatus(429, { "retry-after": "soon" }))).toEqual(Option.some(100))
  })
})
