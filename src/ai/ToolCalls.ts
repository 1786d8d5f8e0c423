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
import { Duration, Effect, FiberRef, Option } from "effect"
import type { Json, JsonObject } from "../domain/Json.js"
import type { CallRef, Coordinates } from "../domain/Operation.js"
import { HookDenied } from "../domain/PipelineError.js"
import { withDeadline } from "../runtime/internal/deadline.js"
import type { ToolOutcome } from "../runtime/internal/operationHooks.js"
import type { Operations } from "../runtime/Operations.js"
import { defaultMaxResultBytes } from "./internal/toolResult.js"
import * as ToolRegistry from "./ToolRegistry.js"

/**
 * How one tool call ended: the status and output (or error) its step
 * records.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolCallResult =
  | { readonly status: "succeeded"; readonly output: Json }
  | { readonly status: "failed" | "denied"; readonly error: string }

/**
 * One tool call: the tool, its (resolved) arguments, where it happens.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallRequest {
  readonly namespace: string
  readonly agent: string
  readonly capability: string
  readonly parameters: JsonObject
  readonly coordinates: Coordinates
  /** The phase the step belongs to. */
  readonly parent?: CallRef | undefined
}

/**
 * A tool caller: what {@link make} builds.
 *
 * @since 0.1.0
 * @category models
 */
export type Caller = (request: ToolCallRequest) => Effect.Effect<ToolCallResult>

/**
 * A tool's result as it enters, checked as a JSON value of at most
 * `maxBytes` (see `ToolRegistry.checkOutput`).
 *
 * @since 0.1.0
 * @category utils
 */
export const checkOutput = ToolRegistry.checkOutput

/**
 * The plan step a tool handler is running for (see {@link current}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Current {
  readonly requestId: string
  readonly phase: number | undefined
  readonly stepId: string
  /**
   * `<requestId>/<stepId>`: the same for every run of this step — a HITL
   * resume that executes it, a durable request's re-run after its process
   * died — and different for every other step of every request (step ids are
   * unique within a request, request ids across requests). A tool with side
   * effects (a payment, an e-mail) can deduplicate on it.
   */
  readonly idempotencyKey: string
}

const currentCall = FiberRef.unsafeMake<Option.Option<Current>>(Option.none())

/**
 * The plan step the running tool handler executes, read from inside the
 * handler; `None` outside a plan step's tool call.
 *
 * @example
 * ```ts
 * import { Tool } from "@effect/ai"
 * import { Effect, Option, Schema } from "effect"
 * import { ToolCalls, ToolRegistry } from "effect-agent-pipeline"
 *
 * const Pay = Tool.make("pay", { parameters: { cents: Schema.Number }, success: Schema.String })
 *
 * const pay = ToolRegistry.entry({
 *   namespace: "billing",
 *   agent: "payments",
 *   tool: Pay,
 *   handler: ({ cents }) =>
 *     Effect.map(ToolCalls.current, (call) =>
 *       // Hand the key to the payment provider: a repeated call is charged once.
 *       `charged ${cents} (key ${Option.match(call, { onNone: () => "none", onSome: (c) => c.idempotencyKey })})`)
 * })
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const current: Effect.Effect<Option.Option<Current>> = FiberRef.get(currentCall)

/** What {@link current} reads while a step's tool runs (none for a call outside a plan step). */
const currentOf = (coordinates: Coordinates): Option.Option<Current> =>
  coordinates.stepId === undefined
    ? Option.none()
    : Option.some({
      requestId: coordinates.requestId,
      phase: coordinates.phase,
      stepId: coordinates.stepId,
      idempotencyKey: `${coordinates.requestId}/${coordinates.stepId}`
    })

/** How a call ended, as the after transforms see it. */
const outcomeOf = <E extends { readonly message: string }>(
  self: Effect.Effect<Json, E>
): Effect.Effect<ToolOutcome> =>
  Effect.match(self, {
    onSuccess: (output): ToolOutcome => ({ output }),
    onFailure: (failure): ToolOutcome => ({ error: failure.message })
  })

const resultOf = (outcome: ToolOutcome): ToolCallResult =>
  "output" in outcome ? { status: "succeeded", output: outcome.output } : { status: "failed", error: outcome.error }

/**
 * Makes the tool caller over a registry and the operations runtime.
 * `maxResultBytes` bounds each result's JSON text (the pipeline's
 * `maxToolResultBytes`, 1 MiB by default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  tools: ToolRegistry.ToolRegistry.Service,
  operations: Operations,
  defaultTimeout: Duration.Duration = Duration.seconds(30),
  maxResultBytes: number = defaultMaxResultBytes
): Caller => {
  const { withOperation } = operations
  const execute = (
    request: ToolCallRequest,
    parameters: JsonObject
  ): Effect.Effect<Json, ToolRegistry.ToolCallFailure> => {
    const { agent, capability, namespace } = request
    const timeout = tools.timeoutOf?.(namespace, agent, capability) ?? defaultTimeout
    const call = currentOf(request.coordinates)
    const handled = tools.call(namespace, agent, capability, parameters, { maxResultBytes })
    return withDeadline(
      Effect.flatMap(
        Option.isNone(call) ? handled : Effect.locally(handled, currentCall, call),
        (output) => checkOutput(maxResultBytes, output)
      ),
      timeout,
      () =>
        new ToolRegistry.ToolCallFailure({
          reason: "timed_out",
          detail: `no result within ${Duration.format(timeout)}`
        })
    )
  }
  return (request) => {
    const { agent, capability, coordinates, namespace } = request
    return withOperation({
      operation: "tool_call",
      coordinates,
      parent: request.parent,
      payload: { namespace, agent, capability, parameters: request.parameters }
    })((parameters, self) =>
      outcomeOf(
        withOperation({
          operation: "tool_execution",
          coordinates,
          parent: self,
          payload: { namespace, agent, capability, parameters }
        })(() => execute(request, parameters))
      )
    ).pipe(
      Effect.match({
        onSuccess: resultOf,
        onFailure: (error): ToolCallResult => ({
          status: error instanceof HookDenied ? "denied" : "failed",
          error: error.message
        })
      })
    )
  }
}
