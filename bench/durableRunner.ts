/**
 * One runner process of the durable throughput bench (`durable.ts`):
 * `node --import tsx bench/durableRunner.ts '<command JSON>'`. A PostgreSQL
 * socket runner (its own port, the deployment's shared prefix) with the
 * bench's agent, its stores in PostgreSQL. It prints `{"ev":"ready"}` once
 * its engine is up, waits for a `go` line on stdin, then processes its
 * share of the requests (`<requestPrefix>-<i>` for `i % runners === index`)
 * as durable requests, `inFlight` at a time, printing `{"ev":"done"}` with
 * each one's end; a request may run on any runner (its shard's owner). A
 * `stop` line (or stdin closing) ends the process.
 */
import { Cause, Effect, Exit, Layer } from "effect"
import * as readline from "node:readline"
import * as DurablePipeline from "../src/durable/DurablePipeline.js"
import * as Postgres from "../src/stores/sql/Postgres.js"
import { benchAgent } from "./durableAgent.js"

export interface DurableRunnerCommand {
  readonly url: string
  /** The cluster's table prefix (every runner of the run shares it). */
  readonly prefix: string
  /** The agent stores' table prefix. */
  readonly storesPrefix: string
  readonly port: number
  readonly index: number
  readonly runners: number
  readonly requestPrefix: string
  readonly requests: number
  readonly inFlight: number
  readonly toolMillis: number
}

export interface DurableRunnerEvent {
  readonly ev: "ready" | "start" | "synthesis" | "done" | "error"
  readonly index: number
  readonly t: number
  readonly requestId?: string
  readonly tag?: string
  readonly error?: string
  /** This process's CPU time so far (user + system), ms. */
  readonly cpu: number
}

const command: DurableRunnerCommand = JSON.parse(process.argv[2] ?? "{}")

const emit = (event: Omit<DurableRunnerEvent, "index" | "t" | "cpu">) => {
  const cpu = process.cpuUsage()
  process.stdout.write(
    `${JSON.stringify({ index: command.index, t: Date.now(), cpu: (cpu.user + cpu.system) / 1000, ...event })}\n`
  )
}

const lines = readline.createInterface({ input: process.stdin })
let go: () => void = () => {}
const started = new Promise<void>((resolve) => (go = resolve))
lines.on("line", (line) => {
  if (line.trim() === "go") go()
  if (line.trim() === "stop") process.exit(0)
})
lines.on("close", () => process.exit(0))

const agent = benchAgent({
  stores: Postgres.layer({ url: command.url, tablePrefix: command.storesPrefix }),
  // Every request could plan on this runner.
  plans: command.requests + 16,
  toolMillis: command.toolMillis,
  onSynthesis: (requestId) => emit({ ev: "synthesis", requestId })
})
const engine = DurablePipeline.enginePostgres({
  url: command.url,
  prefix: command.prefix,
  runner: { host: "127.0.0.1", port: command.port }
})

const ids = Array.from({ length: command.requests }, (_, i) => i)
  .filter((i) => i % command.runners === command.index)
  .map((i) => `${command.requestPrefix}-${i}`)

const program = Effect.gen(function*() {
  const durable = yield* DurablePipeline.DurablePipeline
  emit({ ev: "ready" })
  yield* Effect.promise(() => started)
  yield* Effect.forEach(
    ids,
    (requestId) =>
      Effect.tap(
        Effect.zipRight(
          Effect.sync(() => emit({ ev: "start", requestId })),
          durable.process({ requestId, request: `charge order ${requestId}` })
        ),
        (result) => Effect.sync(() => emit({ ev: "done", requestId, tag: result._tag }))
      ),
    { concurrency: command.inFlight, discard: true }
  )
  // Stays up: a runner leaving would hand its shards over while the others still run.
  yield* Effect.never
})

Effect.runPromiseExit(
  program.pipe(Effect.provide(DurablePipeline.layer().pipe(Layer.provide(agent), Layer.provide(engine))))
).then((exit) => {
  if (Exit.isFailure(exit)) {
    emit({ ev: "error", error: Cause.pretty(exit.cause).slice(0, 2_000) })
    process.exit(1)
  }
})
