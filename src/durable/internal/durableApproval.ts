/**
 * A human's decision on a durable request's plan (`DurablePipeline.approve`):
 * the approval checkpoint checked as a HITL resume checks its checkpoint —
 * the decision, the seal, the plan the approver saw — and claimed; then the
 * decision, bound to the plan's digest, signals the request's workflow
 * (its `DurableDeferred`), and the checkpoint is removed.
 */
import { DurableDeferred } from "@effect/workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { type Context, type Duration, Effect } from "effect"
import { CheckpointError } from "../../domain/PipelineError.js"
import type { ApprovalDecision, ResumeOptions } from "../../pipeline/Approval.js"
import { isDurableApproval, type PipelineParts } from "../../pipeline/internal/pipelineParts.js"
import { newId } from "../../pipeline/internal/requestRecord.js"
import { echoedDigest, invalidArguments, makeResumeChecks } from "../../pipeline/internal/resumeChecks.js"
import { approvalOf, type RequestWorkflow } from "./durableRequest.js"

/** Builds `approve` over a pipeline's parts, for the requests of `workflow`. */
export const makeApprove = (
  parts: PipelineParts,
  workflow: RequestWorkflow,
  claimLease: Duration.Duration,
  engine: Context.Context<WorkflowEngine>
) => {
  const { inspect, storeFailure, verified } = makeResumeChecks(parts)
  const instance = newId()
  let approvals = 0
  const executionOf = (requestId: string) => workflow.executionId({ requestId, request: "", metadata: {} })

  const signal = (checkpointId: string, decision: ApprovalDecision, echoed: unknown) =>
    Effect.gen(function*() {
      const owner = `${instance}/approval/${++approvals}`
      const claimed = yield* parts.checkpoints.claim(checkpointId, { owner, leaseFor: claimLease }).pipe(
        Effect.catchTags(storeFailure(checkpointId))
      )
      if (claimed._tag === "NotFound") {
        return yield* new CheckpointError({
          reason: "not_found",
          checkpointId,
          detail: "no such approval (or decided)"
        })
      }
      if (claimed._tag === "AlreadyClaimed") {
        return yield* new CheckpointError({
          reason: "already_claimed",
          checkpointId,
          detail: `another approval holds it (${claimed.owner})`
        })
      }
      // Verified again: the body may have been rewritten since it was read.
      // Refused, its claim is freed at once (the checkpoint stays, for forensics).
      const checkpoint = yield* verified(checkpointId, claimed.checkpoint, echoed).pipe(
        Effect.tapError(() => Effect.ignore(parts.checkpoints.release(checkpointId, owner)))
      )
      const deferred = approvalOf(checkpoint.phase)
      const token = DurableDeferred.tokenFromExecutionId(deferred, {
        workflow,
        executionId: yield* executionOf(checkpoint.requestId)
      })
      yield* DurableDeferred.succeed(deferred, { token, value: { decision, planDigest: checkpoint.planDigest } })
      yield* parts.checkpoints.complete(checkpointId, owner).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning("the decided approval's checkpoint was not removed", error.message).pipe(
            Effect.annotateLogs({ checkpointId })
          )
        )
      )
    })

  const approve = (
    checkpointId: string,
    decision: ApprovalDecision,
    options?: ResumeOptions
  ): Effect.Effect<void, CheckpointError> =>
    Effect.suspend(() => {
      const invalid = invalidArguments(checkpointId, decision)
      if (invalid !== undefined) return Effect.fail(invalid)
      if (!isDurableApproval(checkpointId)) {
        return Effect.fail(
          new CheckpointError({
            reason: "not_found",
            checkpointId,
            detail: "not a durable request's approval (a HITL checkpoint is resumed with Pipeline.resume)"
          })
        )
      }
      const echoed = echoedDigest(options)
      return Effect.zipRight(inspect(checkpointId, echoed), signal(checkpointId, decision, echoed))
    }).pipe(Effect.provide(engine))

  return approve
}
