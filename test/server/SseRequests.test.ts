/**
 * `POST /v1/requests/stream` served by `AgentServer` over a real socket (issue 21), parsed by
 * `@effect/experimental`'s SSE parser: `started`, tokens and progress, then
 * one terminal event; suspended and rejected terminals; a bad body refused
 * as JSON before any stream; a client that disconnects interrupts its
 * request; keep-alive comments while a request is silent.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect } from "effect"
import { Hook } from "effect-agent-pipeline"
import {
  agentLayer,
  type ParsedEvent,
  quoteStep,
  readSse,
  serve,
  serveMounted,
  settledRecord,
  tradeStep
} from "./support/StreamServer.js"

const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${url}/v1/requests/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })

const dataOf = (event: ParsedEvent): unknown => JSON.parse(event.data)

/** A plan per request text: `trade` → a trade (suspends), `fail` → no valid plan, else one quote. */
const planFor = (prompt: string): unknown =>
  prompt.includes("buy ACME")
    ? { steps: [tradeStep("t1")], terminal: true }
    : prompt.includes("unplannable")
    ? "not a plan"
    : { steps: [quoteStep("q1")], terminal: true }

const tokens = ["Quote ", "for ", "ACME: ", "42"]

const basicAgent = agentLayer({ script: { plan: planFor, tokens: () => tokens } })

