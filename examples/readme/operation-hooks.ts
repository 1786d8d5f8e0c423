import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option, Schedule } from "effect"
import { Agent, ExecutionStore, Hook, Pipeline } from "effect-agent-pipeline"
import { executeTrade, QuotesLive, stockQuote } from "./tools.js"

// A guard decides whether an operation runs: proceed, wrap it, or deny it.
const noTrades = Hook.make({
  name: "no-trades",
  capabilities: ["deny"],
  guard: {
    toolCall: (call, proceed) =>
      call.payload.capability === "execute_trade" ? Hook.deny("trades need a human") : proceed,
    // A flaky model: retry each call up to twice, then give up after 30 seconds.
    inference: (_call, proceed) =>
      proceed.pipe(
        Effect.retry(Schedule.recurs(2)),
        Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => "model timeout" })
      )
  }
})

// An Around observer sees every run begin and end; it cannot change the outcome.
// (`execution: Hook.fireAndRecord` would let the request go on without waiting for it.)
const modelAudit = Hook.make({
  name: "model-audit",
  around: {
    inference: (call) =>
      Effect.succeed((result) => Console.log(`audit: ${call.payload.purpose} call ${result.outcome}`))
  }
})

// Transforms chain rewrites of an operation's input or output.
const redactAccounts = Hook.make({
  name: "redact-accounts",
  capabilities: ["tool_output_rewrite"],
  afterTool: (_call, result) =>
    Effect.succeed(
      "output" in result
        ? { output: JSON.parse(JSON.stringify(result.output).replace(/\d{8,}/g, "[account]")) }
        : result
    )
})

// A guard on `request` wraps the whole run.
const runBudget = Hook.make({
  name: "run-budget",
  guard: {
    request: (_call, proceed) => Effect.timeoutFail(proceed, { duration: "2 minutes", onTimeout: () => "run budget" })
  }
})

const AgentLive = Agent.layerOffline({
  tools: [stockQuote, executeTrade],
  hooks: [noTrades, modelAudit, redactAccounts, runBudget]
}).pipe(Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({ request: "Buy 10 shares of ACME stock", requestId: "ops-1" })
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("ops-1"))
  if (Option.isNone(record)) return
  // The trade's step is denied; the quote ran, and the request went on to its answer.
  for (const step of record.value.phases.flatMap((phase) => phase.steps)) {
    yield* Console.log(`step ${step.capability}: ${step.status}${step.error ? ` (${step.error})` : ""}`)
  }
  // Every run of every hook is in the record (here each kind once, sorted).
  const runs = new Set(record.value.hookInvocations.map((run) => `${run.stage} ${run.name}: ${run.status}`))
  for (const run of [...runs].sort()) yield* Console.log(run)
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
