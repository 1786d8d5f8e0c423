import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Agent, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

// AGENT_STORE=sqlite (default: ./data/agent.db, or SQLITE_PATH)
// AGENT_STORE=postgres DATABASE_URL=postgres://agent:secret@db:5432/agent
// AGENT_STORE=memory (nothing kept across restarts)
const AgentLive = Agent.layerConfig({ tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const store = yield* ExecutionStore.ExecutionStore
  yield* pipeline.process({ request: "What is the stock quote for ACME?" })
  // Newest first, filtered, one page at a time (`next` is the cursor).
  const page = yield* store.list({ status: ["succeeded"], limit: 20 })
  for (const record of page.records) yield* Console.log(record.requestId, record.lifecycle?.status)
  if (page.next !== undefined) yield* Console.log("more:", page.next)
  // A row that does not decode (corrupt, or written by a newer version) is
  // reported on its own; the listing goes on.
  for (const error of page.undecodable) yield* Console.log(error.message)
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
