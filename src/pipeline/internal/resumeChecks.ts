/**
 * What a HITL resume checks before anything is claimed or runs (DESIGN §7
 * "an approval binds to what was approved"), failing closed:
 *
 * - the decision is exactly `"approve"` or `"reject"` (`invalid_decision`);
 * - the stored checkpoint decodes, names the id it is stored under, and its
 *   seal — plan digest and MAC — verifies with this agent's key (`tampered`);
 * - the plan digest the approver echoed, when given, is the checkpoint's
 *   (`plan_mismatch`).
 *
 * A refused checkpoint is logged as a warning and the refusal is written to
 * the request's record as a diagnostic (its lifecycle unchanged); the
 * checkpoint itself is left as it is, for forensics.
 */
import { Cause, Effect, Either, Option } from "effect"
import type { Checkpoint } from "../../domain/Checkpoint.js"
import { CheckpointError } from "../../domain/PipelineError.js"
import type { CheckpointKey } from "../../stores/CheckpointKey.js"
import type { CheckpointDecodeError, CheckpointStore } from "../../stores/CheckpointStore.js"
import type { ExecutionStore, ExecutionStoreError } from "../../stores/ExecutionStore.js"
import { isApprovalDecision, type ResumeOptions } from "../Approval.js"

/** What the checks need, resolved once when the pipeline is built. */
export interface ResumeChecksDeps {
  readonly recording: boolean
  readonly store: ExecutionStore.Service
  readonly checkpoints: CheckpointStore.Service
  readonly checkpointKey: CheckpointKey.Service
}

/** An untyped caller's value, described without trusting it (no getters run, long text cut). */
const describeValue = (u: unknown): string =>
  typeof u === "string"
    ? JSON.stringify(u.length > 80 ? `${u.slice(0, 80)}…` : u)
    : u === null
    ? "null"
    : `a ${typeof u}`

/**
 * The arguments of `resume` as an untyped caller may pass them (JavaScript,
 * a server handing a request body through): a `CheckpointError` for a
 * checkpoint id that is not a string or a decision that is not exactly one
 * of the two; `undefined` when they are.
 */
export const invalidArguments = (checkpointId: unknown, decision: unknown): CheckpointError | undefined => {
  if (typeof checkpointId !== "string") {
    return new CheckpointError({
      reason: "not_found",
      checkpointId: describeValue(checkpointId),
      detail: "a checkpoint id is a string"
    })
  }
  if (!isApprovalDecision(decision)) {
    return new CheckpointError({
      reason: "invalid_decision",
      checkpointId,
      detail: `the decision is exactly "approve" or "reject", not ${describeValue(decision)}; nothing was claimed`
    })
  }
  return undefined
}

/**
 * The plan digest the approver echoed, read once (a getter that throws, or
 * a value that changes between reads, must not decide anything): `undefined`
 * when none was given; a value that matches no digest when it cannot be read.
 */
export const echoedDigest = (options: ResumeOptions | undefined): unknown => {
  try {
    return options === undefined || options === null ? undefined : options.planDigest
  } catch {
    return Symbol.for("unreadable planDigest")
  }
}

/** Why a checkpoint is refused before anything runs. */
type Refusal = "tampered" | "plan_mismatch"

/** Builds the checks over their services. */
export const makeResumeChecks = (deps: ResumeChecksDeps) => {
  const { checkpointKey, checkpoints, recording, store } = deps

  /**
   * Refuses the checkpoint: logged as a warning, written to the request's
   * record as a diagnostic (its lifecycle unchanged; a record that cannot be
   * written is logged, never surfaced), then the `CheckpointError`.
   */
  const refuse = (reason: Refusal, checkpointId: string, requestId: string | undefined, detail: string) =>
    Effect.gen(function*() {
      const line = `resume of checkpoint ${checkpointId} refused (${reason}): ${detail}; nothing ran`
      yield* Effect.logWarning(line).pipe(Effect.annotateLogs({ checkpointId, requestId: requestId ?? "unknown" }))
      if (recording && requestId !== undefined) {
        // A running request's recorder owns its record's revisions: the
        // warning says it then, the record does not.
        yield* store.update(
          requestId,
          (record) =>
            record.lifecycle?.status === "running"
              ? undefined
              : { ...record, diagnostics: [...record.diagnostics, line] }
        ).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning("the refused resume could not be recorded", Cause.pretty(cause)).pipe(
              Effect.annotateLogs({ checkpointId, requestId })
            )
          )
        )
      }
      return yield* Effect.fail(new CheckpointError({ reason, checkpointId, detail }))
    })

  /** What a store failure to read a checkpoint is to the resume. */
  const storeFailure = (checkpointId: string) => ({
    ExecutionStoreError: (error: ExecutionStoreError) =>
      Effect.fail(new CheckpointError({ reason: "not_found", checkpointId, detail: error.message })),
    // The store never hands out (nor leaves claimed) a body that does not decode.
    CheckpointDecodeError: (error: CheckpointDecodeError) =>
      refuse("tampered", checkpointId, error.requestId, `the stored checkpoint does not decode: ${error.detail}`)
  })

  /** The checkpoint, if its seal verifies with this agent's key and it holds the plan the approver saw. */
  const verified = (checkpointId: string, checkpoint: Checkpoint, echoed: unknown) =>
    Effect.suspend(() => {
      // The id a row is stored under must be the one its sealed body names:
      // another checkpoint's intact body is not this checkpoint.
      const sealed = checkpoint.checkpointId === checkpointId
        ? checkpointKey.verify(checkpoint)
        : Either.left(`it names itself ${JSON.stringify(checkpoint.checkpointId)}`)
      if (Either.isLeft(sealed)) {
        // Unverified, its request id is only a claim: all there is to record against.
        return refuse(
          "tampered",
          checkpointId,
          checkpoint.requestId,
          `the stored checkpoint is not the one this agent sealed: ${sealed.left}`
        )
      }
      if (echoed !== undefined && echoed !== checkpoint.planDigest) {
        return refuse(
          "plan_mismatch",
          checkpointId,
          checkpoint.requestId,
          `the approver saw plan ${describeValue(echoed)}; the checkpoint holds plan ${checkpoint.planDigest}`
        )
      }
      return Effect.succeed(checkpoint)
    })

  /** Reads and verifies the checkpoint before anything is claimed. */
  const inspect = (checkpointId: string, echoed: unknown) =>
    checkpoints.get(checkpointId).pipe(
      Effect.catchTags(storeFailure(checkpointId)),
      Effect.flatMap(Option.match({
        onNone: () =>
          Effect.fail(
            new CheckpointError({
              reason: "not_found",
              checkpointId,
              detail: "no such checkpoint (or already resumed)"
            })
          ),
        onSome: (checkpoint) => verified(checkpointId, checkpoint, echoed)
      }))
    )

  return { inspect, verified, storeFailure }
}
