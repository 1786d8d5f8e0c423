/**
 * README "Human in the loop": an approval policy suspends a trade; the
 * caller resumes the checkpoint with a human's decision.
 */
import { executeTrade, stockQuote } from "../shared/DemoTools.js"
// #region readme
import { Effect } from "effect"
import { Agent, Approval, Pipeline } from "effect-agent-pipeline"

// Ask a human before any trade executes.
export const AgentLive = Agent.layerOffline({
  tools: [stockQuote, executeTrade],
  approval: {
    evaluate: (_ctx, plan) =>
      Effect.succeed(
        plan.steps.some((s) => s.capability === "execute_trade")
          ? Approval.suspend("trades need a human")
          : Approval.approve
      )
  }
})

export const buy = (decision: Approval.ApprovalDecision) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const first = yield* pipeline.process({ request: "Buy 10 shares of ACME stock", requestId: "trade-1" })
    if (first._tag === "Completed") return first.response.response
    // The plan is saved with the checkpoint, sealed; nothing has executed yet.
    // The approver is shown the plan and its digest.
    const { checkpointId, plan, planDigest, reason } = first.checkpoint
    yield* Effect.log(`suspended: ${reason}`, plan.steps, planDigest)
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
// #endregion readme
