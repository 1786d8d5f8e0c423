/**
 * What durable requests (`effect-agent-pipeline/durable`) cost: the same
 * agent (a scripted plan of two tool steps and a synthesis, zero-latency
 * tools, its records in the backend's stores) run by `Pipeline.process`
 * in-process and by `DurablePipeline.process` as a durable workflow.
 *
 * 1. Overhead per request, sequential, on SQLite (engine and stores in
 *    temporary files) and on PostgreSQL (a single runner; the in-process
 *    baseline records into PostgreSQL stores too, so the difference is
 *    durable mode's own): median and p95 ms of each, interleaved in rounds,
 *    and the ratio durable / in-process.
 * 2. Throughput on PostgreSQL with 1, 2 and 4 runner processes
 *    (`durableRunner.ts`, socket runners sharing one prefix): `N` requests
 *    split over the runners, each runner processing its share `inFlight` at
 *    a time (its requests run wherever their shard is owned); time from the
 *    first submission to the last completion, the median request's latency
 *    and the lag from its AfterSynthesis hook to its result, the runners'
 *    CPU per request, and how busy the whole machine was (PostgreSQL
 *    included): runners only add throughput while there are idle cores.
 *
 * PostgreSQL from `EAP_BENCH_DATABASE_URL`, `PG_URL` or
 * `EAP_TEST_DATABASE_URL` (skipped with a note when none is set or it
 * cannot be reached); the bench's tables are dropped afterwards. Run with
 * `tsx bench/durable.ts`. Not a test: compare ratios within one run.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { Duration, Effect, Layer, ManagedRuntime } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import * as DurablePipeline from "../src/durable/DurablePipeline.js"
import { dropTables } from "../src/durable/internal/durableStorage.js"
import { Pipeline } from "../src/index.js"
import { tablesFor } from "../src/stores/sql/migrations.js"
import * as Postgres from "../src/stores/sql/Postgres.js"
import * as Sqlite from "../src/stores/sql/Sqlite.js"
import { benchAgent, type Stores } from "./durableAgent.js"
import type { DurableRunnerCommand, DurableRunnerEvent } from "./durableRunner.js"
import { quantile, timeInterleaved } from "./support.js"

const WARMUP = Number(process.env.BENCH_DURABLE_WARMUP ?? 10)
const REQUESTS = Number(process.env.BENCH_DURABLE_REQUESTS ?? 100)
const ROUNDS = 5
const THROUGHPUT_REQUESTS = Number(process.env.BENCH_DURABLE_THROUGHPUT_REQUESTS ?? 200)
const IN_FLIGHT = Number(process.env.BENCH_DURABLE_IN_FLIGHT ?? 16)
const RUNNER_COUNTS = [1, 2, 4]
/** After every runner is up: time for the runners to split the shards before the first submission. */
const SETTLE_MILLIS = Number(process.env.BENCH_DURABLE_SETTLE_MS ?? 5_000)

const postgresUrl = process.env.EAP_BENCH_DATABASE_URL ?? process.env.PG_URL ?? process.env.EAP_TEST_DATABASE_URL

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-durable-bench-"))
const prefix = `eap_bench_${process.pid}`
const storesPrefix = `${prefix}_s_`
const clusterPrefixes: Array<string> = []

const ms = (micros: number) => (micros / 1000).toFixed(2)

/** A free TCP port on 127.0.0.1 (as test/durable/crashHarness.ts). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Whether PostgreSQL answers within 5 s. */
const reachable = (url: string): Promise<boolean> =>
  Effect.runPromise(
    Effect.flatMap(SqlClient, (sql) => sql`SELECT 1`).pipe(
      Effect.provide(Postgres.layerClient({ url, maxConnections: 1 })),
      Effect.timeout(Duration.seconds(5)),
      Effect.match({ onFailure: () => false, onSuccess: () => true })
    )
  )

// 1. Overhead per request.

interface Overhead {
  readonly backend: string
  readonly inProcess: { readonly median: number; readonly p95: number }
  readonly durable: { readonly median: number; readonly p95: number }
}

const overhead = async (
  backend: string,
  stores: Stores,
  engine: Layer.Layer<DurablePipeline.EngineServices, DurablePipeline.DurableEngineError>
): Promise<Overhead> => {
  const agent = benchAgent({ stores, plans: 2 * (WARMUP + REQUESTS) + 16 })
  const runtime = ManagedRuntime.make(
    DurablePipeline.layer().pipe(Layer.provideMerge(agent), Layer.provide(engine))
  )
  try {
    const pipeline = await runtime.runPromise(Pipeline.Pipeline)
    const durable = await runtime.runPromise(DurablePipeline.DurablePipeline)
    // A unique request id on both sides (a durable request id is its execution's key).
    const inProcess = {
      samples: [] as Array<number>,
      run: (i: number) => runtime.runPromise(pipeline.process({ request: "charge twice", requestId: `p-${i}` }))
    }
    const durableConfig = {
      samples: [] as Array<number>,
      run: (i: number) => runtime.runPromise(durable.process({ request: "charge twice", requestId: `d-${i}` }))
    }
    await timeInterleaved([inProcess, durableConfig], { warmup: WARMUP, requests: REQUESTS, rounds: ROUNDS })
    const stats = (samples: Array<number>) => {
      const sorted = samples.slice().sort((x, y) => x - y)
      return { median: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) }
    }
    return { backend, inProcess: stats(inProcess.samples), durable: stats(durableConfig.samples) }
  } finally {
    await runtime.dispose()
  }
}

