import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, Approval, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import { executeTrade, QuotesLive, stockQuote } from "./tools.js"

// Ask a human before any trade executes.
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

const buy = (requestId: string, decision: Approval.ApprovalDecision) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const first = yield* pipeline.process({ request: "Buy 10 shares of ACME stock", requestId })
    if (first._tag === "Completed") return first.response.response
    // The plan is saved with the checkpoint, sealed; nothing has executed yet.
    // The approver is shown the plan and its digest.
    const { checkpointId, plan, planDigest, reason } = first.checkpoint
    yield* Console.log(`${requestId} suspended (${reason}): ${plan.steps.map((s) => s.capability).join(", ")}`)
    // Later (another HTTP request, another fiber): the human decided on that
    // plan, and the digest they saw comes back with the decision.
    // "approve" runs the required after-planning hook again on the saved
    // plan, then executes it (no other AfterPlanning hook runs again);
    // "reject" is a decision, not an error: Rejected, and nothing executes.
    // Once decided, the checkpoint is gone; while one resume runs it, another
    // fails with CheckpointError "already_claimed".
    const resumed = yield* pipeline.resume(checkpointId, decision, { planDigest })
    switch (resumed._tag) {
      case "Completed":
        return resumed.response.response
      case "Suspended":
        return `suspended again: ${resumed.checkpoint.reason}`
      case "Rejected":
        return `rejected: ${resumed.reason}`
    }
  })

const main = Effect.gen(function*() {
  yield* Console.log(yield* buy("trade-1", "approve"))
  yield* Console.log(yield* buy("trade-2", "reject"))
  // The records say how each request ended, and what ran.
  const store = yield* ExecutionStore.ExecutionStore
  for (const id of ["trade-1", "trade-2"]) {
    const record = yield* store.get(id)
    if (Option.isNone(record)) continue
    const steps = record.value.phases.flatMap((phase) => phase.steps).length
    yield* Console.log(`${id}: ${record.value.lifecycle?.status}, ${steps} steps ran`)
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
