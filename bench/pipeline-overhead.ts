/**
 * `npm run bench`: per-request overhead of the full pipeline (decode →
 * BeforePlanning → plan → AfterPlanning → execute → AfterExecution →
 * synthesize → AfterSynthesis → record) on a zero-latency model and a no-op
 * tool. Prints median and p99 in µs, the ratio to the 0-hook baseline of
 * the same model and recording, and the marginal cost per hook call, for:
 *
 * - stage hooks: 0, 4 and 16 no-op hooks (one handler on each of the four
 *   stages) written as Effect handlers, and 16 as `Hook.sync` functions;
 *   recording on and off;
 * - operation hooks: 16 no-op units (a `beforeInference` and an
 *   `afterInference` transform, an `around.toolExecution` observer: 5 calls
 *   per request, as `bench-peers` counts them), Effect and `Hook.sync`;
 * - the model path: the model built with `ModelProvider` and provided as its
 *   Layer (`DirectModel` beside `LanguageModel`), provided as `LanguageModel`
 *   only — the path the OpenAI, Anthropic and Chat Completions layers take —
 *   and a model from `LanguageModel.make` (any `@effect/ai` provider package:
 *   no direct functions).
 *
 * Then the ratios the performance issue names: Effect handlers' cost per
 * call against `Hook.sync`'s, and each model path against the direct one.
 * Not a test: figures depend on the machine; compare ratios within one run.
 */
import type { LanguageModel } from "@effect/ai"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { Agent, ExecutionStore, type Hook, Pipeline } from "../src/index.js"
import {
  ForeignLanguageModel,
  noopHook,
  noopOperationHook,
  noopOperationSyncHook,
  noopSyncHook,
  quantile,
  timeInterleaved,
  tools,
  ZeroLatencyLanguageModel,
  ZeroLatencyModel
} from "./support.js"

const WARMUP = Number(process.env.BENCH_WARMUP ?? 300)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)
const ROUNDS = 10

type Handlers = "Effect" | "Hook.sync"
type Kind = "stage" | "operation"
type ModelPath = "ModelProvider layer" | "LanguageModel only" | "LanguageModel.make"

interface Spec {
  readonly kind: Kind
  readonly hooks: number
  readonly handlers: Handlers
  readonly recording: boolean
  readonly model: ModelPath
}

interface Config extends Spec {
  readonly run: (i: number) => Promise<unknown>
  readonly dispose: () => Promise<void>
  readonly samples: Array<number>
}

interface Row extends Spec {
  readonly median: number
  readonly p99: number
}

const models: Record<ModelPath, Layer.Layer<LanguageModel.LanguageModel>> = {
  "ModelProvider layer": ZeroLatencyModel,
  "LanguageModel only": ZeroLatencyLanguageModel,
  "LanguageModel.make": ForeignLanguageModel
}

/** Hook calls per hook per request: four stages, or one unit's five operation calls. */
const callsPerHook = (kind: Kind) => (kind === "stage" ? 4 : 5)

const hooksOf = (spec: Spec): Array<Hook.Hook<never>> =>
  Array.from({ length: spec.hooks }, (_, i) =>
    spec.kind === "stage"
      ? (spec.handlers === "Effect" ? noopHook(i) : noopSyncHook(i))
      : (spec.handlers === "Effect" ? noopOperationHook(i) : noopOperationSyncHook(i)))

