/**
 * A pipeline hook: a stable name plus any subset of the four stage handlers
 * (seed 000 §2, §4). Partial hooks are normal. Registration order is
 * execution order within a stage.
 *
 * Handlers receive immutable snapshots and return what they change. An
 * ordinary handler's typed failure fails open (recorded, the stage's fallback
 * continues); a defect (`Effect.die`, a thrown exception) is a panic and
 * propagates. A hook marked `required` is the single fail-closed
 * after-planning boundary.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { EnrichmentChanges, PipelineContext } from "../domain/PipelineContext.js"
import type { RoutingPlan, RoutingPlanInput } from "../domain/RoutingPlan.js"
import type { LegacyShortCircuit, PipelineGate, ShortCircuitDecision } from "./ShortCircuit.js"
import type { StepResult } from "../domain/ExecutionRecord.js"
import type { RequestRecorder } from "../runtime/RequestRecorder.js"

/**
 * What a BeforePlanning handler returns: enrichment changes, and optionally
 * a legacy short-circuit (treated as authoritative) or a provenance-aware
 * decision. Returning both a short-circuit and a decision is a contract
 * error. `void` means "nothing to add, carry on".
 *
 * @since 0.1.0
 */
export interface BeforePlanningResult extends EnrichmentChanges {
  readonly shortCircuit?: LegacyShortCircuit | undefined
  readonly decision?: ShortCircuitDecision | undefined
}

/**
 * Extra information for an AfterPlanning handler.
 *
 * @since 0.1.0
 */
export interface AfterPlanningInfo {
  /** One-based planning phase. */
  readonly phase: number
  /** Step ids of earlier phases (what `implicit_deps` may name). */
  readonly priorStepIds: ReadonlyArray<string>
}

/**
 * The combined execution result AfterExecution observes.
 *
 * @since 0.1.0
 */
export interface ExecutionResults {
  readonly phases: ReadonlyArray<{
    readonly phase: number
    readonly plan: RoutingPlan
    readonly steps: ReadonlyArray<StepResult>
  }>
  readonly steps: ReadonlyArray<StepResult>
}

/**
 * A hook. `R` is what its handlers need; the registration Layer requires it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * // Adds retrieved context under the well-known key rendered as <agent_memory>.
 * const rag = Hook.make({
 *   name: "rag-retriever",
 *   beforePlanning: (ctx) =>
 *     Effect.succeed({ enrichments: { rag_context: `- docs about ${ctx.request}` } })
 * })
 *
 * // Redacts the final answer.
 * const redact = Hook.make({
 *   name: "pii-redaction",
 *   afterSynthesis: (_ctx, response) => Effect.succeed(response.replace(/\d{3}-\d{2}-\d{4}/g, "[ssn]"))
 * })
 * ```
 *
 * @since 0.1.0
 */
export interface Hook<R = never> {
  /** Stable name, used in records and span names (`pipeline.hook.<stage>.<name>`). */
  readonly name: string
  /**
   * Marks the hook as the required, fail-closed after-planning boundary. It
   * must have an `afterPlanning` handler, be the only required hook, and be the
   * last hook with an `afterPlanning` handler.
   */
  readonly required?: boolean | undefined
  readonly beforePlanning?:
    | ((context: PipelineContext, gate: PipelineGate) => Effect.Effect<BeforePlanningResult | void, unknown, R>)
    | undefined
  /** Receives a private copy of the current plan; returns the (new) plan. */
  readonly afterPlanning?:
    | ((
      context: PipelineContext,
      plan: RoutingPlan,
      info: AfterPlanningInfo
    ) => Effect.Effect<RoutingPlan | RoutingPlanInput, unknown, R>)
    | undefined
  /** Observe-only. */
  readonly afterExecution?:
    | ((context: PipelineContext, results: ExecutionResults) => Effect.Effect<void, unknown, R>)
    | undefined
  /** Chained: the returned string is the next hook's input. */
  readonly afterSynthesis?:
    | ((context: PipelineContext, response: string) => Effect.Effect<string, unknown, R>)
    | undefined
}

/**
 * Any hook, whatever it requires.
 *
 * @since 0.1.0
 */
export type Any = Hook<unknown>

/**
 * What a list of hooks requires.
 *
 * @since 0.1.0
 */
export type Requirements<H> = H extends Hook<infer R> ? R : never

/**
 * Declares a hook (an identity function that fixes the type).
 *
 * @since 0.1.0
 */
export const make = <R = never>(hook: Hook<R>): Hook<R> => hook

/**
 * Declares the required, fail-closed after-planning hook (seed 000 §7.4).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * const policy = Hook.required({
 *   name: "allowed-operations",
 *   afterPlanning: (_ctx, plan) =>
 *     plan.steps.every((s) => s.capability === "stock_quote")
 *       ? Effect.succeed(plan)
 *       : Effect.fail(new Error("operation not allowed"))
 * })
 * ```
 *
 * @since 0.1.0
 */
export const required = <R = never>(
  hook: Omit<Hook<R>, "required" | "afterPlanning"> & { readonly afterPlanning: NonNullable<Hook<R>["afterPlanning"]> }
): Hook<R> => ({ ...hook, required: true })

/**
 * What every stage runner receives about the request.
 *
 * @since 0.1.0
 */
export interface StageRequest {
  /** The request context; its enrichments are the request-start snapshot after BeforePlanning. */
  readonly context: PipelineContext
  readonly recorder: RequestRecorder
}
