/**
 * `npm run bench` (second part): what durable recording costs. The same
 * request as `pipeline-overhead.ts` (4 no-op hooks, one tool step, a
 * zero-latency model) with recording off, and recording into the memory
 * store, a SQLite file (WAL) and PostgreSQL (when `EAP_BENCH_DATABASE_URL`
 * or `EAP_TEST_DATABASE_URL` names one; `.ci/services.sh` starts one), the
 * latter also with `asyncCommit`.
 *
 * Prints, per backend: the sequential median and p99 per request, the
 * recording overhead (median minus recording off) and its ratio to the
 * memory store's, and sustained recorded requests per second with 1 and 16
 * requests in flight (stores interleaved in rounds) with the ratio of the
 * latter to the memory store's — issue 20's goal: SQLite ≥ 0.8×,
 * PostgreSQL ≥ 0.5× — over the whole run and as the median (and range) of
 * the ten rounds' ratios, which follows the machine's swings in speed
 * least. Not a test: compare ratios within one run.
 */
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Agent, CheckpointStore, ExecutionStore, Pipeline } from "../src/index.js"
import * as Postgres from "../src/stores/sql/Postgres.js"
import * as Sqlite from "../src/stores/sql/Sqlite.js"
import { noopHook, quantile, timeInterleaved, tools, ZeroLatencyModel } from "./support.js"

const WARMUP = Number(process.env.BENCH_WARMUP ?? 200)
const REQUESTS = Number(process.env.BENCH_STORE_REQUESTS ?? 1000)
const THROUGHPUT_MS = Number(process.env.BENCH_THROUGHPUT_MS ?? 2000)

const postgresUrl = process.env.EAP_BENCH_DATABASE_URL ?? process.env.EAP_TEST_DATABASE_URL

type Stores = Layer.Layer<
  ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore,
  ExecutionStore.ExecutionStoreError
>

interface Backend {
  readonly name: string
  readonly recording: boolean
  readonly stores: Stores
}

const memoryStores = (): Stores => Layer.merge(ExecutionStore.layerMemory(), CheckpointStore.layerMemory)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-bench-"))
const prefix = `bench_${process.pid}_`
const backends: Array<Backend> = [
  { name: "recording off", recording: false, stores: memoryStores() },
  { name: "memory", recording: true, stores: memoryStores() },
  { name: "SQLite (file, WAL)", recording: true, stores: Sqlite.layer({ filename: path.join(dir, "bench.db") }) },
  ...(postgresUrl === undefined
    ? []
    : [{
      name: "PostgreSQL",
      recording: true,
      stores: Postgres.layer({ url: Redacted.make(postgresUrl), tablePrefix: prefix })
    }, {
      // Record writes commit without waiting for the WAL flush (see SqlStores' `asyncCommit`).
      name: "PostgreSQL, asyncCommit",
      recording: true,
      stores: Postgres.layer({ url: Redacted.make(postgresUrl), tablePrefix: `${prefix}async_`, asyncCommit: true })
    }])
]

const agentOver = (backend: Backend) =>
  ManagedRuntime.make(Agent.layer({
    model: ZeroLatencyModel,
    tools,
    hooks: [0, 1, 2, 3].map(noopHook),
    options: { recording: backend.recording },
    executionStore: backend.stores,
    checkpointStore: backend.stores
  }))

interface Result {
  readonly name: string
  readonly median: number
  readonly p99: number
  readonly rps1: number
  readonly rps16: number
  readonly rounds16: ReadonlyArray<number>
}

interface Running {
  readonly backend: Backend
  readonly one: () => Promise<unknown>
  readonly samples: Array<number>
  readonly dispose: () => Promise<void>
}

const open = async (backend: Backend): Promise<Running> => {
  const runtime = agentOver(backend)
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  return {
    backend,
    samples: [],
    // Generated request ids, as the peer bench's store script (`stores/stores.mjs`)
    // and a server whose clients send none: a request with its own id also
    // waits for its create (a reused id is refused before the request runs).
    one: () => runtime.runPromise(pipeline.process({ request: "bench request" })),
    dispose: () => runtime.dispose()
  }
}

const ROUNDS = 10

/** Requests done and seconds taken with `inFlight` requests at a time, for `millis`. */
const throughputFor = async (r: Running, inFlight: number, millis: number) => {
  const until = Date.now() + millis
  let done = 0
  const t0 = process.hrtime.bigint()
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (Date.now() < until) {
      await r.one()
      done++
    }
  }))
  return { done, seconds: Number(process.hrtime.bigint() - t0) / 1e9 }
}

/** Requests per second, over all rounds and in each round, of every store. */
interface Throughput {
  readonly rates: Array<number>
  readonly rounds: Array<Array<number>>
}

