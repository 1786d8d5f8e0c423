/**
 * Call snapshots (seed 003): a run's immutable call — its id, its start
 * time, where it happens, its parent run and its payload.
 */
import type { Clock } from "effect"
import { keepCall } from "../../domain/internal/liveShapes.js"
import type { Call, CallRef, Coordinates, Operation, Payloads } from "../../domain/Operation.js"
import { flatText } from "./flatText.js"
import type { SpecOf } from "./participants.js"

/** What a new run is about. */
export interface CallInit<Op extends Operation> {
  readonly coordinates: Coordinates
  readonly parent?: CallRef | undefined
  readonly payload: Payloads[Op]
  /** When the run began, if before now (an approval wait began at the suspension). Default: now. */
  readonly startedAt?: number | undefined
}

let counter = 0
const nextCallId = (operation: Operation): string => flatText(`${operation}-${(++counter).toString(36)}`)

/**
 * The runtime's own frozen copy of a payload: hooks cannot change it, and
 * freezing it never freezes the caller's objects (payloads are JSON-like
 * data: plain objects, arrays, primitives).
 */
const snapshotOf = <A>(value: A): A => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return Object.freeze(value.map(snapshotOf)) as A
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) copy[key] = snapshotOf((value as Record<string, unknown>)[key])
  return Object.freeze(copy) as A
}

/** A frozen copy of a run's coordinates (without absent members). */
const coordinatesOf = ({ phase, requestId, stepId }: Coordinates): Coordinates =>
  Object.freeze({
    requestId,
    ...(phase === undefined ? {} : { phase }),
    ...(stepId === undefined ? {} : { stepId })
  })

/**
 * A run's call. A call hooks see (`seen`) is a frozen copy; the call of a
 * run no hook sees is only ever held by the runtime (its children keep a
 * reference to it), so it is neither copied nor frozen.
 */
export const callOf = <Op extends Operation>(
  operation: Op,
  init: CallInit<Op>,
  clock: Clock.Clock,
  seen: boolean
): Call<Op> => {
  const callId = nextCallId(operation)
  const startedAt = init.startedAt ?? clock.unsafeCurrentTimeMillis()
  const { parent } = init
  // Kept among the newest calls: optimized code that embeds their shapes
  // survives idle-time full collections (liveShapes.ts).
  if (!seen) {
    const { coordinates, payload } = init
    return keepCall(
      parent === undefined
        ? { operation, callId, startedAt, coordinates, payload }
        : {
          operation,
          callId,
          startedAt,
          coordinates,
          parent: { operation: parent.operation, callId: parent.callId },
          payload
        }
    )
  }
  const coordinates = coordinatesOf(init.coordinates)
  const payload = snapshotOf(init.payload)
  return keepCall(
    parent === undefined
      ? Object.freeze({ operation, callId, startedAt, coordinates, payload })
      : Object.freeze({
        operation,
        callId,
        startedAt,
        coordinates,
        // A reference to the parent run, not its snapshot.
        parent: Object.freeze({ operation: parent.operation, callId: parent.callId }),
        payload
      })
  )
}

/** The spec of a participant's run on a call, recorded on `recorder`. */
export const specOf: SpecOf = (participant, sequence, call, recorder) => ({
  hookName: participant.id,
  point: participant.point,
  spanName: participant.spanName,
  metricLabels: participant.metricLabels,
  sequence,
  phase: call.coordinates.phase,
  operation: { operation: call.operation, callId: call.callId, stepId: call.coordinates.stepId },
  execution: participant.execution,
  limit: participant.limit,
  failure: participant.failure,
  recorder
})
