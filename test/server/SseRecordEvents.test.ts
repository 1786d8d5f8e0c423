/**
 * `GET /v1/records/{id}/events` over a real socket (issue 21): a running
 * request's record (its tool held in flight on a `Deferred`) is sent at
 * once, again as it changes — the running record reaches the in-memory
 * store while the request runs — then `end` with the final status; 404
 * JSON for an unknown id; a finished record is one `record` and `end`; a
 * draining server ends the stream with `end` `reason: "shutdown"`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import type { ExecutionRecord } from "effect-agent-pipeline"
import { agentLayer, type ParsedEvent, quoteStep, readSse, serve } from "./support/StreamServer.js"

const dataOf = (event: ParsedEvent): unknown => JSON.parse(event.data)

const heldAgent = (held: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  agentLayer({
    script: { plan: () => ({ steps: [quoteStep("q1")], terminal: true }), tokens: () => ["done"] },
    hold: () => Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release))
  })

const events = (url: string, id: string) => fetch(`${url}/v1/records/${encodeURIComponent(id)}/events`)

describe("GET /v1/records/{id}/events", () => {
  it.live("a running request: record at once, then its changes, then end", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const server = yield* serve(heldAgent(held, release))
      const request = yield* Effect.fork(server.pipeline.process({ request: "quote", requestId: "e-1" }))
      yield* Deferred.await(held)
      const response = yield* Effect.promise(() => events(server.url, "e-1"))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const { events: all } = yield* Effect.promise(() =>
        readSse(response, (event) => {
          const record = event.event === "record"
            ? (dataOf(event) as ExecutionRecord.ExecutionRecordEncoded)
            : undefined
          // Released once the store shows the tool in flight: the running record was written.
          if (record?.phases?.[0]?.running?.includes("q1") === true) {
            Effect.runFork(Deferred.succeed(release, undefined))
          }
        })
      )
      yield* Fiber.join(request)
      expect(all.map((e) => e.id)).toEqual(all.map((_, i) => String(i + 1)))
      const names = all.map((e) => e.event)
      expect(names.at(-1)).toBe("end")
      expect(names.slice(0, -1).every((n) => n === "record")).toBe(true)
      const records = all.filter((e) => e.event === "record").map((e) =>
        dataOf(e) as ExecutionRecord.ExecutionRecordEncoded
      )
      expect(records.length).toBeGreaterThanOrEqual(2)
      expect(records[0]?.lifecycle?.status).toBe("running")
      expect(records.some((r) => r.phases?.[0]?.running?.includes("q1") === true)).toBe(true)
      // Revisions only grow; the last record is the finished one.
      const revisions = records.map((r) => r.record_revision ?? 0)
      expect([...revisions].sort((a, b) => a - b)).toEqual(revisions)
      expect(new Set(revisions).size).toBe(revisions.length)
      expect(records.at(-1)?.lifecycle?.status).toBe("succeeded")
      expect(dataOf(all.at(-1)!)).toEqual({ status: "succeeded" })
    }).pipe(Effect.scoped))

  it.live("a finished record: one record event, then end", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      yield* Deferred.succeed(release, undefined)
      const server = yield* serve(heldAgent(held, release))
      yield* server.pipeline.process({ request: "quote", requestId: "e-done" })
      const { events: all } = yield* Effect.promise(() => events(server.url, "e-done").then((r) => readSse(r)))
      expect(all.map((e) => e.event)).toEqual(["record", "end"])
      expect((dataOf(all[0]!) as ExecutionRecord.ExecutionRecordEncoded).requestId).toBe("e-done")
      expect(dataOf(all[1]!)).toEqual({ status: "succeeded" })
    }).pipe(Effect.scoped))

  it.live("an unknown id is a 404 NotFound JSON body", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const server = yield* serve(heldAgent(held, held))
      const response = yield* Effect.promise(() => events(server.url, "nope"))
      expect(response.status).toBe(404)
      expect(response.headers.get("content-type")).toContain("application/json")
      const body = (yield* Effect.promise(() => response.json())) as { _tag: string; error: { code: string } }
      expect(body).toMatchObject({ _tag: "NotFound", error: { type: "not_found_error", code: "not_found" } })
    }).pipe(Effect.scoped))

  it.live("a draining server ends a running record's stream with end: shutdown", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const server = yield* serve(heldAgent(held, release))
      const request = yield* Effect.fork(server.pipeline.process({ request: "quote", requestId: "e-drain" }))
      yield* Deferred.await(held)
      const response = yield* Effect.promise(() => events(server.url, "e-drain"))
      const { events: all } = yield* Effect.promise(() =>
        readSse(response, (event) => {
          if (event.event === "record") Effect.runFork(server.drain)
        })
      )
      expect(all.map((e) => e.event)).toEqual(["record", "end"])
      expect(dataOf(all[1]!)).toEqual({ status: "running", reason: "shutdown" })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(request)
    }).pipe(Effect.scoped))
})
