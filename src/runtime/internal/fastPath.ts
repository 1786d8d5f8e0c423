/**
 * The record entry of a `Hook.sync` operation-hook run that completed on
 * the synchronous fast path (transforms, Around observers): built directly,
 * the entry the full run would have made.
 */
import type { HookEffect, HookInvocation } from "../../domain/ExecutionRecord.js"
import type { HookPoint } from "../../domain/HookPoint.js"
import type { Operation } from "../../domain/Operation.js"
import { contributionHash } from "./hash.js"
import { keepLatest } from "./liveShapes.js"

const NO_EFFECTS: ReadonlyArray<HookEffect> = []

/**
 * The record entry of an operation hook's run that completed on the
 * synchronous fast path — the entry `entryOf` and `finish` would make for
 * it (a fast-path run is blocking and reports no effects).
 */
export const completedOperationEntry = (
  participant: { readonly id: string; readonly point: HookPoint },
  sequence: number,
  call: {
    readonly operation: Operation
    readonly callId: string
    readonly coordinates: { readonly phase?: number | undefined; readonly stepId?: string | undefined }
  },
  startedAt: number,
  duration: number,
  contribution?: unknown
): HookInvocation => {
  // One literal per common shape, every field in the object itself: entries
  // are kept with their record, and properties added after the literal would
  // take a second (out-of-object) allocation each. Keys keep the order they
  // always had.
  const { phase, stepId } = call.coordinates
  const name = participant.id
  const stage = participant.point
  const operation = call.operation
  const callId = call.callId
  let entry: { -readonly [K in keyof HookInvocation]: HookInvocation[K] }
  if (phase === undefined) {
    entry = {
      name,
      stage,
      outcome: "succeeded",
      status: "completed",
      sequence,
      startedAt,
      duration,
      effects: NO_EFFECTS,
      operation,
      callId
    }
    if (stepId !== undefined) entry.stepId = stepId
    keepLatest("operationEntry", entry)
  } else if (stepId === undefined) {
    entry = {
      name,
      stage,
      outcome: "succeeded",
      status: "completed",
      sequence,
      startedAt,
      duration,
      effects: NO_EFFECTS,
      phase,
      operation,
      callId
    }
    keepLatest("phaseEntry", entry)
  } else {
    entry = {
      name,
      stage,
      outcome: "succeeded",
      status: "completed",
      sequence,
      startedAt,
      duration,
      effects: NO_EFFECTS,
      phase,
      operation,
      callId,
      stepId
    }
    keepLatest("stepEntry", entry)
  }
  if (contribution !== undefined) entry.contributionHash = contributionHash(contribution)
  return entry
}
