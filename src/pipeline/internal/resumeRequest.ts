/**
 * HITL resume (seed 000 §3, DESIGN §4 step 5 and §7 "an approval binds to
 * what was approved"): checks the decision, verifies the checkpoint, claims
 * it under a lease, reopens the request's record — or rebuilds it from the
 * checkpoint when none is stored — and, if approved, runs the required
 * after-planning hook again on the stored plan, then that plan on the
 * buffered path (ordinary AfterPlanning hooks do not run again: C8). A
 * rejection is a decided outcome, not a failure: the resume ends `Rejected`
 * and its record `rejected`.
 *
 * Fail closed, in this order, before anything runs (`resumeChecks.ts`):
 * - a decision other than exactly `"approve"` / `"reject"` is
 *   `invalid_decision`; nothing is read or claimed;
 * - the stored checkpoint is read and its seal verified *before* it is
 *   claimed, and again on the body the claim returns (it may have been
 *   rewritten in between): a body that does not decode, or whose plan
 *   digest or MAC does not verify with this agent's key, is `tampered`;
 * - a `planDigest` the approver echoed that is not the checkpoint's is
 *   `plan_mismatch`.
 * A refused checkpoint stays stored (for forensics), unclaimed; the refusal
 * is logged as a warning and — `tampered` and `plan_mismatch` — written to
 * the request's record as a diagnostic, its lifecycle unchanged.
 *
 * The claim follows the resume's exit: a success (completed, suspended
 * again, or rejected) completes the checkpoint — a decided checkpoint is not
 * resumable again — while a failure, a defect or an interruption releases
 * it, so the same decision can be resumed again. A resume that finds the
 * checkpoint claimed by another (whose lease holds) fails with
 * `already_claimed`. Each resume claims under its own owner name (this
 * pipeline's id and the resume's number), so a resume whose lease ran out
 * and whose checkpoint was claimed since cannot complete or release the
 * newer claim.
 *
 * The human's decision ends one run of the `approval_wait` operation, which
 * began when the checkpoint was saved: observers see the wait, with the
 * decision, when it arrives.
 */
import { Cause, type Duration, Effect, Either, Exit, Option, Scope } from "effect"
import { type PipelineResult, Rejected } from "../../domain/AgentResponse.js"
import type { Checkpoint } from "../../domain/Checkpoint.js"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { RequestId } from "../../domain/PipelineContext.js"
import { CheckpointError, type PipelineError } from "../../domain/PipelineError.js"
import type * as PlanValidation from "../../domain/PlanValidation.js"
import * as RequestRecorder from "../../runtime/internal/requestRecorder.js"
import { elapsedMillis } from "../../runtime/internal/timing.js"
import type { Operations } from "../../runtime/Operations.js"
import type { CheckpointKey } from "../../stores/CheckpointKey.js"
import { type CheckpointStore, ClaimResult } from "../../stores/CheckpointStore.js"
import type { ExecutionStore } from "../../stores/ExecutionStore.js"
import type { AfterPlanning } from "../AfterPlanning.js"
import type { ApprovalDecision, ResumeOptions } from "../Approval.js"
import { isDurableApproval } from "./pipelineParts.js"
import { recordWriter } from "./recordWriter.js"
import { alreadyValidated, owned, type RequestState } from "./requestRecord.js"
import { echoedDigest, invalidArguments, makeResumeChecks } from "./resumeChecks.js"

