/**
 * Graceful shutdown: closing the server's Scope stops accepting
 * connections and signals draining — an open record event stream ends with
 * its terminal `end` event (reason `shutdown`) — then waits up to
 * `drainTimeout` for the requests in flight, and interrupts what is left.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import { Agent, CheckpointStore, ExecutionRecord, ExecutionStore, ToolRegistry } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import { NAMESPACE, StockQuote } from "../../examples/shared/DemoTools.js"
import { plan, quoteStep } from "../support/Harness.js"
import { post, type Running, start } from "./ServerHarness.js"

/** Starts `server` over `services` in a Scope of its own, so the test closes it. */
const startClosable = <E1, E2, R>(
  server: Layer.Layer<import("@effect/platform").HttpServer.HttpServer, E1, R>,
  services: Layer.Layer<R, E2>
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const running = yield* start(server, services).pipe(Scope.extend(scope))
    return { running, close: Scope.close(scope, Exit.void) }
  })

/** Reads a response body as text chunks until it ends; returns the text. */
const readAll = (response: Response, onChunk: (text: string) => void) =>
  Effect.promise(async () => {
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return text
      text += decoder.decode(value, { stream: true })
      onChunk(text)
    }
  })

const refused = (server: Running) =>
  Effect.promise(() => fetch(`${server.url}/v1/records`).then(() => false, () => true))

describe("graceful shutdown", () => {
  it.live(
    "an open record event stream ends with `end` (reason shutdown); new connections are refused",
    () =>
      Effect.gen(function*() {
        const store = yield* Layer.build(ExecutionStore.layerMemory())
        yield* Effect.orDie(
          Context.get(store, ExecutionStore.ExecutionStore).create(
            Schema.decodeUnknownSync(ExecutionRecord.ExecutionRecord)({
              schemaVersion: 1,
              requestId: "live",
              request: "still running",
              lifecycle: { status: "running", startedAt: Date.now() }
            })
          )
        )
        const { close, running: server } = yield* startClosable(
          AgentServer.layer({ port: 0, readOnly: true, rateLimit: false, drainTimeout: "5 seconds" }),
          Layer.merge(Layer.succeedContext(store), CheckpointStore.layerMemory)
        )
        const response = yield* server.fetch("/v1/records/live/events")
        expect(response.status).toBe(200)
        const firstRecord = yield* Deferred.make<void>()
        const body = yield* Effect.fork(readAll(response, (text) => {
          if (text.includes("event: record")) Deferred.unsafeDone(firstRecord, Exit.void)
        }))
        yield* Deferred.await(firstRecord)
        const started = Date.now()
        yield* close
        expect(Date.now() - started).toBeLessThan(4000)
        const text = yield* Fiber.join(body)
        const events = text.split("\n\n").filter((frame) => frame.includes("event:"))
        expect(events.at(-1)).toContain("event: end")
        expect(events.at(-1)).toContain(`"reason":"shutdown"`)
        expect(yield* refused(server)).toBe(true)
      }).pipe(Effect.scoped),
    20_000
  )

  it.live(
    "a request still running after drainTimeout is interrupted, and the close does not wait for it",
    () =>
      Effect.gen(function*() {
        const entered = yield* Deferred.make<void>()
        const stuckQuote = ToolRegistry.entry({
          namespace: NAMESPACE,
          agent: "stock-service",
          tool: StockQuote,
          handler: () => Effect.zipRight(Deferred.succeed(entered, undefined), Effect.never)
        })
        const agent = Agent.layerTest({
          tools: [stuckQuote],
          script: { plans: [plan([quoteStep("q1")])], synthesis: "never" },
          options: { toolTimeout: "1 hour" }
        })
        const { close, running: server } = yield* startClosable(
          AgentServer.layer({ port: 0, rateLimit: false, drainTimeout: "300 millis" }),
          agent
        )
        const answer = yield* Effect.fork(
          Effect.promise(() =>
            fetch(`${server.url}/v1/requests`, post({ request: "quote ACME", requestId: "stuck" })).then(
              (r) => r.status,
              () => "connection closed"
            )
          )
        )
        yield* Deferred.await(entered)
        const started = Date.now()
        yield* close
        const took = Date.now() - started
        expect(took).toBeGreaterThanOrEqual(250)
        expect(took).toBeLessThan(5000)
        const outcome = yield* Fiber.join(answer)
        expect(outcome === "connection closed" || (typeof outcome === "number" && outcome >= 500)).toBe(true)
        expect(yield* refused(server)).toBe(true)
      }).pipe(Effect.scoped),
    20_000
  )
})
