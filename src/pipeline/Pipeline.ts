/**
 * The request lifecycle (seed 000 §3, DESIGN §4): decode → auto-promote →
 * BeforePlanning (may short-circuit) → for each phase: plan, AfterPlanning,
 * HITL, execute → AfterExecution → synthesis (buffered or streamed) →
 * AfterSynthesis. Every step appends evidence to the execution record, which
 * is finalized on every exit — success, failure, interruption, suspension.
 *
 * This module defines the service and wires it; each part of the lifecycle
 * lives in `internal/`: the request's state and record (`requestRecord`), the
 * phase loop (`phaseLoop`), the stages around it (`requestStages`), the
 * buffered, streaming, resume and workflow paths (`bufferedRequest`,
 * `streamRequest`, `resumeRequest`, `workflowRequest`).
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Layer, Option, Stream } from "effect"
import { Inference } from "../ai/Inference.js"
import { ToolRegistry } from "../ai/ToolRegistry.js"
import type { AgentResponse, Completed, PipelineResult, StreamEvent, Suspended } from "../domain/AgentResponse.js"
import type { InvalidPipelineOptions, PipelineError } from "../domain/PipelineError.js"
import type * as PipelineRequest from "../domain/PipelineRequest.js"
import type { RoutingPlanInput } from "../domain/RoutingPlan.js"
import { HookRuntime } from "../runtime/internal/hookRuntime.js"
import * as LeaseKeeper from "../runtime/internal/leaseKeeper.js"
import { CheckpointKey, makeRandom } from "../stores/CheckpointKey.js"
import { CheckpointStore } from "../stores/CheckpointStore.js"
import { ExecutionStore } from "../stores/ExecutionStore.js"
import { AfterExecution } from "./AfterExecution.js"
import { AfterPlanning } from "./AfterPlanning.js"
import { AfterSynthesis } from "./AfterSynthesis.js"
import { type ApprovalDecision, ApprovalPolicy, type ResumeOptions } from "./Approval.js"
import { BeforePlanning } from "./BeforePlanning.js"
import * as ConversationHistory from "./ConversationHistory.js"
import { RedactionGuardrail } from "./Guardrails.js"
import { makeBufferedRequest } from "./internal/bufferedRequest.js"
import { makePhaseLoop } from "./internal/phaseLoop.js"
import { register } from "./internal/pipelineParts.js"
import { activePreparer } from "./internal/promptValues.js"
import { redactingStore } from "./internal/redactingStore.js"
import { redactError, textRedaction } from "./internal/redactValues.js"
import { makeBegin, newId } from "./internal/requestRecord.js"
import { makeRequestStages } from "./internal/requestStages.js"
import { makeResumeRequest } from "./internal/resumeRequest.js"
import { makeStreamRequest } from "./internal/streamRequest.js"
import { makeWorkflowRequest } from "./internal/workflowRequest.js"
import * as Options from "./PipelineOptions.js"
import * as PromptBuilder from "./PromptBuilder.js"
import * as ShortCircuit from "./ShortCircuit.js"

/**
 * Pipeline options (see the `PipelineOptions` module for each field and its default).
 *
 * @since 0.1.0
 * @category models
 */
export type PipelineOptions = Options.PipelineOptions

/**
 * The pipeline service.
 *
 * @since 0.1.0
 * @category services
 */
export class Pipeline extends Context.Tag("effect-agent-pipeline/Pipeline")<Pipeline, Pipeline.Service>() {}

