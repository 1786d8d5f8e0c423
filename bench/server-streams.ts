/**
 * What an open SSE stream costs the server (issue 21): `AgentServer` over
 * an agent whose synthesis sends one token and then waits at a gate, so
 * streams stay open; the clients run in a child process (their memory is
 * not counted). Three measurements, each with 200 open streams, after
 * forced collections, as heap and RSS growth divided by 200:
 *
 * - a running request (no stream), the baseline the others include;
 * - `GET /v1/records/{id}/events` watching one of those running requests;
 * - `POST /v1/requests/stream`: a streamed request and its SSE stream.
 *
 * Then throughput: the gate opens, each of the 200 streamed requests sends
 * its remaining tokens as fast as it can, and the clients count the events
 * they receive per second.
 *
 *   node --expose-gc --import tsx bench/server-streams.ts
 *
 * Not a test: heap figures move by a few percent between runs, and the
 * clients share the machine's cores with the server.
 */
import { Tool } from "@effect/ai"
import { HttpServer } from "@effect/platform"
import { Deferred, Effect, FiberId, Layer, ManagedRuntime, Schema, Stream } from "effect"
import { fork } from "node:child_process"
import { Agent, ModelProvider, Pipeline, ToolRegistry } from "../src/index.js"
import * as AgentServer from "../src/server/AgentServer.js"

const STREAMS = Number(process.env.BENCH_STREAMS ?? 200)
const TOKENS = Number(process.env.BENCH_TOKENS ?? 200)