const setup = async (spec: Spec): Promise<Config> => {
  const layer = Agent.layer({
    model: models[spec.model],
    tools,
    hooks: hooksOf(spec),
    options: { recording: spec.recording },
    // Short normal retention so the store does not grow for the whole run.
    executionStore: ExecutionStore.layerMemory({ retention: { normal: "1 second", error: "1 second" } })
  })
  const runtime = ManagedRuntime.make(layer)
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  const store = await runtime.runPromise(ExecutionStore.ExecutionStore)
  let n = 0
  return {
    ...spec,
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

const direct: ModelPath = "ModelProvider layer"
const specs: ReadonlyArray<Spec> = [
  ...[true, false].flatMap((recording) => [
    ...[0, 4, 16].map((hooks): Spec => ({ kind: "stage", hooks, handlers: "Effect", recording, model: direct })),
    { kind: "stage", hooks: 16, handlers: "Hook.sync", recording, model: direct } satisfies Spec
  ]),
  { kind: "operation", hooks: 16, handlers: "Effect", recording: true, model: direct },
  { kind: "operation", hooks: 16, handlers: "Hook.sync", recording: true, model: direct },
  { kind: "stage", hooks: 0, handlers: "Effect", recording: true, model: "LanguageModel only" },
  { kind: "operation", hooks: 16, handlers: "Hook.sync", recording: true, model: "LanguageModel only" },
  { kind: "stage", hooks: 0, handlers: "Effect", recording: true, model: "LanguageModel.make" }
]

const main = async () => {
  const configs: Array<Config> = []
  for (const spec of specs) configs.push(await setup(spec))
  await timeInterleaved(configs, { warmup: WARMUP, requests: REQUESTS, rounds: ROUNDS })
  const rows: Array<Row> = configs.map(({ dispose: _d, run: _r, samples, ...spec }) => {
    const sorted = samples.slice().sort((a, b) => a - b)
    return { ...spec, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
  })
  for (const c of configs) await c.dispose()
  const find = (spec: Spec) =>
    rows.find((r) =>
      r.kind === spec.kind && r.hooks === spec.hooks && r.handlers === spec.handlers &&
      r.recording === spec.recording && r.model === spec.model
    )!
  const baseline = (r: Spec) =>
    find({ kind: "stage", hooks: 0, handlers: "Effect", recording: r.recording, model: r.model })
  const perCall = (r: Row) => (r.median - baseline(r).median) / (callsPerHook(r.kind) * r.hooks)
  console.log(
    `node ${process.version}, ${REQUESTS} sequential requests per row after ${WARMUP} warm-up, in ${ROUNDS} interleaved rounds\n`
  )
  console.log(
    "| model | hooks | handlers | recording | median µs | p99 µs | median vs 0 hooks | per hook call (median) µs |"
  )
  console.log("| --- | --- | :---: | :---: | ---: | ---: | ---: | ---: |")
  for (const r of rows) {
    const base = baseline(r)
    const hooks = r.hooks === 0 ? "0" : `${r.hooks} ${r.kind}`
    console.log(
      `| ${r.model} | ${hooks} | ${r.hooks === 0 ? "–" : r.handlers} | ${r.recording ? "on" : "off"} | ${
        r.median.toFixed(1)
      } | ${r.p99.toFixed(1)} | ${(r.median / base.median).toFixed(2)}× | ${
        r.hooks === 0 ? "–" : perCall(r).toFixed(2)
      } |`
    )
  }
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`
  const on = (spec: Omit<Spec, "recording" | "model">) => find({ ...spec, recording: true, model: direct })
  console.log("\nEffect handlers' cost per hook call against Hook.sync's (16 hooks, recording on):")
  for (const kind of ["stage", "operation"] as const) {
    const effect = perCall(on({ kind, hooks: 16, handlers: "Effect" }))
    const sync = perCall(on({ kind, hooks: 16, handlers: "Hook.sync" }))
    console.log(`- ${kind} hooks: ${effect.toFixed(2)} µs against ${sync.toFixed(2)} µs, ${ratio(effect, sync)}`)
  }
  console.log("\nThe model path, recording on (median against the ModelProvider layer's):")
  const zero = find({ kind: "stage", hooks: 0, handlers: "Effect", recording: true, model: direct })
  for (const model of ["LanguageModel only", "LanguageModel.make"] as const) {
    const row = find({ kind: "stage", hooks: 0, handlers: "Effect", recording: true, model })
    console.log(`- ${model}, 0 hooks: ${row.median.toFixed(1)} µs, ${ratio(row.median, zero.median)}`)
  }
  const ops = on({ kind: "operation", hooks: 16, handlers: "Hook.sync" })
  const opsLm = find({
    kind: "operation",
    hooks: 16,
    handlers: "Hook.sync",
    recording: true,
    model: "LanguageModel only"
  })
  console.log(
    `- LanguageModel only, 16 Hook.sync operation units: ${opsLm.median.toFixed(1)} µs, ${
      ratio(opsLm.median, ops.median)
    }`
  )
  console.log(`\nrecording on vs off at 0 hooks: ${ratio(zero.median, baseline({ ...zero, recording: false }).median)}`)
  const on16 = on({ kind: "stage", hooks: 16, handlers: "Effect" })
  console.log(`recording on vs off at 16 hooks: ${ratio(on16.median, find({ ...on16, recording: false }).median)}`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
