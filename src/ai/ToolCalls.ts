/**
 * Tool calls through the hook runtime (seed 003 `tool_call` /
 * `tool_execution`, seed 002 tool hooks): a plan step's call is one run of
 * `tool_call` — guards wrap it, `before_tool` transforms rewrite its
 * arguments, then the tool handler runs as one run of `tool_execution` (the
 * approved execution only), then `after_tool` transforms rewrite its result
 * content or error. A guard's refusal makes the step `denied`; a
 * fail-closed transform's failure makes it `failed` (the output never
 * reaches the model). Tool calls never fail the request.
 *
 * The result is checked as a JSON value where it enters, before any hook
 * or the record sees it: a result that is not JSON (a `bigint`, a cycle, a
 * `Date`…), nests deeper than 256 levels or is over `maxToolResultBytes`
 * fails only its step with `invalid_result`, and is not kept.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Either } from "effect"
import type { Json, JsonObject } from "../domain/Json.js"
import type { Call, CallRef, Coordinates } from "../domain/Operation.js"
import { HookDenied } from "../domain/PipelineError.js"
import { withDeadline } from "../runtime/internal/deadline.js"
import { withFirst } from "../runtime/internal/withFirst.js"
import type { ToolOutcome } from "../runtime/OperationHooks.js"
import type { Operations } from "../runtime/Operations.js"
import type { RequestRecorder } from "../runtime/RequestRecorder.js"
import { checkResult, DEFAULT_MAX_RESULT_BYTES } from "./internal/toolResult.js"
import { ToolCallFailure, type ToolRegistry } from "./ToolRegistry.js"

/**
 * How one tool call ended, as its step records it.
 *
 * @since 0.1.0
 */
export type ToolCallResult =
  | { readonly _tag: "Succeeded"; readonly output: Json }
  | { readonly _tag: "Failed"; readonly error: string }
  | { readonly _tag: "Denied"; readonly error: string }

/**
 * One tool call: the tool, its (resolved) arguments, where it happens.
 *
 * @since 0.1.0
 */
export interface ToolCallRequest {
  readonly namespace: string
  readonly agent: string
  readonly capability: string
  readonly parameters: JsonObject
  readonly coordinates: Coordinates
  /** The phase the step belongs to. */
  readonly parent?: CallRef | undefined
  readonly recorder: RequestRecorder
}

const fromOutcome = (outcome: ToolOutcome): ToolCallResult =>
  "output" in outcome ? { _tag: "Succeeded", output: outcome.output } : { _tag: "Failed", error: outcome.error }

// How a call ended, as module-level handlers: `Effect.match` with arrows
// would make closures per call (and lose their optimized code at every full
// GC that finds none alive).
const outcomeOf = {
  onSuccess: (output: Json): Effect.Effect<ToolOutcome> => Effect.succeed({ output }),
  onFailure: (failure: { readonly message: string }): Effect.Effect<ToolOutcome> =>
    Effect.succeed({ error: failure.message })
}

const resultOf = {
  onSuccess: (outcome: ToolOutcome): Effect.Effect<ToolCallResult> => Effect.succeed(fromOutcome(outcome)),
  onFailure: (error: { readonly message: string }): Effect.Effect<ToolCallResult> =>
    Effect.succeed(
      error instanceof HookDenied ? { _tag: "Denied", error: error.message } : { _tag: "Failed", error: error.message }
    )
}

/**
 * A tool's result as it enters: checked as a JSON value of at most
 * `maxBytes` (a registry's own result was checked by it, and is not walked
 * again).
 *
 * @since 0.1.0
 */
export const checkOutput = (maxBytes: number, output: unknown): Effect.Effect<Json, ToolCallFailure> => {
  const checked = checkResult(output, maxBytes)
  return Either.isRight(checked)
    ? Effect.succeed(checked.right)
    : Effect.fail(new ToolCallFailure({ reason: "invalid_result", detail: checked.left }))
}

/**
 * Makes the tool caller over a registry and the operations runtime.
 * `maxResultBytes` bounds each result's JSON text (the pipeline's
 * `maxToolResultBytes`, 1 MiB by default).
 *
 * @since 0.1.0
 */
export const make = (
  tools: ToolRegistry.Service,
  operations: Operations,
  defaultTimeout: Duration.Duration = Duration.seconds(30),
  maxResultBytes: number = DEFAULT_MAX_RESULT_BYTES
): (request: ToolCallRequest) => Effect.Effect<ToolCallResult> => {
  const callOptions = { maxResultBytes }
  const checked = withFirst(checkOutput, maxResultBytes)
  const bounded = (request: ToolCallRequest, parameters: JsonObject) => {
    const timeout = tools.timeoutOf?.(request.namespace, request.agent, request.capability) ?? defaultTimeout
    return withDeadline(
      Effect.flatMap(
        tools.call(request.namespace, request.agent, request.capability, parameters, callOptions),
        checked
      ),
      timeout,
      () => new ToolCallFailure({ reason: "timed_out", detail: `no result within ${Duration.format(timeout)}` })
    )
  }
  const direct = (request: ToolCallRequest): Effect.Effect<ToolOutcome> =>
    Effect.matchEffect(bounded(request, request.parameters), outcomeOf)
  if (!operations.observes("tool_call") && !operations.observes("tool_execution")) {
    return (request) => Effect.map(direct(request), fromOutcome)
  }
  // Defined once, not per call: see `makeBegin` in pipeline/internal/requestRecord.ts.
  const observed = Effect.fnUntraced(function*(request: ToolCallRequest, call: Call<"tool_call">) {
    const parameters = yield* operations.transform("before_tool", call, request.parameters, request.recorder)
    const execution = yield* operations.call("tool_execution", {
      coordinates: request.coordinates,
      parent: { operation: "tool_call", callId: call.callId },
      payload: { ...call.payload, parameters }
    })
    const outcome = yield* Effect.matchEffect(
      operations.run(execution, request.recorder, bounded(request, parameters)),
      outcomeOf
    )
    return yield* operations.transform("after_tool", call, outcome, request.recorder)
  })
  const runObserved = (request: ToolCallRequest, call: Call<"tool_call">) =>
    operations.run(call, request.recorder, observed(request, call))
  return (request) =>
    Effect.flatMap(
      operations.call("tool_call", {
        coordinates: request.coordinates,
        parent: request.parent,
        payload: {
          namespace: request.namespace,
          agent: request.agent,
          capability: request.capability,
          parameters: request.parameters
        }
      }),
      withFirst(runObserved, request)
    ).pipe(Effect.matchEffect(resultOf))
}