describe("POST /v1/requests/stream", () => {
  it.live("started, tokens and progress, then exactly one completed; ids count from 1", () =>
    Effect.gen(function*() {
      const server = yield* serve(basicAgent)
      const response = yield* Effect.promise(() => post(server.url, { request: "quote ACME", requestId: "s-1" }))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const { events } = yield* Effect.promise(() => readSse(response))
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)))
      expect(events[0]?.event).toBe("started")
      expect(dataOf(events[0]!)).toEqual({ requestId: "s-1" })
      const names = events.map((e) => e.event)
      expect(names.filter((n) => n === "completed")).toHaveLength(1)
      expect(names.at(-1)).toBe("completed")
      const texts = events.filter((e) => e.event === "token").map((e) => (dataOf(e) as { text: string }).text)
      expect(texts).toEqual(tokens)
      const progress = events.filter((e) => e.event === "progress").map((e) => dataOf(e) as { kind: string })
      // The tool ran and ended, and the stage hooks' runs are reported — even those after the last token.
      expect(progress).toContainEqual({ kind: "phase", phase: 1 })
      expect(progress).toContainEqual({
        kind: "tool_started",
        phase: 1,
        stepId: "q1",
        namespace: "test-tools",
        agent: "quotes",
        capability: "quote"
      })
      expect(progress.find((p) => p.kind === "tool_ended")).toMatchObject({ stepId: "q1", status: "succeeded" })
      const started = progress.findIndex((p) => p.kind === "tool_started")
      const ended = progress.findIndex((p) => p.kind === "tool_ended")
      expect(started).toBeLessThan(ended)
      const completed = dataOf(events.at(-1)!) as { _tag: string; response: { response: string; requestId: string } }
      expect(completed._tag).toBe("Completed")
      expect(completed.response).toMatchObject({ requestId: "s-1", response: tokens.join("") })
      const record = yield* settledRecord(server.store, "s-1")
      expect(record.lifecycle?.status).toBe("succeeded")
    }).pipe(Effect.scoped))

  it.live("progress arrives while the request runs: a tool in flight is reported before it ends", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const agent = agentLayer({
        script: { plan: planFor, tokens: () => tokens },
        hold: () => Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release)),
        hooks: [Hook.make({ name: "note", beforePlanning: () => Effect.void })]
      })
      const server = yield* serve(agent)
      const response = yield* Effect.promise(() => post(server.url, { request: "quote", requestId: "s-live" }))
      let seenWhileHeld: ReadonlyArray<string> = []
      const reading = Effect.promise(() =>
        readSse(response, (event, all) => {
          if (event.event === "progress" && (dataOf(event) as { kind: string }).kind === "tool_started") {
            seenWhileHeld = all.map((e) => e.event === "progress" ? (dataOf(e) as { kind: string }).kind : e.event)
            Effect.runFork(Deferred.succeed(release, undefined))
          }
        })
      )
      const { events } = yield* reading
      yield* Deferred.await(held)
      // Seen before the tool was released: the running record reached the store and the stream.
      expect(seenWhileHeld).toEqual(["started", "hook_run", "phase", "tool_started"])
      const kinds = events.map((e) => e.event === "progress" ? (dataOf(e) as { kind: string }).kind : e.event)
      expect(kinds.slice(0, 4)).toEqual(seenWhileHeld)
      // Tokens are sent as they come; progress follows the record's writes (at most every
      // 500 ms while it changes), so the tool's end may come after the first tokens — never after the end.
      expect(kinds.indexOf("tool_ended")).toBeGreaterThan(kinds.indexOf("tool_started"))
      expect(kinds.indexOf("tool_ended")).toBeLessThan(kinds.indexOf("completed"))
      expect(kinds.at(-1)).toBe("completed")
      // Each change is reported once.
      expect(kinds.filter((k) => k === "tool_started")).toHaveLength(1)
      expect(kinds.filter((k) => k === "hook_run")).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.live("a fresh requestId when the body has none", () =>
    Effect.gen(function*() {
      const server = yield* serve(basicAgent)
      const response = yield* Effect.promise(() => post(server.url, { request: "quote ACME" }))
      const { events } = yield* Effect.promise(() => readSse(response))
      const { requestId } = dataOf(events[0]!) as { requestId: string }
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
      expect((yield* settledRecord(server.store, requestId)).mode).toBe("stream")
    }).pipe(Effect.scoped))

  it.live("a suspension ends with one suspended event carrying the checkpoint", () =>
    Effect.gen(function*() {
      const server = yield* serve(basicAgent)
      const response = yield* Effect.promise(() => post(server.url, { request: "buy ACME", requestId: "s-susp" }))
      const { events } = yield* Effect.promise(() => readSse(response))
      expect(events.map((e) => e.event).filter((n) => n !== "progress")).toEqual(["started", "suspended"])
      const suspended = dataOf(events.at(-1)!) as {
        _tag: string
        requestId: string
        checkpoint: { checkpointId: string; planDigest: string }
      }
      expect(suspended._tag).toBe("Suspended")
      expect(suspended.requestId).toBe("s-susp")
      expect(suspended.checkpoint.planDigest).toMatch(/\S/)
      expect((yield* settledRecord(server.store, "s-susp")).lifecycle?.status).toBe("suspended")
    }).pipe(Effect.scoped))

  it.live("a request the agent cannot serve ends with one rejected event: status and ApiError body", () =>
    Effect.gen(function*() {
      const server = yield* serve(basicAgent)
      const response = yield* Effect.promise(() => post(server.url, { request: "unplannable", requestId: "s-rej" }))
      expect(response.status).toBe(200)
      const { events } = yield* Effect.promise(() => readSse(response))
      expect(events[0]?.event).toBe("started")
      expect(events.at(-1)?.event).toBe("rejected")
      expect(events.filter((e) => e.event === "rejected")).toHaveLength(1)
      const rejected = dataOf(events.at(-1)!) as { status: number; _tag: string; error: { code: string } }
      expect(rejected.status).toBe(422)
      expect(rejected._tag).toBe("Unprocessable")
      expect(rejected.error.code).toMatch(/^planning_/)
      expect((yield* settledRecord(server.store, "s-rej")).lifecycle?.status).toBe("failed")
    }).pipe(Effect.scoped))

  it.live("a bad body is a 400 JSON ApiError before any stream; a used requestId is 409", () =>
    Effect.gen(function*() {
      const server = yield* serve(basicAgent)
      for (const body of [{ request: "" }, { request: "x", extra: 1 }, { request: "x", requestId: "a/b" }, [1]]) {
        const response = yield* Effect.promise(() => post(server.url, body))
        expect(response.status).toBe(400)
        expect(response.headers.get("content-type")).toContain("application/json")
        const json = (yield* Effect.promise(() => response.json())) as { _tag: string; error: { type: string } }
        expect(json._tag).toBe("BadRequest")
        expect(json.error.type).toBe("invalid_request_error")
      }
      // The stream function decodes by itself too (a caller that mounts it without AgentServer's body reader).
      const mounted = yield* serveMounted(basicAgent, { keepAlive: Duration.seconds(15) })
      for (const body of [{ request: "" }, { request: "x", extra: 1 }, { request: "x", requestId: "a/b" }, [1]]) {
        const response = yield* Effect.promise(() => post(mounted.url, body))
        expect(response.status).toBe(400)
        const json = (yield* Effect.promise(() => response.json())) as { _tag: string; error: { code: string } }
        expect(json._tag).toBe("BadRequest")
      }
      const first = yield* Effect.promise(() => post(server.url, { request: "quote", requestId: "s-dup" }))
      yield* Effect.promise(() => readSse(first))
      const again = yield* Effect.promise(() => post(server.url, { request: "quote", requestId: "s-dup" }))
      expect(again.status).toBe(409)
      expect(((yield* Effect.promise(() => again.json())) as { _tag: string })._tag).toBe("Conflict")
    }).pipe(Effect.scoped))

  it.live("a client that disconnects interrupts its request: the record ends interrupted", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const agent = agentLayer({
        script: {
          plan: planFor,
          tokens: () => tokens,
          // The first token goes out; the next waits for a release that never comes.
          beforeToken: (_prompt, index) => (index === 0 ? Effect.void : Deferred.await(release))
        }
      })
      const server = yield* serve(agent)
      const controller = new AbortController()
      const response = yield* Effect.promise(() =>
        post(server.url, { request: "quote", requestId: "s-gone" }, controller.signal)
      )
      yield* Effect.promise(() =>
        readSse(response, (event) => {
          if (event.event === "token") controller.abort()
        }).catch(() => undefined)
      )
      const record = yield* settledRecord(server.store, "s-gone")
      expect(record.lifecycle?.status).toBe("interrupted")
      expect(record.deliveredText).toBe("Quote ")
    }).pipe(Effect.scoped))

  it.live("keep-alive comments while the request is silent", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const agent = agentLayer({
        script: { plan: planFor, tokens: () => tokens, beforeToken: () => Deferred.await(release) }
      })
      // AgentServer's keep-alive period is 15 s: the functions on a bare router, with 100 ms.
      const server = yield* serveMounted(agent, { keepAlive: Duration.millis(100) })
      const response = yield* Effect.promise(() => post(server.url, { request: "quote", requestId: "s-idle" }))
      yield* Effect.fork(Effect.delay(Deferred.succeed(release, undefined), Duration.millis(450)))
      const { events, raw } = yield* Effect.promise(() => readSse(response))
      const comments = raw.split("\n\n").filter((frame) => frame === ": keep-alive").length
      expect(comments).toBeGreaterThanOrEqual(2)
      // Comments are invisible to a parser: the events are whole and numbered without gaps.
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)))
      expect(events.at(-1)?.event).toBe("completed")
    }).pipe(Effect.scoped))
})