/**
 * The types of the {@link Pipeline} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace Pipeline {
  /**
   * What the pipeline provides: processing, streaming and resuming requests.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Runs a request to completion (`Completed`) or to a HITL suspension
     * (`Suspended`). Untyped input (JSON from the wire) goes through
     * `PipelineRequest.decode` first, or is decoded here with the same checks.
     */
    readonly process: (input: PipelineRequest.Input) => Effect.Effect<Completed | Suspended, PipelineError>
    /** Streams synthesis tokens, then the final (post-hook) response or the suspension. */
    readonly stream: (input: PipelineRequest.Input) => Stream.Stream<StreamEvent, PipelineError>
    /**
     * Resumes a suspended request with a human's decision — exactly
     * `"approve"` or `"reject"` (anything else at run time:
     * `CheckpointError` `invalid_decision`, nothing claimed). The stored
     * checkpoint's seal is verified before it is claimed and again once
     * claimed: one that does not decode or does not verify with this agent's
     * checkpoint key is `tampered` (it stays stored, the attempt is recorded,
     * nothing runs). `options.planDigest`, the digest of the plan the
     * approver saw, must be the checkpoint's (`plan_mismatch`).
     *
     * `approve` runs the required after-planning hook again on the stored
     * plan (a rejection, or a changed plan, is `RequiredAfterPlanningError`;
     * no other AfterPlanning hook runs again), then the plan (`Completed`, or
     * `Suspended` again at a later phase); `reject` ends `Rejected` (nothing
     * of the plan runs). The checkpoint is claimed while the resume runs: it
     * is gone once the resume succeeded, and resumable again after a failure
     * or interruption. Also fails with `CheckpointError` `not_found`
     * (unknown or already resumed) or `already_claimed` (another resume is
     * running it).
     */
    readonly resume: (
      checkpointId: string,
      decision: ApprovalDecision,
      options?: ResumeOptions
    ) => Effect.Effect<PipelineResult, PipelineError>
    /** Workflow mode: executes a given plan and synthesizes; runs no pipeline hooks (C20). */
    readonly executePlanWithSynthesis: (
      input: PipelineRequest.Input,
      plan: RoutingPlanInput
    ) => Effect.Effect<AgentResponse, PipelineError>
  }
}

