/**
 * Reading bodies outside a socket (a web request, as a web handler would
 * get): JSON parsed, a declared length over the limit refused unread, a
 * body that is not JSON refused; Schema-decoded bodies name the failing
 * field; nesting is measured without recursion.
 */
import { HttpServerRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { decodeBody, nestsDeeperThan, readJson } from "../../src/server/internal/requestBody.js"

const web = (body: string, headers: Record<string, string> = {}) =>
  HttpServerRequest.fromWeb(new Request("http://x/v1/requests", { method: "POST", body, headers }))

describe("request bodies", () => {
  it.effect("JSON is parsed; not JSON is 400 malformed; a declared length over the limit is 413", () =>
    Effect.gen(function*() {
      expect(yield* readJson(web(`{"request":"hi"}`), 1000)).toEqual({ request: "hi" })
      const notJson = yield* Effect.flip(readJson(web("{"), 1000))
      expect(notJson).toMatchObject({ _tag: "BadRequest", error: { code: "malformed" } })
      const empty = yield* Effect.flip(readJson(web("  "), 1000))
      expect(empty.error.code).toBe("malformed")
      const big = yield* Effect.flip(readJson(web("x".repeat(2000), { "content-length": "2000" }), 1000))
      expect(big).toMatchObject({ _tag: "PayloadTooLarge", error: { code: "too_large" } })
      const undeclared = yield* Effect.flip(readJson(web(`"${"x".repeat(2000)}"`), 1000))
      expect(undeclared._tag).toBe("PayloadTooLarge")
    }))

  it.effect("a Schema-decoded body names the first failing field; too deep is too_deep", () =>
    Effect.gen(function*() {
      const decode = decodeBody(Schema.Struct({ a: Schema.Struct({ b: Schema.Number }) }))
      expect(yield* decode({ a: { b: 1 }, extra: true })).toEqual({ a: { b: 1 } })
      const wrong = yield* Effect.flip(decode({ a: { b: "1" } }))
      expect(wrong.error).toMatchObject({ code: "malformed", param: "a.b" })
      let deep: unknown = 1
      for (let i = 0; i < 10_000; i++) deep = [deep]
      const tooDeep = yield* Effect.flip(decode({ a: deep }))
      expect(tooDeep.error.code).toBe("too_deep")
    }))

  it("nesting is counted per level, objects and arrays alike", () => {
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false)
    expect(nestsDeeperThan({ a: [{ b: [] }] }, 3)).toBe(true)
    expect(nestsDeeperThan("text", 0)).toBe(false)
  })
})
