/**
 * What the benchmarks share: a zero-latency model (a constant one-step plan,
 * a constant draft), a no-op tool, no-op hooks, and quantiles.
 */
import { Tool } from "@effect/ai"
import { Effect, Schema, Stream } from "effect"
import { Hook, ModelProvider, ToolRegistry } from "../src/index.js"

const PLAN = JSON.stringify({
  steps: [{ step_id: "s1", namespace: "bench", agent: "noop", capability: "noop", parameters: { x: 1 } }],
  terminal: true
})

/** A zero-latency model: a constant plan for structured output, a constant draft otherwise. */
export const ZeroLatencyModel = ModelProvider.layer(ModelProvider.make({
  generateText: (options) =>
    Effect.succeed([
      { type: "text", text: options.responseFormat.type === "json" ? PLAN : "done" },
      { type: "finish", reason: "stop", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
    ]),
  streamText: () => Stream.dieMessage("not used")
}))

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

/** The `q` quantile of sorted samples. */
export const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
