import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option, Schedule } from "effect"
import { Agent, Approval, CheckpointStore, ExecutionStore } from "effect-agent-pipeline"
import * as DurablePipeline from "effect-agent-pipeline/durable"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { executeTrade, QuotesLive, stockQuote } from "./tools.js"

const AgentLive = Agent.layerOffline({
  tools: [stockQuote, executeTrade],
  approval: {
    evaluate: (_ctx, plan) =>
      Effect.succeed(
        plan.steps.some((s) => s.capability === "execute_trade")
          ? Approval.suspend("trades need a human")
          : Approval.approve
      )
  }
}).pipe(Layer.provide(QuotesLive))

// One process, one SQLite file (a fresh one for this example): a restarted
// process resumes the requests the last one left, from where they were.
const engineFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "durable-example-")), "workflows.db")

const DurableLive = DurablePipeline.layer().pipe(
  Layer.provideMerge(AgentLive),
  Layer.provide(DurablePipeline.engineSqlite({ filename: engineFile }))
)

const main = Effect.gen(function*() {
  const durable = yield* DurablePipeline.DurablePipeline
  // Runs as a workflow: BeforePlanning, each phase's plan, each tool call,
  // AfterExecution and synthesis are its activities.
  const quote = yield* durable.process({ requestId: "quote-1", request: "What is the stock quote for ACME?" })
  if (quote._tag === "Completed") yield* Console.log(quote.response.response)

  // A trade awaits its approver: submit returns at once, poll says where it stands.
  const trade = { requestId: "trade-1", request: "Buy 10 shares of ACME stock" }
  yield* durable.submit(trade)
  yield* durable.poll(trade.requestId).pipe(
    Effect.repeat({
      schedule: Schedule.spaced("20 millis"),
      until: (status) => Option.isSome(status) && status.value._tag === "Suspended"
    })
  )
  // The plan to approve is a sealed checkpoint, where HITL approvers look.
  const checkpoints = yield* CheckpointStore.CheckpointStore
  const checkpoint = Option.getOrThrow(yield* checkpoints.get(`${trade.requestId}/approval/1`))
  const tools = checkpoint.plan.steps.map((s) => s.capability).join(", ")
  yield* Console.log(`${trade.requestId} awaits approval (${checkpoint.reason}): ${tools}`)
  // The decision, bound to the digest of the plan the approver saw, resumes the workflow.
  yield* durable.approve(checkpoint.checkpointId, "approve", { planDigest: checkpoint.planDigest })
  // Processing a request id again joins that request: its result, never a second run.
  const done = yield* durable.process(trade)
  if (done._tag === "Completed") yield* Console.log(done.response.response)

  const store = yield* ExecutionStore.ExecutionStore
  const record = Option.getOrThrow(yield* store.get(trade.requestId))
  const steps = record.phases.flatMap((phase) => phase.steps).length
  yield* Console.log(`${trade.requestId}: ${record.mode}, ${record.lifecycle?.status}, ${steps} steps ran`)
}).pipe(Effect.provide(DurableLive))

NodeRuntime.runMain(main)
