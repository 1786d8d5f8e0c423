/**
 * Operation participants as the operations engine holds them: the handler
 * shape of each kind (Around, Guard, transform) with its operation erased,
 * and the spec of one participant's run on a call. Shared by the engine's
 * parts (`observers.ts`, `guards.ts`, `transforms.ts`) and `Operations.ts`,
 * which re-exports the handler shapes.
 */
import type { Cause, Effect } from "effect"
import type { TransformPoint } from "../../domain/HookPoint.js"
import type { Call, Result, RunMeta } from "../../domain/Operation.js"
import type { Participant } from "../Subscription.js"
import type { Finish, TransformValues } from "./operationHooks.js"
import type { RequestRecorder } from "./requestRecorder.js"
import type { OperationCoordinates, RunSpec } from "./run.js"

// The engine calls each handler with a call of the operation the handler
// was registered for; these method-shaped types let one engine hold them all.
/** An Around observer of some operation. */
export type AnyAround = {
  bivarianceHack(call: Call, meta: RunMeta): Effect.Effect<Finish | void, unknown>
}["bivarianceHack"]
/** A guard of some operation. */
export type AnyGuard = {
  bivarianceHack<A, E>(call: Call, proceed: Effect.Effect<A, E>, meta: RunMeta): Effect.Effect<A, unknown>
}["bivarianceHack"]

/** A transform of some point (its value is checked at run time: handlers may be JavaScript). */
export type AnyTransform = {
  bivarianceHack(call: Call, value: TransformValues[TransformPoint], meta: RunMeta): Effect.Effect<unknown, unknown>
}["bivarianceHack"]

/** An `on_error` handler. */
export type AnyOnError = {
  bivarianceHack(
    call: Call,
    result: Result,
    cause: Cause.Cause<unknown>,
    meta: RunMeta
  ): Effect.Effect<unknown, unknown>
}["bivarianceHack"]

/** The spec of a participant's run on an operation: where it ran is always known. */
export interface OperationRunSpec extends RunSpec {
  readonly operation: OperationCoordinates
}

/** Builds the spec of `participant`'s run at position `sequence` on the run `call`. */
export type SpecOf = (
  participant: Participant<unknown>,
  sequence: number,
  call: Call,
  recorder: RequestRecorder
) => OperationRunSpec
