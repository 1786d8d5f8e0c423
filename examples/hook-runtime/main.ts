/**
 * `npm run example:hook-runtime`: operation hooks on the offline model.
 * A guard denies trades at their tool call, a transform redacts tool
 * output, an observer audits every model call without delaying it, a RAG
 * hook retrieves context and a memory hook stores the request, scrubbed.
 * Each request prints its answer and every hook run the record holds:
 * point, hook, status, and the operation it ran for.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionStore, Hook, Memory, MemoryStore, Pipeline, Retrieval, Retriever } from "effect-agent-pipeline"
import { allTools } from "../shared/DemoTools.js"

const hooks = [
  Hook.make({
    name: "rag",
    capabilities: ["enrichments"],
    beforePlanning: (ctx) =>
      Retrieval.retrieve(ctx.request, { limit: 2 }).pipe(
        Effect.map((docs) => ({ enrichments: { rag_context: docs.map((d) => `- ${d.content}`).join("\n") } })),
        Effect.orElseSucceed(() => undefined)
      )
  }),
  Hook.make({
    name: "no-trades",
    capabilities: ["deny"],
    guard: {
      toolCall: (call, proceed) =>
        call.payload.capability === "execute_trade" ? Hook.deny("trades need a human") : proceed
    }
  }),
  Hook.make({
    name: "redact-order-ids",
    afterTool: (_call, result) =>
      Effect.succeed(
        "output" in result
          ? { output: JSON.parse(JSON.stringify(result.output).replace(/mock-\w+-\w+-\d+/g, "[order]")) }
          : result
      )
  }),
  Hook.make({
    name: "model-audit",
    execution: Hook.fireAndRecord,
    around: {
      inference: (call) => Effect.succeed((result) => Effect.logDebug(`${call.payload.purpose}: ${result.outcome}`))
    }
  }),
  Hook.make({
    name: "remember",
    afterExecution: (ctx) =>
      Memory.store(String(ctx.metadata.user_id ?? "anonymous"), { content: ctx.request }).pipe(Effect.ignore)
  }),
  Hook.make({
    name: "scrub-memory",
    beforeMemoryStore: (_call, record) =>
      Effect.succeed({ ...record, content: record.content.replace(/\S+@\S+/g, "[email]") })
  })
]

const AgentLive = Agent.layerOffline({ tools: allTools, hooks }).pipe(
  Layer.provide(Retriever.layerMemory([
    { id: "desk", content: "Stock quotes are delayed 15 minutes." },
    { id: "weather", content: "Weather forecasts are for today, in Celsius." }
  ])),
  Layer.provideMerge(MemoryStore.layerMemory)
)

const samples = [
  "What is the stock quote for ACME? Reply to ann@example.com",
  "Buy 10 shares of ACME stock",
  "What's the weather forecast in Lisbon?"
]

const program = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const store = yield* ExecutionStore.ExecutionStore
  for (const [i, request] of samples.entries()) {
    const requestId = `runtime-${i + 1}`
    yield* Console.log(`\n▶ ${request}`)
    const result = yield* pipeline.process({ request, requestId, metadata: { user_id: "ann" } })
    if (result._tag === "Completed") yield* Console.log(`  ${result.response.response.replace(/\n/g, "\n  ")}`)
    // Let the fire-and-record observers land in the record.
    yield* Effect.sleep("10 millis")
    const record = yield* store.get(requestId)
    if (Option.isNone(record)) continue
    for (const run of record.value.hookInvocations) {
      const operation = run.operation === undefined
        ? ""
        : ` (${run.operation}${run.stepId === undefined ? "" : ` ${run.stepId}`})`
      yield* Console.log(
        `    ${run.stage}.${run.name} → ${run.status ?? run.outcome}${operation}${run.error ? `: ${run.error}` : ""}`
      )
    }
  }
  const memory = yield* MemoryStore.MemoryStore
  const remembered = yield* memory.load("ann", { query: "", limit: 10 })
  yield* Console.log(`\nremembered for ann: ${remembered.map((r) => JSON.stringify(r.content)).join(", ")}`)
})

program.pipe(Effect.provide(AgentLive), NodeRuntime.runMain)
