/**
 * The guard middleware on its own (no socket): a draining server answers
 * 503 `shutting_down`; a declared body length over the limit is 413 before
 * the route runs; the key check and the public paths.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, FiberSet, Redacted } from "effect"
import * as Auth from "../../src/server/internal/auth.js"
import * as Guard from "../../src/server/internal/guard.js"
import * as Shutdown from "../../src/server/internal/shutdown.js"

const run = (options: Partial<Guard.GuardOptions>, request: Request) =>
  Effect.gen(function*() {
    let reached = false
    const route = Effect.sync(() => {
      reached = true
      return HttpServerResponse.unsafeJson({ ok: true })
    })
    const guard = Guard.make({
      keyCheck: undefined,
      rateLimit: undefined,
      maxBodyBytes: 1000,
      shutdown: Shutdown.never,
      requests: yield* FiberSet.make<unknown, unknown>(),
      ...options
    })
    // As in the server, the request runs in a fiber of its own (the guard adds it to the set).
    const response = yield* guard(route).pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(request)),
      Effect.fork,
      Effect.flatMap(Fiber.join)
    )
    const body = response.body._tag === "Uint8Array"
      ? JSON.parse(new TextDecoder().decode(response.body.body))
      : undefined
    return { status: response.status, body, reached }
  })

describe("guard", () => {
  it.scoped("a draining server answers 503 shutting_down without running the route", () =>
    Effect.gen(function*() {
      const shutdown = yield* Shutdown.make
      expect((yield* run({ shutdown }, new Request("http://x/v1/records"))).status).toBe(200)
      yield* shutdown.begin
      const refused = yield* run({ shutdown }, new Request("http://x/v1/records"))
      expect(refused).toMatchObject({
        status: 503,
        reached: false,
        body: { _tag: "Unavailable", error: { code: "shutting_down" } }
      })
    }))

  it.scoped("a declared length over the limit is 413 before the route runs", () =>
    Effect.gen(function*() {
      const request = new Request("http://x/v1/requests", {
        method: "POST",
        headers: { "content-length": "5000" },
        body: "x".repeat(5000)
      })
      const refused = yield* run({}, request)
      expect(refused).toMatchObject({ status: 413, reached: false, body: { error: { code: "too_large" } } })
    }))

  it.scoped("with a key: the key opens data routes; public paths need none", () =>
    Effect.gen(function*() {
      const keyCheck = Auth.make(Redacted.make("k"))
      expect((yield* run({ keyCheck }, new Request("http://x/v1/records"))).status).toBe(401)
      const bearer = new Request("http://x/v1/records", { headers: { authorization: "bearer k" } })
      expect((yield* run({ keyCheck }, bearer)).status).toBe(200)
      for (const path of ["/", "/viewer/app.js", "/viewer/config.json"]) {
        expect((yield* run({ keyCheck }, new Request(`http://x${path}`))).status).toBe(200)
      }
      for (const path of ["/docs", "/openapi.json", "/viewer/../v1/records", "/viewerx", "/v1/records?x=/viewer/"]) {
        expect((yield* run({ keyCheck }, new Request(`http://x${path}`))).status).toBe(401)
      }
    }))

  it("keys are compared as SHA-256 digests: equal keys match, any other does not", () => {
    const check = Auth.make(Redacted.make("secret"))
    expect(check.matches("secret")).toBe(true)
    for (const other of ["", "secre", "secret ", "Secret", "secretsecret"]) expect(check.matches(other)).toBe(false)
  })
})
