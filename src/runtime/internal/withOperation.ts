/**
 * The operation combinator's body (`Operations.withOperation`): a run nobody
 * sees runs its body directly; any other gets its call snapshot, its
 * transforms inside the guarded effect (so a retry repeats them) and its
 * observers and guards around it. A `before_inference` transform that
 * served the response (`Served`) skips the body: the `after_inference`
 * transforms run on the served text, told who served it.
 */
import { Effect, type Fiber } from "effect"
import type { TransformPoint } from "../../domain/HookPoint.js"
import type { Call, CallRef, Operation } from "../../domain/Operation.js"
import type { HookDenied, HookFailed } from "../../domain/PipelineError.js"
import * as Calls from "./calls.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { pointsOf } from "./runPolicy.js"
import { isServed, type Served } from "./served.js"
import { clockOf } from "./timing.js"

/** The parts of the runtime the combinator uses. */
export interface Parts {
  /** Whether a hook sees the operation's runs, or runs they start. */
  readonly snapshotted: (operation: Operation) => boolean
  readonly observed: (operation: Operation) => boolean
  /** Whether any transform takes part at `point`. */
  readonly transformed: (point: TransformPoint) => boolean
  readonly recorderOf: (operation: Operation, fiber: Fiber.RuntimeFiber<unknown, unknown>) => RequestRecorder
  /** Notes a new call's round (see `runMeta.ts`). */
  readonly note: (call: Call, fiber: Fiber.RuntimeFiber<unknown, unknown>) => void
  readonly runWith: <A, E>(
    call: Call,
    recorder: RequestRecorder,
    body: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied>
  readonly transform: <V>(
    point: TransformPoint,
    call: Call,
    value: V,
    recorder: RequestRecorder,
    servedBy?: string
  ) => Effect.Effect<V, HookFailed | Served>
}

type AnyBody = (...args: Array<any>) => Effect.Effect<unknown, unknown>
type AnyAndThen = ((output: unknown) => Effect.Effect<unknown, unknown>) | undefined

/** The combinator over the runtime's parts (typed by `Operations.WithOperation`). */
export const make =
  (parts: Parts) =>
  (options: Calls.CallInit<Operation> & { readonly operation: Operation }) =>
  (body: AnyBody, andThen: AnyAndThen): Effect.Effect<unknown, unknown> => {
    const { operation } = options
    const points = pointsOf(operation)
    const input = points?.input(options.payload)
    if (!parts.snapshotted(operation)) {
      // No hook sees this run, or any run it starts.
      const ran = points === undefined ? body(undefined) : body(input, undefined)
      return andThen === undefined ? ran : Effect.flatMap(ran, andThen)
    }
    return Effect.withFiberRuntime<unknown, unknown>((fiber) => {
      const recorder = parts.recorderOf(operation, fiber)
      const call = Calls.callOf(operation, options, clockOf(fiber), parts.observed(operation))
      parts.note(call, fiber)
      const self: CallRef = { operation, callId: call.callId }
      if (points === undefined) return parts.runWith(call, recorder, body(self))
      const produced = Effect.flatMap(
        Effect.flatMap(parts.transform(points.before, call, input, recorder), (input) => body(input, self)),
        (output) => parts.transform(points.after, call, output, recorder)
      )
      // Only a before_inference transform can serve a response.
      const output = points.before === "before_inference" && parts.transformed(points.before)
        ? Effect.catchIf(
          produced,
          isServed,
          (served) => parts.transform(points.after, call, served.text, recorder, served.hookName)
        )
        : produced
      return parts.runWith(call, recorder, andThen === undefined ? output : Effect.flatMap(output, andThen))
    })
  }
