/**
 * Where a hook run is recorded: on the request the fiber works for
 * (`Operations.currentRequest`, set by the pipeline around a request — a
 * HITL resume's handle holds the resume's own recorder), or nowhere outside
 * any request. The stage fold and the plan executor read it here rather
 * than being handed a recorder.
 *
 * (The operation combinator's `recorderOf` in `Operations.ts` does the same
 * lookup; sharing this one would need `currentRequest` defined here and
 * re-exported there, or the import would be a cycle.)
 */
import { Effect } from "effect"
import type { RuntimeFiber } from "effect/Fiber"
import { currentRequest } from "../Operations.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { noRecorder } from "./runPolicy.js"

/** The recorder of the request `fiber` works for; outside any request, one that records nothing. */
export const recorderOn = (fiber: RuntimeFiber<unknown, unknown>): RequestRecorder =>
  fiber.getFiberRef(currentRequest)?.recorder ?? noRecorder

/** {@link recorderOn} the current fiber: one FiberRef read. */
export const currentRecorder: Effect.Effect<RequestRecorder> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(recorderOn(fiber))
)