/** What resume needs, resolved once when the pipeline is built. */
export interface ResumeRequestDeps {
  readonly recording: boolean
  /** The largest record written (JSON text, bytes). */
  readonly maxRecordBytes?: number | undefined
  readonly store: ExecutionStore.Service
  readonly checkpoints: CheckpointStore.Service
  /** Verifies every checkpoint before it is claimed and before it runs. */
  readonly checkpointKey: CheckpointKey.Service
  /** The required boundary, run again on the approved plan. */
  readonly afterPlanning: AfterPlanning.Service
  /** What a plan of a phase after `priorStepIds` is validated against. */
  readonly validationFor: (priorStepIds: ReadonlySet<string>) => PlanValidation.ValidationContext
  /** Runs hooks inside the request's scope (what the buffered path runs its stages in). */
  readonly hookScope: <A, E>(state: RequestState, effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  readonly operations: Operations
  /** This pipeline's id: the owner of its resumes' claims (each adds its own number). */
  readonly instance: string
  /** How long a resume's claim on its checkpoint holds. */
  readonly claimLease: Duration.Duration
  /** The buffered path, run from the checkpoint's phase with its approved plan. */
  readonly buffered: (
    state: RequestState,
    resume: { readonly checkpoint: Checkpoint }
  ) => Effect.Effect<PipelineResult, PipelineError>
}

/**
 * `owned` finalizes every successful exit as `succeeded` (or `suspended`): a
 * rejected resume's recorder turns that into `rejected`. A failed or
 * interrupted exit keeps its own lifecycle.
 */
const finalizingAsRejected = (recorder: RequestRecorder.RequestRecorder): RequestRecorder.RequestRecorder => ({
  // Delegated one by one: a recorder's members may be methods (not own properties a spread would copy).
  enabled: recorder.enabled,
  current: () => recorder.current(),
  modify: (f) => recorder.modify(f),
  modifyNow: (f) => recorder.modifyNow(f),
  startInvocation: () => recorder.startInvocation(),
  appendNow: (invocation) => recorder.appendNow(invocation),
  flush: recorder.flush,
  renew: (leaseExpiresAt) => recorder.renew(leaseExpiresAt),
  flushIfChanged: recorder.flushIfChanged,
  finalize: (lifecycle) =>
    recorder.finalize(lifecycle.status === "succeeded" ? { ...lifecycle, status: "rejected" } : lifecycle)
})

/** Epoch milliseconds as ISO text, when they are a date at all (a backend hands them over). */
const isoOrMillis = (millis: number): string =>
  Number.isFinite(millis) && Math.abs(millis) <= 8.64e15 ? new Date(millis).toISOString() : `${millis} ms`

/** Builds `resume` over its services. */
export const makeResumeRequest = (deps: ResumeRequestDeps) => {
  const {
    afterPlanning,
    buffered,
    checkpoints,
    claimLease,
    hookScope,
    instance,
    operations,
    recording,
    store,
    validationFor
  } = deps
  let resumes = 0
  const { inspect, storeFailure, verified } = makeResumeChecks(deps)

  const claim = (checkpointId: string) =>
    Effect.suspend(() => {
      const owner = `${instance}/${++resumes}`
      return checkpoints.claim(checkpointId, { owner, leaseFor: claimLease }).pipe(
        Effect.map((result) => ({ owner, result })),
        // The store released an undecodable body's claim already.
        Effect.catchTags(storeFailure(checkpointId))
      )
    })

  // The resume's outcome is already decided: a store that cannot settle the
  // claim is logged, never surfaced (the lease still runs out).
  const settle = (checkpointId: string, owner: string, exit: Exit.Exit<unknown, unknown>) => {
    const succeeded = Exit.isSuccess(exit)
    const action = succeeded ? "completed" : "released"
    return (succeeded ? checkpoints.complete(checkpointId, owner) : checkpoints.release(checkpointId, owner)).pipe(
      Effect.flatMap((held) =>
        held
          ? Effect.void
          : Effect.logWarning(`checkpoint claim not ${action}: its lease ran out and it was claimed since`)
      ),
      Effect.catchAllCause((cause) => Effect.logWarning(`checkpoint claim not ${action}`, Cause.pretty(cause))),
      Effect.annotateLogs({ checkpointId, owner })
    )
  }

  /**
   * The required boundary, again, on the approved plan (DESIGN §7): its
   * rule may have changed since the suspension, and a seal only says the
   * plan is the one suspended — not that it is still allowed.
   */
  const requiredAgain = (state: RequestState, checkpoint: Checkpoint) => {
    const priorStepIds = checkpoint.priorPhases.flatMap((p) => p.steps.map((s) => s.step_id))
    return hookScope(
      state,
      afterPlanning.runRequired(state, checkpoint.plan, {
        phase: checkpoint.phase,
        priorStepIds,
        validation: validationFor(new Set(priorStepIds))
      })
    )
  }

  const run = (checkpoint: Checkpoint, decision: ApprovalDecision): Effect.Effect<PipelineResult, PipelineError> =>
    Effect.gen(function*() {
      const { checkpointId, requestId } = checkpoint
      const clock = yield* Effect.clock
      const startedAt = clock.unsafeCurrentTimeMillis()
      const clockStart = elapsedMillis(clock)
      const stored = recording ? yield* Effect.either(store.get(requestId)) : Either.right(Option.none())
      const previous = Either.isRight(stored) ? stored.right : Option.none()
      const initial: ExecutionRecord = Option.isSome(previous)
        ? { ...previous.value, mode: "resume", lifecycle: { status: "running", startedAt } }
        : {
          schemaVersion: 1,
          requestId,
          recordRevision: 0,
          mode: "resume",
          request: checkpoint.request,
          metadata: checkpoint.metadata,
          lifecycle: { status: "running", startedAt },
          phases: checkpoint.priorPhases,
          hookInvocations: [],
          checkpointId,
          diagnostics: []
        }
      const call = operations.active
        ? yield* operations.call("request", {
          coordinates: { requestId },
          payload: { mode: "resume", request: checkpoint.request }
        })
        : undefined
      const written = recording
        ? RequestRecorder.make(recordWriter(store, operations, requestId, call), initial, {
          maxBytes: deps.maxRecordBytes
        })
        : RequestRecorder.disabled(initial)
      const recorder = decision === "approve" ? written : finalizingAsRejected(written)
      const state: RequestState = {
        context: Object.freeze({
          requestId: RequestId.make(requestId),
          request: checkpoint.request,
          metadata: checkpoint.metadata,
          enrichments: Object.freeze({ ...checkpoint.enrichments })
        }),
        recorder,
        startedAt,
        clockStart,
        scope: yield* Scope.make(),
        call
      }
      const waited = call === undefined ? Effect.void : Effect.flatMap(
        operations.call("approval_wait", {
          coordinates: { requestId, phase: checkpoint.phase },
          parent: call,
          payload: { checkpointId, reason: checkpoint.reason, decision },
          startedAt: checkpoint.createdAt
        }),
        (wait) => operations.run(wait, Effect.void)
      )
      const body: Effect.Effect<PipelineResult, PipelineError> = decision === "approve"
        ? waited.pipe(
          Effect.zipRight(requiredAgain(state, checkpoint)),
          Effect.zipRight(buffered(state, { checkpoint }))
        )
        : Effect.as(
          waited,
          new Rejected(
            { requestId, checkpointId, phase: checkpoint.phase, reason: checkpoint.reason },
            alreadyValidated
          )
        )
      return yield* owned(state, body, "resume", operations, hookScope)
    })

  const resume = (
    checkpointId: string,
    decision: ApprovalDecision,
    options?: ResumeOptions
  ): Effect.Effect<PipelineResult, PipelineError> =>
    Effect.suspend(() => {
      // Untyped callers (JavaScript, a server passing a body through) get a
      // typed refusal, never a coerced decision.
      const invalid = invalidArguments(checkpointId, decision)
      if (invalid !== undefined) return Effect.fail(invalid)
      if (isDurableApproval(checkpointId)) {
        return Effect.fail(
          new CheckpointError({
            reason: "not_found",
            checkpointId,
            detail:
              "a durable request's approval: its workflow runs the plan (DurablePipeline.approve); nothing was claimed"
          })
        )
      }
      const echoed = echoedDigest(options)
      return Effect.zipRight(
        inspect(checkpointId, echoed),
        Effect.acquireUseRelease(
          claim(checkpointId),
          ({ result }) =>
            ClaimResult.$match(result, {
              // Verified again: the body may have been rewritten since it was read.
              Claimed: ({ checkpoint }) =>
                Effect.flatMap(verified(checkpointId, checkpoint, echoed), (approved) => run(approved, decision)),
              NotFound: () =>
                Effect.fail(
                  new CheckpointError({
                    reason: "not_found",
                    checkpointId,
                    detail: "no such checkpoint (or already resumed)"
                  })
                ),
              AlreadyClaimed: ({ expiresAt, owner }) =>
                Effect.fail(
                  new CheckpointError({
                    reason: "already_claimed",
                    checkpointId,
                    detail: `another resume holds it (${owner}, until ${isoOrMillis(expiresAt)})`
                  })
                )
            }),
          ({ owner, result }, exit) => result._tag === "Claimed" ? settle(checkpointId, owner, exit) : Effect.void
        )
      )
    })

  return resume
}