/**
 * Builds the pipeline from its services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: PipelineOptions) =>
  Effect.gen(function*() {
    const resolved = yield* Options.resolve(options)
    const { concurrency, maxEnrichmentBytes, maxPhases, recording } = resolved
    const chunkBytes = resolved.shortCircuitChunkBytes
    const limits: PipelineRequest.Limits = resolved
    const beforePlanning = yield* BeforePlanning
    const afterPlanning = yield* AfterPlanning
    const afterExecution = yield* AfterExecution
    const afterSynthesis = yield* AfterSynthesis
    const inference = yield* Inference
    const { operations } = yield* HookRuntime
    const tools = yield* ToolRegistry
    // The redaction guardrail, when installed: what leaves the pipeline —
    // responses, tokens, errors — is redacted, and so is what it stores
    // unless the operator keeps raw evidence.
    const guardrail = Option.getOrUndefined(yield* Effect.serviceOption(RedactionGuardrail))
    const redact = guardrail === undefined ? undefined : textRedaction(guardrail.redactor)
    const store = guardrail === undefined || guardrail.rawEvidence
      ? yield* ExecutionStore
      : redactingStore(yield* ExecutionStore, guardrail.redactor)
    const checkpoints = yield* CheckpointStore
    const approval = yield* Effect.serviceOption(ApprovalPolicy)
    // Without a key (a pipeline built by hand), a fresh one: its checkpoints
    // resume only in this pipeline, and are refused elsewhere (fail closed).
    const checkpointKey = Option.getOrElse(yield* Effect.serviceOption(CheckpointKey), makeRandom)
    const prompts = yield* PromptBuilder.current
    const preparer = yield* ConversationHistory.currentPreparer
    // `undefined` for the identity: then no request does any preparation work.
    const promptValues = yield* activePreparer
    const gate = yield* Effect.serviceOption(ShortCircuit.Gate)

    // Every part is built once, here: per request, only its closures run.
    // Running records' owner leases, renewed while this pipeline lives.
    const leases = yield* LeaseKeeper.make(Duration.toMillis(resolved.recordLease))
    const begin = makeBegin({
      limits,
      recording,
      store,
      preparer,
      operations,
      leases,
      maxRecordBytes: resolved.maxRecordBytes
    })
    const { executePhase, planPhase, runPhases, validationFor, withPhaseRun } = makePhaseLoop({
      concurrency,
      maxPhases,
      toolTimeout: resolved.toolTimeout,
      maxToolResultBytes: resolved.maxToolResultBytes,
      inference,
      tools,
      operations,
      afterPlanning,
      checkpoints,
      checkpointKey,
      approval,
      prompts
    })
    const stages = makeRequestStages({
      recording,
      maxEnrichmentBytes,
      beforePlanning,
      afterExecution,
      afterSynthesis,
      gate,
      prompts,
      promptValues,
      runPhases,
      operations,
      tools,
      redact
    })
    const { buffered, process } = makeBufferedRequest({ begin, inference, stages, operations })
    const stream = makeStreamRequest({
      begin,
      inference,
      operations,
      stages,
      chunkBytes,
      streamGuard: guardrail?.streamGuard
    })
    const resume = makeResumeRequest({
      maxRecordBytes: resolved.maxRecordBytes,
      recording,
      store,
      checkpoints,
      checkpointKey,
      afterPlanning,
      validationFor: (priorStepIds) => validationFor(priorStepIds),
      hookScope: stages.hookScope,
      operations,
      buffered,
      instance: yield* Effect.sync(newId),
      claimLease: resolved.checkpointClaimLease
    })
    const executePlanWithSynthesis = makeWorkflowRequest({
      begin,
      inference,
      operations,
      validationFor,
      executePhase,
      synthesisPrompt: stages.synthesisPrompt,
      hookScope: stages.hookScope,
      promptValues,
      redact
    })

    const parts = {
      begin,
      recording,
      limits,
      store,
      inference,
      checkpoints,
      checkpointKey,
      operations,
      stages,
      phases: { planPhase, executePhase, withPhaseRun, validationFor },
      afterPlanning,
      maxPhases,
      promptValues,
      redact
    }
    const service: Pipeline.Service = { process, stream, resume, executePlanWithSynthesis }
    if (redact === undefined) return register(service, parts)
    // Errors hand the caller texts too (a rejected plan's model output).
    const redacted = <E>(error: E) => redactError(error, redact)
    return register(
      {
        process: (input) => Effect.mapError(process(input), redacted),
        stream: (input) => Stream.mapError(stream(input), redacted),
        resume: (checkpointId, decision, options) => Effect.mapError(resume(checkpointId, decision, options), redacted),
        executePlanWithSynthesis: (input, plan) => Effect.mapError(executePlanWithSynthesis(input, plan), redacted)
      } satisfies Pipeline.Service,
      parts
    )
  })

/**
 * The pipeline as a Layer over its services, each taken from the context.
 * This is the low-level building block: assemble agents with `Agent.layer`,
 * which names every part (the model is required) and provides this Layer
 * with them. A `CheckpointKey` in the context seals and verifies its
 * checkpoints; without one, the pipeline makes a random key of its own
 * (its checkpoints cannot be resumed by any other pipeline).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, OfflineModel, Pipeline } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const pipeline = yield* Pipeline.Pipeline
 *   const result = yield* pipeline.process({ request: "What is the stock quote for ACME?" })
 *   if (result._tag === "Completed") console.log(result.response.response)
 * }).pipe(Effect.provide(Agent.layer({ model: OfflineModel.layer, tools: [] })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: PipelineOptions): Layer.Layer<
  Pipeline,
  InvalidPipelineOptions,
  | BeforePlanning
  | AfterPlanning
  | AfterExecution
  | AfterSynthesis
  | HookRuntime
  | Inference
  | ToolRegistry
  | ExecutionStore
  | CheckpointStore
> => Layer.scoped(Pipeline, make(options))
