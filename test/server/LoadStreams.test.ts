/**
 * Load on loopback (issue 21): 200 concurrent `POST /v1/requests/stream`
 * streams for 30 s — each request's tokens come one every 500 ms — with no
 * lost or reordered events: every stream's ids are contiguous from 1, it
 * starts with `started`, carries every token in order, and ends with its
 * one `completed`. Not a timing assertion: the bound is the test's own
 * timeout (45 s).
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect } from "effect"
import { agentLayer, type ParsedEvent, quoteStep, readSse, serve } from "./support/StreamServer.js"

const streams = 200
const tokenCount = 60
const tokenEvery = Duration.millis(500)

const tokens = Array.from({ length: tokenCount }, (_, i) => `t${i} `)

/**
 * Token `i` of every stream is due at `epoch + (i + 1) * 500 ms`, one clock
 * for all: a stream that opened late (200 requests arriving at once keep
 * the process busy for a few seconds) catches up, and every stream ends at
 * about `epoch + 30 s` — however slow the machine, latency never adds up
 * token after token.
 */
const agentFrom = (epoch: number) =>
  agentLayer({
    script: {
      plan: () => ({ steps: [quoteStep("q1")], terminal: true }),
      tokens: () => tokens,
      beforeToken: (_prompt, index) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sleep(Duration.millis(Math.max(0, epoch + (index + 1) * Duration.toMillis(tokenEvery) - now))))
    }
  })

/** What is wrong with one stream's events, if anything. */
const problems = (requestId: string, events: ReadonlyArray<ParsedEvent>): Array<string> => {
  const out: Array<string> = []
  events.forEach((e, i) => {
    if (e.id !== String(i + 1)) out.push(`${requestId}: event ${i + 1} has id ${e.id}`)
  })
  if (events[0]?.event !== "started") out.push(`${requestId}: first event ${events[0]?.event}`)
  const received = events.filter((e) => e.event === "token").map((e) => (JSON.parse(e.data) as { text: string }).text)
  if (received.join("") !== tokens.join("")) {
    out.push(`${requestId}: tokens ${received.length}/${tokenCount} or out of order`)
  }
  const terminals = events.filter((e) => ["completed", "suspended", "rejected"].includes(e.event))
  if (terminals.length !== 1 || events.at(-1)?.event !== "completed") {
    out.push(`${requestId}: terminal events ${terminals.map((e) => e.event).join(",")}, last ${events.at(-1)?.event}`)
  }
  return out
}

describe("load", () => {
  it.live(
    `${streams} concurrent SSE streams for 30 s: no lost or reordered events`,
    () =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const server = yield* serve(agentFrom(started), { pollInterval: Duration.millis(250) })
        const results = yield* Effect.forEach(
          Array.from({ length: streams }, (_, i) => `load-${i}`),
          (requestId) =>
            Effect.promise(async () => {
              const response = await fetch(`${server.url}/v1/requests/stream`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ request: "quote", requestId })
              })
              const { events } = await readSse(response)
              return { requestId, events }
            }),
          { concurrency: "unbounded" }
        )
        const elapsed = (yield* Clock.currentTimeMillis) - started
        expect(elapsed).toBeGreaterThanOrEqual(Duration.toMillis(tokenEvery) * tokenCount)
        const found = results.flatMap(({ events, requestId }) => problems(requestId, events))
        expect(found.slice(0, 10)).toEqual([])
        const total = results.reduce((n, r) => n + r.events.length, 0)
        expect(total).toBeGreaterThanOrEqual(streams * (tokenCount + 2))
      }).pipe(Effect.scoped),
    45_000
  )
})
