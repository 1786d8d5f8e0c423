/**
 * The streaming routes as the server mounts them (their events are the
 * streams' own tests): `POST /v1/requests/stream` answers an event stream
 * that ends with `completed`; `GET /v1/records/{id}/events` one that ends
 * with `end`, or 404 JSON for no such record; `POST /v1/chat/completions`
 * a `chat.completion`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { plan, quoteStep } from "../support/Harness.js"
import { post, startAgent } from "./ServerHarness.js"

const script = { plans: [plan([quoteStep("q1")]), plan([quoteStep("q1")])], synthesis: "ACME trades at 100" }

const eventNames = (text: string) => [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1])

describe("the streaming routes, mounted", () => {
  it.scopedLive("POST /v1/requests/stream: text/event-stream from started to completed", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const response = yield* server.fetch("/v1/requests/stream", post({ request: "quote ACME", requestId: "s-1" }))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const names = eventNames(yield* Effect.promise(() => response.text()))
      expect(names[0]).toBe("started")
      expect(names.at(-1)).toBe("completed")
      expect(names).toContain("token")
    }))

  it.scopedLive("GET /v1/records/{id}/events: the record, then end; 404 JSON for no such record", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      expect((yield* server.json("/v1/requests", post({ request: "quote ACME", requestId: "e-1" }))).status).toBe(200)
      const response = yield* server.fetch("/v1/records/e-1/events")
      expect(response.status).toBe(200)
      expect(eventNames(yield* Effect.promise(() => response.text()))).toEqual(["record", "end"])
      const missing = yield* server.json("/v1/records/nope/events")
      expect(missing.status).toBe(404)
      expect(missing.body).toMatchObject({ _tag: "NotFound", error: { type: "not_found_error" } })
    }))

  it.scopedLive("POST /v1/chat/completions: a chat.completion", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { body, status } = yield* server.json(
        "/v1/chat/completions",
        post({ model: "agent", messages: [{ role: "user", content: "quote ACME" }] })
      )
      expect(status).toBe(200)
      expect(body.object).toBe("chat.completion")
      expect(body.choices[0].message.content).toBe("ACME trades at 100")
    }))
})
