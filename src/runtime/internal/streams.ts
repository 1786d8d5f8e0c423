/**
 * Runs that are streams (seed 003): the run opens in a scope of its own
 * when the stream is opened — observers begin, guards wrap its start (a
 * stream cannot be retried once it began) — and that scope closes with the
 * stream's exit, as canceled when its consumer stopped pulling before the
 * stream's end (a stream abandoned half-way did not complete, even though
 * nothing failed). A response a `before_inference` transform served is
 * streamed by the caller's `served` in the body's place.
 */
import { Effect, Exit, type Fiber, FiberId, Scope, Stream } from "effect"
import type { TransformPoint } from "../../domain/HookPoint.js"
import type { Call, Operation } from "../../domain/Operation.js"
import { type HookDenied, HookFailed } from "../../domain/PipelineError.js"
import type { CallInit } from "./calls.js"
import type { Transformed } from "./operationHooks.js"
import { pointsOf } from "./runPolicy.js"
import { isServed, type Served } from "./served.js"

/** The parts of the runtime a stream's run uses, each on the fiber that runs it. */
export interface Parts {
  readonly observed: (operation: Operation) => boolean
  readonly call: <Op extends Operation>(operation: Op, init: CallInit<Op>) => Effect.Effect<Call<Op>>
  /** Begins the observers; returns how to end them. */
  readonly observe: (
    call: Call,
    fiber: Fiber.RuntimeFiber<unknown, unknown>
  ) => Effect.Effect<(exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>>
  readonly guarded: <A, E>(
    call: Call,
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    start: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied>
  readonly transform: <V>(
    point: TransformPoint,
    call: Call,
    value: V,
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    servedBy?: string
  ) => Effect.Effect<V, HookFailed | Served>
}

/** What a stream run does when a response was served and its caller cannot stream one. */
const cannotServe = (served: Served) =>
  new HookFailed({
    hookName: served.hookName,
    point: "before_inference",
    reason: "invalid_result",
    detail: "served a response (Hook.respond) to a stream that cannot take one"
  })

/** `opened` (in the run's scope), then `stream` from its value. */
const inScope = <A, E, B, E2>(
  opened: Effect.Effect<A, E, Scope.Scope>,
  stream: (started: A) => Stream.Stream<B, E2>
): Stream.Stream<B, E | E2> =>
  Stream.suspend(() => {
    let ended = false
    const whole = Stream.concat(
      Stream.unwrap(Effect.map(opened, stream)),
      Stream.execute(Effect.sync(() => void (ended = true)))
    )
    return Stream.flatMap(
      Stream.acquireRelease(
        Scope.make(),
        (scope, exit) => Scope.close(scope, Exit.isSuccess(exit) && !ended ? Exit.interrupt(FiberId.none) : exit)
      ),
      (scope) => Stream.provideService(whole, Scope.Scope, scope)
    )
  })

/** The runtime's stream runs over its parts. */
export const make = (parts: Parts) => {
  const runStream = <Op extends Operation, A, E, B, E2>(
    call: Call<Op>,
    start: Effect.Effect<A, E>,
    stream: (started: A) => Stream.Stream<B, E2>
  ): Stream.Stream<B, E | E2 | HookDenied> =>
    inScope(
      parts.observed(call.operation)
        ? Effect.withFiberRuntime<A, E | HookDenied, Scope.Scope>((fiber) =>
          Effect.flatMap(
            parts.observe(call, fiber),
            (ends) => Effect.zipRight(Effect.addFinalizer(ends), parts.guarded(call, fiber, start))
          )
        )
        : start,
      stream
    )

  // Transforms run on the stream's fiber, recorded on its request.
  const transformHere = <V>(point: TransformPoint, call: Call, value: V, servedBy?: string) =>
    Effect.withFiberRuntime<V, HookFailed | Served>((fiber) => parts.transform(point, call, value, fiber, servedBy))
  // Only before_inference can serve, and the after transforms it then runs cannot.
  const after = <V>(point: TransformPoint, call: Call, servedBy?: string) => (output: V) =>
    transformHere(point, call, output, servedBy) as Effect.Effect<V, HookFailed>

  const withOperationStream =
    <Op extends keyof Transformed>(options: CallInit<Op> & { readonly operation: Op }) =>
    <B, E>(
      body: (
        input: Transformed[Op]["input"],
        after: (output: Transformed[Op]["output"]) => Effect.Effect<Transformed[Op]["output"], HookFailed>
      ) => Stream.Stream<B, E>,
      served?: (
        output: Transformed[Op]["output"],
        after: (output: Transformed[Op]["output"]) => Effect.Effect<Transformed[Op]["output"], HookFailed>
      ) => Stream.Stream<B, E>
    ) => {
      const points = pointsOf(options.operation)!
      const input = points.input(options.payload) as Transformed[Op]["input"]
      if (!parts.observed(options.operation)) return Stream.suspend(() => body(input, Effect.succeed))
      return Stream.unwrap(
        Effect.map(parts.call(options.operation, options), (call) =>
          runStream(call, Effect.void, () =>
            Stream.unwrap(
              Effect.catchIf(
                Effect.map(
                  transformHere(points.before, call, input),
                  (input) => body(input, after(points.after, call))
                ),
                isServed,
                (response) =>
                  served === undefined
                    ? Effect.fail(cannotServe(response))
                    : Effect.succeed(served(response.text, after(points.after, call, response.hookName)))
              )
            )))
      )
    }

  return { runStream, withOperationStream }
}
