/**
 * The durable request service's tag and shape, apart from its Layer: the
 * server serves durable requests when the service is in its context, and
 * importing the tag loads nothing of `@effect/workflow` (an optional peer
 * dependency) at run time.
 */
import { Context, type Effect, type Exit, type Option } from "effect"
import type { Completed, Rejected } from "../../domain/AgentResponse.js"
import type { CheckpointError, InvalidRequest, PipelineError } from "../../domain/PipelineError.js"
import type * as PipelineRequest from "../../domain/PipelineRequest.js"
import type { ApprovalDecision, ResumeOptions } from "../../pipeline/Approval.js"

/**
 * Durable requests over the agent's pipeline.
 *
 * @since 0.1.0
 * @category services
 */
export class DurablePipeline extends Context.Tag("effect-agent-pipeline/DurablePipeline")<
  DurablePipeline,
  DurablePipeline.Service
>() {}

/**
 * The types of the {@link DurablePipeline} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace DurablePipeline {
  /**
   * Where a durable request stands (`poll`).
   *
   * @since 0.1.0
   * @category models
   */
  export type Status =
    | { readonly _tag: "Running" }
    | { readonly _tag: "Suspended" }
    | { readonly _tag: "Complete"; readonly exit: Exit.Exit<Completed | Rejected, PipelineError> }

  /**
   * What durable requests offer.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Runs a request as a durable workflow and waits for its end:
     * `Completed`, or `Rejected` by a human at an approval (while it awaits
     * one, this waits too). The request id is the execution's key:
     * processing a request id again joins that request (its result, never a
     * second run); give one to make a submission safe to retry. Input is
     * decoded as `Pipeline.process` decodes it (`InvalidRequest`).
     */
    readonly process: (input: PipelineRequest.Input) => Effect.Effect<Completed | Rejected, PipelineError>
    /** Starts a request as {@link process} does and returns its request id without waiting. */
    readonly submit: (input: PipelineRequest.Input) => Effect.Effect<string, InvalidRequest>
    /**
     * Where a request stands: `Running`; `Suspended` while it awaits an
     * approval; `Complete` with its exit once done; `None` when this agent
     * knows nothing of it (never submitted, submitted but not started by a
     * runner yet, or its finished rows swept and its record gone).
     */
    readonly poll: (requestId: string) => Effect.Effect<Option.Option<DurablePipeline.Status>>
    /**
     * A human's decision on a durable request's plan, by the id of the
     * approval checkpoint (`<requestId>/approval/<phase>`, in the
     * `CheckpointStore` and the record's `checkpointId`). Checked as
     * `Pipeline.resume` checks: the decision is `"approve"` or `"reject"`,
     * the checkpoint's seal verifies with the agent's key (`tampered`), and
     * `options.planDigest`, the digest of the plan the approver saw, is its
     * plan's (`plan_mismatch`). The decision then goes to the request's
     * workflow — which runs the plan, or ends `Rejected` — and the checkpoint
     * is gone.
     */
    readonly approve: (
      checkpointId: string,
      decision: ApprovalDecision,
      options?: ResumeOptions
    ) => Effect.Effect<void, CheckpointError>
  }
}
