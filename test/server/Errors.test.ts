/**
 * Failures the handlers do not expect: a defect is 500 `internal` whose
 * body never carries the defect's text (it is logged); a store failure is
 * 503 `store_failed` naming the store operation but not its cause; the
 * platform's decode errors (path, query) come out in the stable body too.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { CheckpointStore, ExecutionStore } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import { post, start, startAgent } from "./ServerHarness.js"

const secret = "postgres://admin:hunter2@db.internal"

const brokenStore = (list: ExecutionStore.ExecutionStore.Service["list"]) =>
  Layer.merge(
    Layer.effect(
      ExecutionStore.ExecutionStore,
      Effect.map(
        ExecutionStore.makeMemory(),
        (memory) => ({ ...memory, list, get: () => Effect.succeed(Option.none()) })
      )
    ),
    CheckpointStore.layerMemory
  )

describe("unexpected failures", () => {
  it.scopedLive("a defect: 500 InternalError with a body that says nothing of it", () =>
    Effect.gen(function*() {
      const server = yield* start(
        AgentServer.layerViewer({ port: 0, rateLimit: false }),
        brokenStore(() => Effect.die(new Error(`connection to ${secret} lost`)))
      )
      const { body, status } = yield* server.json("/v1/records")
      expect(status).toBe(500)
      expect(body).toEqual({
        _tag: "InternalError",
        error: { type: "server_error", code: "internal", message: expect.any(String) }
      })
      expect(JSON.stringify(body)).not.toContain("hunter2")
      expect(JSON.stringify(body)).not.toContain("connection")
    }))

  it.scopedLive("a store failure: 503 store_failed, without the store's detail", () =>
    Effect.gen(function*() {
      const server = yield* start(
        AgentServer.layerViewer({ port: 0, rateLimit: false }),
        brokenStore(() => Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "list", detail: secret })))
      )
      const { body, status } = yield* server.json("/v1/records")
      expect(status).toBe(503)
      expect(body).toMatchObject({ _tag: "Unavailable", error: { type: "unavailable_error", code: "store_failed" } })
      expect(body.error.message).toContain("list")
      expect(JSON.stringify(body)).not.toContain("hunter2")
    }))

  it.scopedLive("a chat body that does not match its Schema: 400 malformed naming the field", () =>
    Effect.gen(function*() {
      const server = yield* startAgent({ plans: [], synthesis: "x" })
      const { body, status } = yield* server.json(
        "/v1/chat/completions",
        post({ model: "m", messages: [{ role: "user", content: 42 }] })
      )
      expect(status).toBe(400)
      expect(body).toMatchObject({ _tag: "BadRequest", error: { code: "malformed" } })
      expect(body.error.param).toMatch(/^messages\.0/)
      const notJson = yield* server.json("/v1/chat/completions", post("nope"))
      expect(notJson.status).toBe(400)
      expect(notJson.body.error.code).toBe("malformed")
    }))

  it.scopedLive("the streaming route refuses a bad body with a JSON error before any event", () =>
    Effect.gen(function*() {
      const server = yield* startAgent({ plans: [], synthesis: "x" })
      const { body, headers, status } = yield* server.json("/v1/requests/stream", post({ request: 1 }))
      expect(status).toBe(400)
      expect(headers.get("content-type")).toContain("application/json")
      expect(body.error).toMatchObject({ code: "malformed", param: "request" })
    }))
})
