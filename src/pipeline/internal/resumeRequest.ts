/**
 * HITL resume (seed 000 §3, DESIGN §4 step 5): takes the checkpoint (a
 * resume happens at most once), reopens the request's record — or rebuilds
 * it from the checkpoint when none is stored — and, if approved, runs the
 * approved plan on the buffered path without AfterPlanning (C8).
 *
 * The human's decision ends one run of the `approval_wait` operation, which
 * began when the checkpoint was saved: observers see the wait when the
 * decision arrives (a rejection is its `failed` outcome).
 */
import { Clock, Effect, Either, Option, Scope } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import * as RequestRecorder from "../../runtime/RequestRecorder.js"
import type { CheckpointStore } from "../../stores/CheckpointStore.js"
import type { ExecutionStore } from "../../stores/ExecutionStore.js"
import type { Operations } from "../../runtime/Operations.js"
import type { PipelineResult } from "../AgentResponse.js"
import type { Checkpoint } from "../../domain/Checkpoint.js"
import type { ApprovalDecision } from "../Approval.js"
import { RequestId } from "../../domain/PipelineContext.js"
import { CheckpointError, type PipelineError } from "../../domain/PipelineError.js"
import { owned, recordWriter, type RequestState } from "./requestRecord.js"

/** What resume needs, resolved once when the pipeline is built. */
export interface ResumeRequestDeps {
  readonly recording: boolean
  readonly store: ExecutionStore.Service
  readonly checkpoints: CheckpointStore["Type"]
  readonly operations: Operations
  /** The buffered path, run from the checkpoint's phase with its approved plan. */
  readonly buffered: (
    state: RequestState,
    resume: { readonly checkpoint: Checkpoint }
  ) => Effect.Effect<PipelineResult, PipelineError>
}

/** Builds `resume` over its services. */
export const makeResumeRequest = (deps: ResumeRequestDeps) => {
  const { buffered, checkpoints, operations, recording, store } = deps

  const resume = (checkpointId: string, decision: ApprovalDecision): Effect.Effect<PipelineResult, PipelineError> =>
    Effect.gen(function*() {
      const found = yield* checkpoints.take(checkpointId).pipe(
        Effect.mapError((e) => new CheckpointError({ reason: "not_found", checkpointId, detail: e.message }))
      )
      if (Option.isNone(found)) {
        return yield* Effect.fail(
          new CheckpointError({ reason: "not_found", checkpointId, detail: "no such checkpoint (or already resumed)" })
        )
      }
      const checkpoint = found.value
      const startedAt = yield* Clock.currentTimeMillis
      const stored = recording ? yield* Effect.either(store.get(checkpoint.requestId)) : Either.right(Option.none())
      const previous = Either.isRight(stored) ? stored.right : Option.none()
      const initial: ExecutionRecord = Option.isSome(previous)
        ? { ...previous.value, mode: "resume", lifecycle: { status: "running", startedAt } }
        : {
          schemaVersion: 1,
          requestId: checkpoint.requestId,
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
      const requestId = checkpoint.requestId
      const call = operations.active
        ? yield* operations.call("request", {
          coordinates: { requestId },
          payload: { mode: "resume", request: checkpoint.request }
        })
        : undefined
      const recorder = recording
        ? RequestRecorder.make(recordWriter(store, operations, requestId, call), initial)
        : RequestRecorder.disabled(initial)
      const state: RequestState = {
        context: Object.freeze({
          requestId: RequestId.make(requestId),
          request: checkpoint.request,
          metadata: checkpoint.metadata,
          enrichments: Object.freeze({ ...checkpoint.enrichments })
        }),
        recorder,
        startedAt,
        scope: yield* Scope.make(),
        call
      }
      const decided: Effect.Effect<void, CheckpointError> = decision === "approve"
        ? Effect.void
        : Effect.fail(new CheckpointError({ reason: "rejected", checkpointId, detail: "the plan was rejected" }))
      const waited = call === undefined ? decided : Effect.flatMap(
        operations.call("approval_wait", {
          coordinates: { requestId, phase: checkpoint.phase },
          parent: call,
          payload: { checkpointId, reason: checkpoint.reason },
          startedAt: checkpoint.createdAt
        }),
        (wait) => operations.run(wait, recorder, decided)
      )
      return yield* owned(state, Effect.zipRight(waited, buffered(state, { checkpoint })), "resume", operations)
    })

  return resume
}
