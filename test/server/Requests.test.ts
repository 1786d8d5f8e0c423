/**
 * `POST /v1/requests` over a real socket: the result's Schema encoding,
 * a fresh request id when none is sent, and each refusal with its status
 * and stable body — not JSON, a wrong field type, an unknown field, too
 * large (413, the server still answers), too deep, a request id in use, a
 * failing agent (422), an unknown route (404).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { plan, quoteStep, tradeStep } from "../support/Harness.js"
import { post, startAgent } from "./ServerHarness.js"

const script = { plans: [plan([quoteStep("q1")])], synthesis: "ACME trades at 100" }

describe("POST /v1/requests", () => {
  it.scopedLive("answers the Completed encoding, with a fresh UUID request id when none is sent", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { body, status } = yield* server.json("/v1/requests", post({ request: "quote ACME" }))
      expect(status).toBe(200)
      expect(body._tag).toBe("Completed")
      expect(body.response.response).toBe("ACME trades at 100")
      expect(body.response.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      const record = yield* server.json(`/v1/records/${body.response.requestId}`)
      expect(record.status).toBe(200)
      expect(record.body.lifecycle.status).toBe("succeeded")
    }))

  it.scopedLive("keeps the request id it is sent, and answers Suspended for a plan that needs approval", () =>
    Effect.gen(function*() {
      const server = yield* startAgent({ plans: [plan([tradeStep("t1")])], synthesis: "bought" })
      const { body, status } = yield* server.json("/v1/requests", post({ request: "buy ACME", requestId: "r-1" }))
      expect(status).toBe(200)
      expect(body._tag).toBe("Suspended")
      expect(body.requestId).toBe("r-1")
      expect(body.checkpoint.planDigest).toEqual(expect.any(String))
    }))

  it.scopedLive("a body that is not JSON: 400 malformed", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { body, status } = yield* server.json("/v1/requests", post("{not json"))
      expect(status).toBe(400)
      expect(body).toMatchObject({
        _tag: "BadRequest",
        error: { type: "invalid_request_error", code: "malformed" }
      })
      expect(body.error.message).toContain("not JSON")
      const empty = yield* server.json("/v1/requests", post(""))
      expect(empty.status).toBe(400)
      expect(empty.body.error.code).toBe("malformed")
    }))

  it.scopedLive("a field of the wrong type: 400 malformed naming the field; an unknown field: unexpected_field", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const wrong = yield* server.json("/v1/requests", post({ request: 42 }))
      expect(wrong.status).toBe(400)
      expect(wrong.body.error).toMatchObject({ code: "malformed", param: "request" })
      const metadata = yield* server.json("/v1/requests", post({ request: "x", metadata: [1] }))
      expect(metadata.status).toBe(400)
      expect(metadata.body.error).toMatchObject({ code: "malformed", param: "metadata" })
      const unknown = yield* server.json("/v1/requests", post({ request: "x", requestID: "r" }))
      expect(unknown.status).toBe(400)
      expect(unknown.body.error).toMatchObject({ code: "unexpected_field" })
      const array = yield* server.json("/v1/requests", post([1, 2]))
      expect(array.status).toBe(400)
      expect(array.body.error.code).toBe("malformed")
    }))

  it.scopedLive("a body over maxBodyBytes: 413 too_large before it is read, and the server still answers", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script, { maxBodyBytes: 10_000 })
      const big = yield* server.json("/v1/requests", post({ request: "x".repeat(50_000) }))
      expect(big.status).toBe(413)
      expect(big.body).toMatchObject({ _tag: "PayloadTooLarge", error: { code: "too_large" } })
      const huge = yield* server.json("/v1/requests", post({ request: "x".repeat(20_000_000) }))
      expect(huge.status).toBe(413)
      const after = yield* server.json("/v1/requests", post({ request: "quote ACME" }))
      expect(after.status).toBe(200)
    }))

  it.scopedLive("a body sent without a length (chunked) over maxBodyBytes: 413 once the limit is read, the server still answers", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script, { maxBodyBytes: 10_000 })
      const chunk = new TextEncoder().encode("x".repeat(4096))
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull: (controller) => (sent++ < 500 ? controller.enqueue(chunk) : controller.close())
      })
      const init: RequestInit & { readonly duplex: "half" } = { method: "POST", body, duplex: "half" }
      const refused = yield* server.json("/v1/requests", init)
      expect(refused.status).toBe(413)
      expect(refused.body).toMatchObject({ _tag: "PayloadTooLarge", error: { code: "too_large" } })
      expect((yield* server.json("/v1/requests", post({ request: "quote ACME" }))).status).toBe(200)
    }))

  it.scopedLive("a request text over the library's limit inside the body limit: 413 from the library's decoder", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const big = yield* server.json("/v1/requests", post({ request: "x".repeat(1_048_577) }))
      expect(big.status).toBe(413)
      expect(big.body.error).toMatchObject({ code: "too_large", param: "request" })
    }))

  it.scopedLive("metadata nested deeper than the library's bound: 400 too_deep", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const deep = `{"request":"x","metadata":{"a":${"[".repeat(5000)}${"]".repeat(5000)}}}`
      const { body, status } = yield* server.json("/v1/requests", post(deep))
      expect(status).toBe(400)
      expect(body.error.code).toBe("too_deep")
      const deeper = `{"request":${"[".repeat(100_000)}${"]".repeat(100_000)}}`
      const other = yield* server.json("/v1/requests", post(deeper))
      expect(other.status).toBe(400)
      expect(other.body.error).toMatchObject({ code: "malformed", param: "request" })
    }))

  it.scopedLive("a request id already in use: 409 request_id_in_use", () =>
    Effect.gen(function*() {
      const server = yield* startAgent({ plans: [plan([quoteStep("q1")]), plan([quoteStep("q1")])], synthesis: "ok" })
      expect((yield* server.json("/v1/requests", post({ request: "a", requestId: "same" }))).status).toBe(200)
      const again = yield* server.json("/v1/requests", post({ request: "a", requestId: "same" }))
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ _tag: "Conflict", error: { code: "request_id_in_use" } })
    }))

  it.scopedLive("an agent that cannot plan: 422 with the planning reason", () =>
    Effect.gen(function*() {
      const server = yield* startAgent({ plans: ["not a plan", "still not", "nope", "no"], synthesis: "x" })
      const { body, status } = yield* server.json("/v1/requests", post({ request: "quote ACME" }))
      expect(status).toBe(422)
      expect(body._tag).toBe("Unprocessable")
      expect(body.error.code).toMatch(/^planning_/)
    }))

  it.scopedLive("an unknown route: 404 with the stable body; GET on a POST route too", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const missing = yield* server.json("/v1/nothing")
      expect(missing.status).toBe(404)
      expect(missing.body).toMatchObject({ _tag: "NotFound", error: { code: "route_not_found" } })
      expect((yield* server.json("/v1/requests")).status).toBe(404)
    }))
})