/**
 * Requests per second with `inFlight` requests at a time: `THROUGHPUT_MS`
 * per store, in rounds that interleave the stores (machine noise hits all
 * of them alike, so their ratios hold within one run). Each round's rate is
 * kept too: a store's ratio to the memory store in one round compares
 * neighbours in time, so the median of those ratios is the figure that
 * least follows the machine's swings in speed.
 */
const throughput = async (running: ReadonlyArray<Running>, inFlight: number): Promise<Throughput> => {
  const totals = running.map(() => ({ done: 0, seconds: 0 }))
  const rounds: Array<Array<number>> = running.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < running.length; i++) {
      // Each round starts with a different store.
      const k = (i + round) % running.length
      const { done, seconds } = await throughputFor(running[k]!, inFlight, THROUGHPUT_MS / ROUNDS)
      totals[k]!.done += done
      totals[k]!.seconds += seconds
      rounds[k]!.push(done / seconds)
    }
  }
  return { rates: totals.map((t) => t.done / t.seconds), rounds }
}

/** The median and the range of a store's per-round ratios to the memory store's. */
const roundRatios = (rounds: ReadonlyArray<number>, memory: ReadonlyArray<number>) => {
  const ratios = rounds.map((rate, i) => rate / memory[i]!).sort((x, y) => x - y)
  return { median: quantile(ratios, 0.5), low: ratios[0]!, high: ratios[ratios.length - 1]! }
}

const perRound = (r: { readonly median: number; readonly low: number; readonly high: number }) =>
  `${r.median.toFixed(2)}× (${r.low.toFixed(2)}–${r.high.toFixed(2)})`

const main = async () => {
  const running: Array<Running> = []
  for (const backend of backends) running.push(await open(backend))
  await timeInterleaved(running.map((r) => ({ run: r.one, samples: r.samples })), {
    warmup: WARMUP,
    requests: REQUESTS,
    rounds: ROUNDS
  })
  const one = await throughput(running, 1)
  const sixteen = await throughput(running, 16)
  const results: Array<Result> = running.map((r, i) => {
    const sorted = r.samples.slice().sort((x, y) => x - y)
    return {
      name: r.backend.name,
      median: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      rps1: one.rates[i]!,
      rps16: sixteen.rates[i]!,
      rounds16: sixteen.rounds[i]!
    }
  })
  for (const r of running) await r.dispose()
  const off = results[0]!
  const memory = results[1]!
  const memoryOverhead = memory.median - off.median
  console.log(
    `\nnode ${process.version}, 4 no-op hooks, ${REQUESTS} sequential requests per store after ${WARMUP} warm-up, in ${ROUNDS} interleaved rounds; throughput over ${THROUGHPUT_MS} ms per store, also in ${ROUNDS} interleaved rounds${
      postgresUrl === undefined ? "; PostgreSQL skipped (set EAP_BENCH_DATABASE_URL)" : ""
    }\n`
  )
  console.log(
    "| store | median µs | p99 µs | recording overhead µs | overhead vs memory | req/s, 1 in flight | 1 in flight vs memory | req/s, 16 in flight | 16 in flight vs memory | per round: median (range) |"
  )
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
  for (const r of results) {
    const overhead = r.median - off.median
    console.log(
      `| ${r.name} | ${r.median.toFixed(1)} | ${r.p99.toFixed(1)} | ${r === off ? "–" : overhead.toFixed(1)} | ${
        r === off ? "–" : `${(overhead / memoryOverhead).toFixed(2)}×`
      } | ${r.rps1.toFixed(0)} | ${r === off ? "–" : `${(r.rps1 / memory.rps1).toFixed(2)}×`} | ${
        r.rps16.toFixed(0)
      } | ${r === off ? "–" : `${(r.rps16 / memory.rps16).toFixed(2)}×`} | ${
        r === off ? "–" : perRound(roundRatios(r.rounds16, memory.rounds16))
      } |`
    )
  }
  fs.rmSync(dir, { recursive: true, force: true })
  if (postgresUrl !== undefined) {
    // The bench's own tables go with it.
    const { PgClient } = await import("@effect/sql-pg")
    const { SqlClient } = await import("@effect/sql/SqlClient")
    await Effect.runPromise(
      Effect.flatMap(
        SqlClient,
        (sql) =>
          Effect.forEach(
            [prefix, `${prefix}async_`].flatMap((p) =>
              ["execution_records", "checkpoints", "activity_signals", "migrations"].map((t) => p + t)
            ),
            (t) => sql`DROP TABLE IF EXISTS ${sql(t)}`,
            {
              discard: true
            }
          )
      ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(postgresUrl) })))
    )
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