/** The child: opens `count` streams at `path`, reports when each saw `openedBy`, then counts events to the end. */
const client = async (url: string, mode: "events" | "stream", count: number, ids: ReadonlyArray<string>) => {
  const send = (message: unknown) => process.send?.(message)
  let opened = 0
  let events = 0
  let started = 0
  process.on("message", (message) => {
    if (message === "go") started = Date.now()
  })
  const one = async (i: number) => {
    const response = mode === "events"
      ? await fetch(`${url}/v1/records/${ids[i]}/events`)
      : await fetch(`${url}/v1/requests/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ request: "quote", requestId: ids[i] })
      })
    let seen = false
    let buffer = ""
    const decoder = new TextDecoder()
    for await (const chunk of response.body ?? []) {
      buffer += decoder.decode(chunk, { stream: true })
      let end = buffer.indexOf("\n\n")
      while (end >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        end = buffer.indexOf("\n\n")
        if (!frame.startsWith("id:")) continue
        events++
        const opening = mode === "events" ? frame.includes("event: record") : frame.includes("event: token")
        if (!seen && opening) {
          seen = true
          if (++opened === count) send({ opened })
        }
      }
    }
  }
  await Promise.all(Array.from({ length: count }, (_, i) => one(i)))
  send({ done: true, events, ms: Date.now() - (started || Date.now()) })
}

if (process.argv[2] === "client") {
  const [, , , url, mode, ids] = process.argv
  const list = (ids ?? "").split(",")
  await client(url ?? "", mode === "events" ? "events" : "stream", list.length, list)
  process.exit(0)
}

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc")

const Quote = Tool.make("quote", { parameters: { symbol: Schema.String }, success: Schema.Number })
const tools = [
  ToolRegistry.entry({ namespace: "bench", agent: "q", tool: Quote, handler: () => Effect.succeed(42) })
]
const plan = JSON.stringify({
  steps: [{ step_id: "s1", namespace: "bench", agent: "q", capability: "quote", parameters: { symbol: "A" } }],
  terminal: true
})

// The gate the synthesis waits at after its first token; replaced per measurement.
let gate = Deferred.unsafeMake<void>(FiberId.none)

const model = ModelProvider.layer(ModelProvider.make({
  generateText: (options) =>
    Effect.succeed([
      { type: "text", text: options.responseFormat.type === "json" ? plan : "done" },
      { type: "finish", reason: "stop", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }
    ]),
  streamText: () =>
    Stream.suspend(() => {
      const held = gate
      const delta = (i: number) => ({ type: "text-delta" as const, id: "t", delta: `token ${i} ` })
      return Stream.make({ type: "text-start" as const, id: "t" }, delta(0)).pipe(
        Stream.concat(Stream.fromEffect(Deferred.await(held)).pipe(Stream.drain)),
        Stream.concat(Stream.fromIterable(Array.from({ length: TOKENS - 1 }, (_, i) => delta(i + 1)))),
        Stream.concat(Stream.make({ type: "text-end" as const, id: "t" }, {
          type: "finish" as const,
          reason: "stop" as const,
          usage: { inputTokens: 1, outputTokens: TOKENS, totalTokens: TOKENS + 1 }
        }))
      )
    })
}))

const agent = Agent.layer({ model, tools })
const runtime = ManagedRuntime.make(AgentServer.layer({ port: 0, rateLimit: false }).pipe(Layer.provideMerge(agent)))
const server = await runtime.runPromise(HttpServer.HttpServer)
const url = server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : ""
const pipeline = await runtime.runPromise(Pipeline.Pipeline)

const memory = () => {
  for (let i = 0; i < 4; i++) gc()
  const { heapUsed, rss } = process.memoryUsage()
  return { heapUsed, rss }
}

/** Starts the clients; resolves once every stream is open, with a function that lets them finish. */
const clients = (mode: "events" | "stream", ids: ReadonlyArray<string>) =>
  new Promise<{ readonly finish: () => Promise<{ events: number; ms: number }> }>((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ["client", url, mode, ids.join(",")], {
      execArgv: ["--import", "tsx"]
    })
    let done: ((r: { events: number; ms: number }) => void) | undefined
    child.on("message", (message: { opened?: number; done?: boolean; events: number; ms: number }) => {
      if (message.opened !== undefined) {
        resolve({
          finish: () =>
            new Promise((r) => {
              done = r
              child.send("go")
            })
        })
      }
      if (message.done === true) done?.({ events: message.events, ms: message.ms })
    })
    child.on("error", reject)
  })

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
const per = (after: { heapUsed: number; rss: number }, before: { heapUsed: number; rss: number }) =>
  `heap ${kib((after.heapUsed - before.heapUsed) / STREAMS)}, RSS ${kib((after.rss - before.rss) / STREAMS)}`

// Warm-up: the code paths compiled before anything is measured.
gate = Deferred.unsafeMake<void>(FiberId.none)
await runtime.runPromise(Deferred.succeed(gate, undefined))
for (let i = 0; i < 50; i++) {
  await runtime.runPromise(pipeline.process({ request: "warm", requestId: `warm-${i}` }))
  await fetch(`${url}/v1/requests/stream`, { method: "POST", body: JSON.stringify({ request: "warm" }) }).then((r) =>
    r.text()
  )
}

// 1. Running requests, no stream: they wait at the gate (a streamed request reaches synthesis).
gate = Deferred.unsafeMake<void>(FiberId.none)
const baseline = memory()
const held = Array.from({ length: STREAMS }, (_, i) => `held-${i}`)
const running = held.map((requestId) =>
  runtime.runPromise(Stream.runDrain(pipeline.stream({ request: "quote", requestId })))
)
await new Promise((r) => setTimeout(r, 1500))
const withRequests = memory()
console.log(`${STREAMS} running requests (no SSE): ${per(withRequests, baseline)} per request`)

// 2. Record event streams on them.
const watchers = await clients("events", held)
await new Promise((r) => setTimeout(r, 500))
const withWatchers = memory()
console.log(`+ ${STREAMS} GET /v1/records/{id}/events streams: ${per(withWatchers, withRequests)} per stream`)
const releasedFirst = gate
await runtime.runPromise(Deferred.succeed(releasedFirst, undefined))
await Promise.all(running)
await watchers.finish()

// 3. Streamed requests over SSE, each held at its first token.
gate = Deferred.unsafeMake<void>(FiberId.none)
const before = memory()
const streamed = Array.from({ length: STREAMS }, (_, i) => `sse-${i}`)
const streams = await clients("stream", streamed)
await new Promise((r) => setTimeout(r, 500))
const withStreams = memory()
console.log(`${STREAMS} POST /v1/requests/stream streams (request included): ${per(withStreams, before)} per stream`)

// 4. Throughput: every stream sends its remaining tokens, then its terminal event.
const finishing = streams.finish()
await runtime.runPromise(Deferred.succeed(gate, undefined))
const { events, ms } = await finishing
console.log(
  `throughput: ${events} events over ${STREAMS} streams in ${ms} ms = ${Math.round((events / ms) * 1000)} events/s`
)

await runtime.dispose()
