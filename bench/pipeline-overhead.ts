/**
 * `npm run bench`: per-request overhead of the full pipeline (decode →
 * BeforePlanning → plan → AfterPlanning → execute → AfterExecution →
 * synthesize → AfterSynthesis → record) on a zero-latency model and a no-op
 * tool, with 0, 4 and 16 no-op hooks (one handler on each of the four
 * stages) written as Effect handlers, and 16 written as `Hook.sync` plain
 * functions; recording on and off. Prints median and p99 in µs, the ratio
 * to the 0-hook baseline of the same run, and the marginal cost per hook.
 * The model is built with `ModelProvider` (the pipeline's direct model path).
 *
 * Not a test: figures depend on the machine; compare ratios within one run.
 */
import { Effect, ManagedRuntime } from "effect"
import { Agent, ExecutionStore, Pipeline } from "../src/index.js"
import { noopHook, noopSyncHook, quantile, tools, ZeroLatencyModel } from "./support.js"

const WARMUP = Number(process.env.BENCH_WARMUP ?? 300)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)

type Handlers = "Effect" | "Hook.sync"

interface Row {
  readonly handlers: Handlers
  readonly hooks: number
  readonly recording: boolean
  readonly median: number
  readonly p99: number
}

interface Config {
  readonly handlers: Handlers
  readonly hooks: number
  readonly recording: boolean
  readonly run: (i: number) => Promise<unknown>
  readonly dispose: () => Promise<void>
  readonly samples: Array<number>
}

const setup = async (hooks: number, recording: boolean, handlers: Handlers = "Effect"): Promise<Config> => {
  const layer = Agent.layer({
    model: ZeroLatencyModel,
    tools,
    hooks: Array.from({ length: hooks }, (_, i) => (handlers === "Effect" ? noopHook(i) : noopSyncHook(i))),
    options: { recording },
    // Short normal retention so the store does not grow for the whole run.
    executionStore: ExecutionStore.layerMemory({ retention: { normal: "1 second", error: "1 second" } })
  })
  const runtime = ManagedRuntime.make(layer)
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  const store = await runtime.runPromise(ExecutionStore.ExecutionStore)
  let n = 0
  return {
    handlers,
    hooks,
    recording,
    samples: [],
    run: (i) =>
      runtime.runPromise(
        // Purge now and then, as a deployment's retention job would.
        ++n % 500 === 0
          ? Effect.zipRight(store.purgeExpired, pipeline.process({ request: "bench request", requestId: `r${i}` }))
          : pipeline.process({ request: "bench request", requestId: `r${i}` })
      ),
    dispose: () => runtime.dispose()
  }
}

const ROUNDS = 10

const main = async () => {
  const configs: Array<Config> = []
  for (const recording of [true, false]) {
    for (const hooks of [0, 4, 16]) configs.push(await setup(hooks, recording))
    configs.push(await setup(16, recording, "Hook.sync"))
  }
  for (const c of configs) for (let i = 0; i < WARMUP; i++) await c.run(i)
  // Rounds interleave the configurations, so machine noise hits all of them alike.
  const perRound = Math.ceil(REQUESTS / ROUNDS)
  let id = WARMUP
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of configs) {
      for (let i = 0; i < perRound; i++) {
        const t0 = process.hrtime.bigint()
        await c.run(id++)
        c.samples.push(Number(process.hrtime.bigint() - t0) / 1000)
      }
    }
  }
  const rows: Array<Row> = configs.map((c) => {
    const sorted = c.samples.slice().sort((a, b) => a - b)
    return {
      handlers: c.handlers,
      hooks: c.hooks,
      recording: c.recording,
      median: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99)
    }
  })
  for (const c of configs) await c.dispose()
  const baseline = (recording: boolean) => rows.find((r) => r.hooks === 0 && r.recording === recording)!
  console.log(
    `node ${process.version}, ${REQUESTS} sequential requests per row after ${WARMUP} warm-up, in ${ROUNDS} interleaved rounds\n`
  )
  console.log("| hooks | handlers | recording | median µs | p99 µs | median vs 0 hooks | per hook call (median) µs |")
  console.log("| ---: | :---: | :---: | ---: | ---: | ---: | ---: |")
  for (const r of rows) {
    const base = baseline(r.recording)
    // Each hook has a handler at all four stages: 4 hook calls per hook.
    const perHook = r.hooks === 0 ? "–" : ((r.median - base.median) / (4 * r.hooks)).toFixed(2)
    console.log(
      `| ${r.hooks} | ${r.hooks === 0 ? "–" : r.handlers} | ${r.recording ? "on" : "off"} | ${r.median.toFixed(1)} | ${
        r.p99.toFixed(1)
      } | ${(r.median / base.median).toFixed(2)}× | ${perHook} |`
    )
  }
  const on = baseline(true)
  const off = baseline(false)
  console.log(`\nrecording on vs off at 0 hooks: ${(on.median / off.median).toFixed(2)}×`)
  const on16 = rows.find((r) => r.hooks === 16 && r.recording && r.handlers === "Effect")!
  const off16 = rows.find((r) => r.hooks === 16 && !r.recording && r.handlers === "Effect")!
  console.log(`recording on vs off at 16 hooks: ${(on16.median / off16.median).toFixed(2)}×`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