// 2. Throughput with several runners.

interface Throughput {
  readonly runners: number
  readonly seconds: number
  readonly completed: number
  readonly perRunner: ReadonlyArray<number>
  /** Median ms from a request's AfterSynthesis hook to its `process` returning on the submitting runner. */
  readonly replyLag: number
  /** Median ms per request, submission to completion. */
  readonly latency: number
  /** The runners' CPU time over the run per request, ms. */
  readonly cpuPerRequest: number
  /** The machine's busy share over the run (every process, PostgreSQL's too), from /proc/stat. */
  readonly machineBusy: number | undefined
}

/** Busy and total jiffies of the machine (Linux), or undefined. */
const machineTimes = (): { readonly busy: number; readonly total: number } | undefined => {
  try {
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    const total = fields.reduce((a, b) => a + b, 0)
    // idle + iowait
    return { busy: total - fields[3]! - (fields[4] ?? 0), total }
  } catch {
    return undefined
  }
}

const runnerScript = path.join(path.dirname(fileURLToPath(import.meta.url)), "durableRunner.ts")

interface Child {
  readonly process: ChildProcess
  readonly events: Array<DurableRunnerEvent>
  readonly stderr: Array<string>
}

const spawnRunner = (command: DurableRunnerCommand, onEvent: (event: DurableRunnerEvent) => void): Child => {
  const child = spawn(process.execPath, ["--import", "tsx", runnerScript, JSON.stringify(command)], {
    stdio: ["pipe", "pipe", "pipe"]
  })
  const events: Array<DurableRunnerEvent> = []
  const stderr: Array<string> = []
  readline.createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.startsWith("{")) return
    const event = JSON.parse(line) as DurableRunnerEvent
    events.push(event)
    onEvent(event)
  })
  child.stderr!.on("data", (chunk) => stderr.push(String(chunk)))
  return { process: child, events, stderr }
}

const throughput = async (url: string, runners: number): Promise<Throughput> => {
  const clusterPrefix = `${prefix}_r${runners}`
  clusterPrefixes.push(clusterPrefix)
  const ports = await Promise.all(Array.from({ length: runners }, () => freePort()))
  let ready = 0
  let done = 0
  let failure: string | undefined
  let wake: () => void = () => {}
  const changed = () => wake()
  const children = ports.map((port, index) =>
    spawnRunner({
      url,
      prefix: clusterPrefix,
      storesPrefix,
      port,
      index,
      runners,
      requestPrefix: `r${runners}`,
      requests: THROUGHPUT_REQUESTS,
      inFlight: IN_FLIGHT,
      toolMillis: 0
    }, (event) => {
      if (event.ev === "ready") ready++
      if (event.ev === "done") done++
      if (event.ev === "error") failure = event.error
      changed()
    })
  )
  for (const c of children) c.process.on("exit", (code) => code !== 0 && (failure ??= `a runner exited (${code})`))
  const until = async (condition: () => boolean, timeoutMillis: number, what: string) => {
    const deadline = Date.now() + timeoutMillis
    while (!condition()) {
      if (failure !== undefined) {
        throw new Error(`${what}: ${failure}\n${children.map((c) => c.stderr.join("")).join("\n")}`)
      }
      if (Date.now() > deadline) throw new Error(`${what}: timed out`)
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, 200)
      })
    }
  }
  try {
    await until(() => ready === runners, 60_000, `starting ${runners} runner(s)`)
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MILLIS))
    const t0 = Date.now()
    const times0 = machineTimes()
    for (const c of children) c.process.stdin!.write("go\n")
    await until(() => done === THROUGHPUT_REQUESTS, 120_000, `${THROUGHPUT_REQUESTS} requests on ${runners} runner(s)`)
    const times1 = machineTimes()
    const end = Math.max(...children.flatMap((c) => c.events.filter((e) => e.ev === "done").map((e) => e.t)))
    // Where the requests ran: each runner's AfterSynthesis hook runs for the requests its shards own.
    const perRunner = children.map((c) => c.events.filter((e) => e.ev === "synthesis").length)
    const events = children.flatMap((c) => c.events)
    const synthesisAt = new Map(events.filter((e) => e.ev === "synthesis").map((e) => [e.requestId, e.t]))
    const startAt = new Map(events.filter((e) => e.ev === "start").map((e) => [e.requestId, e.t]))
    const doneAt = events.filter((e) => e.ev === "done")
    const lags = doneAt.map((e) => e.t - (synthesisAt.get(e.requestId) ?? e.t)).sort((x, y) => x - y)
    return {
      runners,
      seconds: (end - t0) / 1000,
      completed: done,
      perRunner,
      replyLag: quantile(lags, 0.5),
      cpuPerRequest: children.reduce((sum, c) => {
        const cpu = c.events.filter((e) => e.ev !== "ready").map((e) => e.cpu)
        const before = c.events.find((e) => e.ev === "ready")?.cpu ?? 0
        return sum + (cpu.length === 0 ? 0 : Math.max(...cpu) - before)
      }, 0) / done,
      machineBusy: times0 === undefined || times1 === undefined
        ? undefined
        : (times1.busy - times0.busy) / (times1.total - times0.total),
      latency: quantile(
        doneAt.map((e) => e.t - (startAt.get(e.requestId) ?? e.t)).sort((x, y) => x - y),
        0.5
      )
    }
  } finally {
    for (const c of children) {
      c.process.stdin!.end("stop\n")
    }
    await Promise.all(children.map((c) =>
      c.process.exitCode !== null ? Promise.resolve() : new Promise((resolve) => {
        const timer = setTimeout(() => c.process.kill("SIGKILL"), 5_000)
        c.process.once("exit", () => (clearTimeout(timer), resolve(undefined)))
      })
    ))
  }
}

