/**
 * `GET /v1/requests/{id}/progress` served by `AgentServer` over a real
 * socket (issue 23): a running request's progress live (a held tool's
 * `ToolStarted` arrives while it is held), then `end`; a finished
 * request's progress replayed, then `end`; an unknown id is 404 JSON.
 * Ids count from 1 as on every stream. And `POST /v1/requests/stream`'s
 * `progress` comes from the same live feed (its wire shape unchanged).
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber } from "effect"
import { Hook } from "effect-agent-pipeline"
import { agentLayer, type ParsedEvent, quoteStep, readSse, serve } from "./support/StreamServer.js"

const dataOf = (event: ParsedEvent): { readonly _tag?: string; readonly [k: string]: unknown } => JSON.parse(event.data)

const labels = (events: ReadonlyArray<ParsedEvent>) =>
  events.map((e) => (e.event === "progress" ? String(dataOf(e)._tag) : e.event))

const agent = (hold?: () => Effect.Effect<void>) =>
  agentLayer({
    script: { plan: () => ({ steps: [quoteStep("q1")], terminal: true }), tokens: () => ["ok"] },
    ...(hold === undefined ? {} : { hold }),
    hooks: [Hook.make({ name: "note", beforePlanning: () => Effect.void })]
  })

const process = (url: string, requestId: string) =>
  fetch(`${url}/v1/requests`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ request: "quote", requestId })
  })

describe("GET /v1/requests/{id}/progress", () => {
  it.live("a running request: its progress so far, the tool's start while it runs, then the rest and end", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // Store polls every 10 s could not show the tool in flight in time: this is the live recorder.
      const server = yield* serve(
        agent(() => Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release))),
        { pollInterval: "10 seconds" }
      )
      const request = yield* Effect.fork(Effect.promise(() => process(server.url, "pr-live")))
      yield* Deferred.await(held)
      const response = yield* Effect.promise(() => fetch(`${server.url}/v1/requests/pr-live/progress`))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      let seenWhileHeld: ReadonlyArray<string> = []
      const { events } = yield* Effect.promise(() =>
        readSse(response, (event, all) => {
          if (event.event === "progress" && dataOf(event)._tag === "ToolStarted") {
            seenWhileHeld = labels(all)
            Effect.runFork(Deferred.succeed(release, undefined))
          }
        })
      )
      expect(seenWhileHeld).toEqual(["HookStarted", "HookEnded", "PhaseStarted", "ToolStarted"])
      expect((yield* Fiber.join(request)).status).toBe(200)
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)))
      const all = labels(events)
      expect(all.slice(0, 4)).toEqual(seenWhileHeld)
      expect(all.indexOf("ToolEnded")).toBeGreaterThan(all.indexOf("ToolStarted"))
      expect(all.at(-1)).toBe("end")
      expect(dataOf(events.at(-1)!)).toEqual({ status: "succeeded" })
      const started = events.find((e) => e.event === "progress" && dataOf(e)._tag === "ToolStarted")!
      expect(dataOf(started)).toEqual({
        _tag: "ToolStarted",
        phase: 1,
        stepId: "q1",
        namespace: "test-tools",
        agent: "quotes",
        capability: "quote",
        message: "Running tool quote (step q1)"
      })
    }).pipe(Effect.scoped))

  it.live("a finished request: its progress replayed from the record, then end", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent())
      expect((yield* Effect.promise(() => process(server.url, "pr-done"))).status).toBe(200)
      const response = yield* Effect.promise(() => fetch(`${server.url}/v1/requests/pr-done/progress`))
      const { events } = yield* Effect.promise(() => readSse(response))
      const all = labels(events)
      expect(all.slice(0, 4)).toEqual(["HookStarted", "HookEnded", "PhaseStarted", "ToolStarted"])
      expect(all).toContain("ToolEnded")
      expect(all.filter((l) => l === "end")).toHaveLength(1)
      expect(all.at(-1)).toBe("end")
      expect(dataOf(events.at(-1)!)).toEqual({ status: "succeeded" })
      for (const e of events.filter((e) => e.event === "progress")) {
        expect(dataOf(e).message).toEqual(expect.any(String))
      }
    }).pipe(Effect.scoped))

  it.live("an unknown id: 404 with the API's error body", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent())
      const response = yield* Effect.promise(() => fetch(`${server.url}/v1/requests/nope/progress`))
      expect(response.status).toBe(404)
      expect(response.headers.get("content-type")).toContain("application/json")
      const body = yield* Effect.promise(() => response.json())
      expect(body).toEqual({
        _tag: "NotFound",
        error: { type: "not_found_error", code: "not_found", message: "no execution record for request nope" }
      })
    }).pipe(Effect.scoped))

  it.live("POST /v1/requests/stream: progress comes live from the recorder (store polls every 10 s)", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const server = yield* serve(
        agent(() => Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release))),
        { pollInterval: Duration.seconds(10) }
      )
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/requests/stream`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ request: "quote", requestId: "pr-post" })
        })
      )
      let seenWhileHeld: ReadonlyArray<unknown> = []
      const { events } = yield* Effect.promise(() =>
        readSse(response, (event, all) => {
          if (event.event === "progress" && dataOf(event)["kind"] === "tool_started") {
            seenWhileHeld = all.filter((e) => e.event === "progress").map(dataOf)
            Effect.runFork(Deferred.succeed(release, undefined))
          }
        })
      )
      expect(yield* Deferred.isDone(held)).toBe(true)
      // The wire shape of issue 21: one hook_run for a run recorded ended, no `message`.
      expect(seenWhileHeld).toEqual([
        { kind: "hook_run", invocation: 0, hookName: "note", stage: "before_planning", status: "completed" },
        { kind: "phase", phase: 1 },
        { kind: "tool_started", phase: 1, stepId: "q1", namespace: "test-tools", agent: "quotes", capability: "quote" }
      ])
      const names = events.map((e) => (e.event === "progress" ? String(dataOf(e)["kind"]) : e.event))
      expect(names.indexOf("tool_ended")).toBeGreaterThan(names.indexOf("tool_started"))
      expect(names.at(-1)).toBe("completed")
    }).pipe(Effect.scoped))
})
