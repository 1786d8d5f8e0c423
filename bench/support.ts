/**
 * What the benchmarks share: a zero-latency model (a constant one-step plan,
 * a constant draft), a no-op tool, no-op hooks, and quantiles.
 */
import { LanguageModel, Tool } from "@effect/ai"
import { Effect, Layer, Schema, Stream } from "effect"
import { Hook, ModelProvider, ToolRegistry } from "../src/index.js"

const PLAN = JSON.stringify({
  steps: [{ step_id: "s1", namespace: "bench", agent: "noop", capability: "noop", parameters: { x: 1 } }],
  terminal: true
})

const zeroLatency: LanguageModel.ConstructorParams = {
  generateText: (options) =>
    Effect.succeed([
      { type: "text", text: options.responseFormat.type === "json" ? PLAN : "done" },
      { type: "finish", reason: "stop", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
    ]),
  streamText: () => Stream.dieMessage("not used")
}

/** A zero-latency model: a constant plan for structured output, a constant draft otherwise. */
export const ZeroLatencyModel = ModelProvider.layer(ModelProvider.make(zeroLatency))

/**
 * The same model provided only as `@effect/ai`'s `LanguageModel` — as the
 * OpenAI, Anthropic and Chat Completions layers provide theirs (their
 * direct functions ride on the service).
 */
export const ZeroLatencyLanguageModel = Layer.effect(
  LanguageModel.LanguageModel,
  Effect.map(ModelProvider.make(zeroLatency), (provider) => provider.languageModel)
)

/** The same model from `LanguageModel.make` (any `@effect/ai` provider package): no direct functions. */
export const ForeignLanguageModel = Layer.effect(LanguageModel.LanguageModel, LanguageModel.make(zeroLatency))

const Noop = Tool.make("noop", { parameters: { x: Schema.Number }, success: Schema.Number })

/** The plan's one tool. */
export const tools = [
  ToolRegistry.entry({ namespace: "bench", agent: "noop", tool: Noop, handler: ({ x }) => Effect.succeed(x) })
]

/** A no-op hook with an Effect handler on each of the four stages. */
export const noopHook = (i: number): Hook.Hook<never> => ({
  name: `noop-${i}`,
  beforePlanning: () => Effect.void,
  afterPlanning: (_c, plan) => Effect.succeed(plan),
  afterExecution: () => Effect.void,
  afterSynthesis: (_c, text) => Effect.succeed(text)
})

/** The same hook with `Hook.sync` handlers. */
export const noopSyncHook = (i: number): Hook.Hook<never> => ({
  name: `noop-sync-${i}`,
  beforePlanning: Hook.sync(() => undefined),
  afterPlanning: Hook.sync((_c, plan) => plan),
  afterExecution: Hook.sync(() => undefined),
  afterSynthesis: Hook.sync((_c, text: string) => text)
})

/**
 * A no-op hook on operations, as `bench-peers` counts a unit: a
 * `beforeInference` and an `afterInference` transform (both model calls)
 * and an `around.toolExecution` observer — 5 hook calls per request —
 * with Effect handlers.
 */
export const noopOperationHook = (i: number): Hook.Hook<never> => ({
  name: `noop-op-${i}`,
  beforeInference: (_call, prompt: string) => Effect.succeed(prompt),
  afterInference: (_call, text: string) => Effect.succeed(text),
  around: { toolExecution: () => Effect.void }
})

/** The same hook with `Hook.sync` handlers. */
export const noopOperationSyncHook = (i: number): Hook.Hook<never> => ({
  name: `noop-op-sync-${i}`,
  beforeInference: Hook.sync((_call, prompt: string) => prompt),
  afterInference: Hook.sync((_call, text: string) => text),
  around: { toolExecution: Hook.sync(() => undefined) }
})

/** The `q` quantile of sorted samples. */
export const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

/**
 * Warms each configuration up, then times `requests` requests of each in
 * `rounds` interleaved rounds — so machine noise hits all of them alike —
 * appending each request's µs to its `samples`. `run` gets a request number
 * unique across the whole benchmark.
 */
export const timeInterleaved = async (
  configs: ReadonlyArray<{ readonly run: (i: number) => Promise<unknown>; readonly samples: Array<number> }>,
  options: { readonly warmup: number; readonly requests: number; readonly rounds: number }
): Promise<void> => {
  for (const c of configs) for (let i = 0; i < options.warmup; i++) await c.run(i)
  const perRound = Math.ceil(options.requests / options.rounds)
  let id = options.warmup
  for (let round = 0; round < options.rounds; round++) {
    for (const c of configs) {
      for (let i = 0; i < perRound; i++) {
        const t0 = process.hrtime.bigint()
        await c.run(id++)
        c.samples.push(Number(process.hrtime.bigint() - t0) / 1000)
      }
    }
  }
}