const dropPostgresTables = (url: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient, (sql) =>
      Effect.zipRight(
        Effect.forEach(clusterPrefixes, (p) => dropTables(sql, p), { discard: true }),
        Effect.forEach(Object.values(tablesFor(storesPrefix)), (t) => sql`DROP TABLE IF EXISTS ${sql(t)}`, {
          discard: true
        })
      )).pipe(Effect.provide(Postgres.layerClient({ url, maxConnections: 1 })))
  )

const main = async () => {
  const pg = postgresUrl !== undefined && await reachable(postgresUrl) ? postgresUrl : undefined
  const notes: Array<string> = []
  if (postgresUrl === undefined) notes.push("PostgreSQL skipped: set PG_URL or EAP_TEST_DATABASE_URL")
  else if (pg === undefined) notes.push("PostgreSQL skipped: the database could not be reached")
  const overheads: Array<Overhead> = []
  const throughputs: Array<Throughput> = []
  try {
    overheads.push(
      await overhead(
        "SQLite (files, WAL)",
        Sqlite.layer({ filename: path.join(dir, "stores.db") }),
        DurablePipeline.engineSqlite({ filename: path.join(dir, "workflows.db") })
      )
    )
    if (pg !== undefined) {
      const clusterPrefix = `${prefix}_single`
      clusterPrefixes.push(clusterPrefix)
      overheads.push(
        await overhead(
          "PostgreSQL (single runner)",
          Postgres.layer({ url: pg, tablePrefix: storesPrefix }),
          DurablePipeline.enginePostgres({ url: pg, prefix: clusterPrefix, runner: "single" })
        )
      )
      for (const runners of RUNNER_COUNTS) throughputs.push(await throughput(pg, runners))
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
    if (pg !== undefined) await dropPostgresTables(pg)
  }

  console.log(
    `\nnode ${process.version}, ${os.cpus().length} cores; a plan of 2 tool steps + synthesis, zero-latency model and tools; ${REQUESTS} sequential requests per mode after ${WARMUP} warm-up, in ${ROUNDS} interleaved rounds${
      notes.length > 0 ? `; ${notes.join("; ")}` : ""
    }\n`
  )
  console.log(
    "| backend | in-process median ms | in-process p95 ms | durable median ms | durable p95 ms | durable overhead ms (median) | durable / in-process (median) |"
  )
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
  for (const o of overheads) {
    console.log(
      `| ${o.backend} | ${ms(o.inProcess.median)} | ${ms(o.inProcess.p95)} | ${ms(o.durable.median)} | ${
        ms(o.durable.p95)
      } | ${ms(o.durable.median - o.inProcess.median)} | ${(o.durable.median / o.inProcess.median).toFixed(1)}× |`
    )
  }
  if (throughputs.length > 0) {
    const one = throughputs[0]!
    console.log(
      `\nPostgreSQL runner processes: ${THROUGHPUT_REQUESTS} durable requests split over the runners, ${IN_FLIGHT} in flight per runner; first submission to last completion; ${os.cpus().length} cores shared by the runners and PostgreSQL\n`
    )
    console.log(
      "| runners | seconds | requests/s | vs 1 runner | median ms per request | median ms AfterSynthesis → result | runners' CPU ms per request | machine busy | requests run per runner |"
    )
    console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for (const t of throughputs) {
      const rps = t.completed / t.seconds
      console.log(
        `| ${t.runners} | ${t.seconds.toFixed(2)} | ${rps.toFixed(1)} | ${
          (rps / (one.completed / one.seconds)).toFixed(2)
        }× | ${t.latency.toFixed(0)} | ${t.replyLag.toFixed(0)} | ${t.cpuPerRequest.toFixed(1)} | ${
          t.machineBusy === undefined ? "–" : `${(100 * t.machineBusy).toFixed(0)}%`
        } | ${t.perRunner.join(" / ")} |`
      )
    }
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
