import { Tool } from "@effect/ai"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option, Schema } from "effect"
import { Agent, ExecutionStore, Pipeline, ToolRegistry } from "effect-agent-pipeline"

// A tool whose records carry what should never reach a model, a client or a log.
const CustomerLookup = Tool.make("customer_lookup", {
  description: "Customer account lookup (contact details) by customer name",
  parameters: { name: Schema.String },
  success: Schema.Struct({ name: Schema.String, contact: Schema.String, apiKey: Schema.String })
})

const customers = ToolRegistry.entry({
  namespace: "crm",
  agent: "customer-service",
  tool: CustomerLookup,
  handler: ({ name }) =>
    Effect.succeed({ name, contact: "ann.lee@corp.example", apiKey: "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t" })
})

const program = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "Look up the customer Ann", requestId: "crm-1" })
  if (result._tag === "Completed") yield* Console.log(result.response.response)

  // What the store keeps: the redacted texts, and what the guardrail found.
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("crm-1"))
  if (Option.isSome(record)) {
    yield* Console.log(JSON.stringify(record.value.phases[0]?.steps[0]?.output))
    for (const run of record.value.hookInvocations.filter((r) => r.name === "redaction")) {
      yield* Console.log(`${run.stage}: ${JSON.stringify(run.effects[0]?.data ?? "nothing found")}`)
    }
  }
})

program.pipe(
  Effect.provide(Agent.layerOffline({ tools: [customers], redaction: { allowTools: [] } })),
  NodeRuntime.runMain
)
