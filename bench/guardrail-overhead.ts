/**
 * `npm run bench`: what the redaction guardrail costs a request (issue 23).
 * A zero-latency model drafts ~1 KB of prose (one email in it) and a tool
 * returns ~1 KB; each request runs one phase, records into the memory store
 * and synthesizes — buffered, and streamed as 64 tokens of 16 characters.
 * Rows: guardrail off; on (tool output, response, tokens, record redacted);
 * on with `rawEvidence` (records kept exact). Prints median and p99 µs per
 * request, the ratio to "off" of the same mode, and for streams the added
 * µs per token. Not a test: compare ratios within one run.
 */
import { LanguageModel, Tool } from "@effect/ai"
import { Chunk, Effect, Layer, ManagedRuntime, Schema, Stream } from "effect"
import { Agent, ExecutionStore, Guardrails, Pipeline, ToolRegistry } from "../src/index.js"
import { quantile, timeInterleaved } from "./support.js"

const WARMUP = Number(process.env.BENCH_WARMUP ?? 200)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500)
const ROUNDS = 10
const TOKENS = 64

const PROSE = "The quarterly report for order #100234987 shipped on 2024-01-15 with version 10.4.12 of the tool. "
const DRAFT = (PROSE.repeat(10) + "Write to ann.lee@corp.example for details.").slice(0, TOKENS * 16)
const PLAN = JSON.stringify({
  steps: [{ step_id: "s1", namespace: "bench", agent: "docs", capability: "fetch_doc", parameters: { id: "q3" } }],
  terminal: true
})

const model = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: (options) =>
      Effect.succeed([
        { type: "text", text: options.responseFormat.type === "json" ? PLAN : DRAFT },
        { type: "finish", reason: "stop", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
      ]),
    streamText: () =>
      Stream.fromIterable(
        Array.from({ length: TOKENS }, (_, i) => ({
          type: "text-delta" as const,
          id: `t${i}`,
          delta: DRAFT.slice(i * 16, i * 16 + 16)
        }))
      )
  })
)

const FetchDoc = Tool.make("fetch_doc", { parameters: { id: Schema.String }, success: Schema.String })
const tools = [
  ToolRegistry.entry({
    namespace: "bench",
    agent: "docs",
    tool: FetchDoc,
    handler: () => Effect.succeed(PROSE.repeat(10))
  })
]

type Guard = "off" | "on" | "on, rawEvidence"
type Mode = "buffered" | "streamed"

interface Config {
  readonly guard: Guard
  readonly mode: Mode
  readonly samples: Array<number>
  readonly run: (i: number) => Promise<unknown>
  readonly dispose: () => Promise<void>
}

const setup = async (guard: Guard, mode: Mode): Promise<Config> => {
  const layer = Agent.layer({
    model,
    tools,
    ...(guard === "off" ? {} : { redaction: { rawEvidence: guard === "on, rawEvidence" } }),
    executionStore: ExecutionStore.layerMemory({ retention: { normal: "1 second", error: "1 second" } })
  })
  const runtime = ManagedRuntime.make(layer)
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  const store = await runtime.runPromise(ExecutionStore.ExecutionStore)
  let n = 0
  const request = (i: number): Effect.Effect<unknown, unknown> =>
    mode === "buffered"
      ? pipeline.process({ request: "fetch the q3 doc", requestId: `r${i}` })
      : Effect.map(Stream.runCollect(pipeline.stream({ request: "fetch the q3 doc", requestId: `r${i}` })), Chunk.size)
  return {
    guard,
    mode,
    samples: [],
    run: (i: number) =>
      runtime.runPromise(++n % 500 === 0 ? Effect.zipRight(store.purgeExpired, request(i)) : request(i)),
    dispose: () => runtime.dispose()
  }
}

const main = async () => {
  // The guardrail must be wired for the rows to mean anything.
  await Effect.runPromise(Guardrails.redaction())
  const configs: Array<Config> = []
  for (const mode of ["buffered", "streamed"] as const) {
    for (const guard of ["off", "on", "on, rawEvidence"] as const) configs.push(await setup(guard, mode))
  }
  await timeInterleaved(configs, { warmup: WARMUP, requests: REQUESTS, rounds: ROUNDS })
  console.log(`\nRedaction guardrail: µs per request (${REQUESTS} requests, ${TOKENS} tokens when streamed)`)
  const medianOf = (c: Config) => quantile(c.samples.slice().sort((a, b) => a - b), 0.5)
  for (const c of configs) {
    const sorted = c.samples.slice().sort((a, b) => a - b)
    const base = configs.find((o) => o.mode === c.mode && o.guard === "off")!
    const added = medianOf(c) - medianOf(base)
    console.log(
      `${c.mode.padEnd(9)} guardrail ${c.guard.padEnd(16)} median ${quantile(sorted, 0.5).toFixed(0).padStart(6)}` +
        `  p99 ${quantile(sorted, 0.99).toFixed(0).padStart(6)}  ×${(medianOf(c) / medianOf(base)).toFixed(2)}` +
        (c.mode === "streamed" && c.guard !== "off" ? `  +${(added / TOKENS).toFixed(1)} µs/token` : "")
    )
  }
  for (const c of configs) await c.dispose()
}

main()
