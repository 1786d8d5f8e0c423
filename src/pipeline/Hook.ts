/**
 * A hook: a stable name, its subscription options (seed 001) and any subset
 * of its handlers — the four pipeline stages (seed 000 §2, §4), Around
 * observers and guards of operations (seed 003), before/after transforms
 * (seed 002), `onError` (seed 004). Partial hooks are normal. Registration
 * order is execution order unless priorities or dependencies say (C1).
 *
 * Handlers receive immutable snapshots and return what they change. A
 * defect (`Effect.die`, a thrown exception) is a panic and propagates. A
 * hook marked `required` is the single fail-closed after-planning boundary.
 *
 * @since 0.1.0
 */
import type { Duration, Effect } from "effect"
import type * as ToolRegistry from "../ai/ToolRegistry.js"
import type { StepResult } from "../domain/ExecutionRecord.js"
import type { JsonObject } from "../domain/Json.js"
import type { Document, MemoryQuery, MemoryRecord } from "../domain/Operation.js"
import type { EnrichmentChanges, PipelineContext } from "../domain/PipelineContext.js"
import type { RoutingPlan, RoutingPlanInput } from "../domain/RoutingPlan.js"
import type { Capability } from "../runtime/Capability.js"
import type { Around, Guard, OnError, ToolOutcome, Transform } from "../runtime/internal/operationHooks.js"
import type { ExecutionPolicy, FailurePolicy } from "../runtime/Policy.js"
import type { LegacyShortCircuit, PipelineGate, ShortCircuitDecision } from "./ShortCircuit.js"

/**
 * What a BeforePlanning handler returns: enrichment changes, tools for
 * this request, and optionally a legacy short-circuit (treated as
 * authoritative) or a provenance-aware decision. Returning both a
 * short-circuit and a decision is a contract error. `void` means "nothing
 * to add, carry on".
 *
 * @since 0.1.0
 * @category models
 */
export interface BeforePlanningResult extends EnrichmentChanges {
  readonly shortCircuit?: LegacyShortCircuit | undefined
  readonly decision?: ShortCircuitDecision | undefined
  /**
   * Tools this request may use besides the registered ones (seed 001 "tool
   * bundles"): the planner sees them and the executor calls them, for this
   * request only. A tool that is already registered is refused. Request
   * tools do not survive a HITL suspension: register a tool the resumed plan
   * needs.
   */
  readonly tools?: ReadonlyArray<ToolRegistry.ToolEntry<never>> | undefined
}

/**
 * Extra information for an AfterPlanning handler.
 *
 * @since 0.1.0
 * @category models
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
 * @category models
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
 * The Around observers a hook has, by operation.
 *
 * @since 0.1.0
 * @category models
 */
export interface AroundHandlers<R> {
  readonly request?: Around<"request", R> | undefined
  readonly phase?: Around<"phase", R> | undefined
  readonly inference?: Around<"inference", R> | undefined
  readonly toolCall?: Around<"tool_call", R> | undefined
  readonly toolExecution?: Around<"tool_execution", R> | undefined
  readonly retrieval?: Around<"retrieval", R> | undefined
  readonly memoryLoad?: Around<"memory_load", R> | undefined
  readonly memoryStore?: Around<"memory_store", R> | undefined
  readonly approvalWait?: Around<"approval_wait", R> | undefined
  readonly recordWrite?: Around<"record_write", R> | undefined
}

/**
 * The guards a hook has, by guardable operation.
 *
 * @since 0.1.0
 * @category models
 */
export interface GuardHandlers<R> {
  readonly request?: Guard<"request", R> | undefined
  readonly inference?: Guard<"inference", R> | undefined
  readonly toolCall?: Guard<"tool_call", R> | undefined
  readonly retrieval?: Guard<"retrieval", R> | undefined
  readonly memoryLoad?: Guard<"memory_load", R> | undefined
  readonly memoryStore?: Guard<"memory_store", R> | undefined
}

/**
 * A hook. `R` is what its handlers need; the registration Layer requires it.
 *
 * A hook is a subscription (seed 001): its `name` is its unique id; it may
 * set a `priority` (higher runs first, default 0), run after the hooks it
 * `dependsOn` (at every point both handle), be `enabled: false` (recorded as
 * skipped), declare an `execution` policy (`Hook.blocking`,
 * `Hook.deadline(d)`, `Hook.fireAndRecord`, `Hook.background`), a `failure`
 * policy (`fail_open` / `fail_closed`; by default stages and observers fail
 * open, guards and transforms fail closed) and its `capabilities` (the
 * contributions it may make; omitted: all its points allow).
 *
 * It handles any subset of the points (stages, Around, guards, transforms,
 * `onError`); every operation hook call gets the run's `RunMeta` last.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * // Adds retrieved context under the well-known key rendered as <agent_memory>.
 * const rag = Hook.make({
 *   name: "rag-retriever",
 *   execution: Hook.deadline("500 millis"),
 *   capabilities: ["enrichments"],
 *   beforePlanning: (ctx) =>
 *     Effect.succeed({ enrichments: { rag_context: `- docs about ${ctx.request}` } })
 * })
 *
 * // Redacts tool output before the model sees it, then the final answer.
 * const redact = Hook.make({
 *   name: "pii-redaction",
 *   afterTool: (_call, result) =>
 *     Effect.succeed("output" in result ? { output: JSON.parse(JSON.stringify(result.output).replace(/\d{3}-\d{2}-\d{4}/g, "[ssn]")) } : result),
 *   afterSynthesis: (_ctx, response) => Effect.succeed(response.replace(/\d{3}-\d{2}-\d{4}/g, "[ssn]"))
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Hook<R = never> {
  /** Stable, unique name: the subscription's id, used in records and span names. */
  readonly name: string
  /**
   * Marks the hook as the required, fail-closed after-planning boundary. It
   * must have an `afterPlanning` handler, be the only required hook, and sort
   * last among the `afterPlanning` hooks.
   */
  readonly required?: boolean | undefined
  /** Higher runs first at every point; equal priorities run in registration order (default 0). */
  readonly priority?: number | undefined
  /** Hooks that must run before this one at every point both handle. */
  readonly dependsOn?: ReadonlyArray<string> | undefined
  /** A disabled hook never runs; each of its points records it as skipped (default true). */
  readonly enabled?: boolean | undefined
  /** How its runs execute (default `Hook.blocking`). */
  readonly execution?: ExecutionPolicy | undefined
  /**
   * How long one run of any of its handlers may take (default: the
   * pipeline's `hookTimeout`, 30 seconds; `Hook.deadline(d)` sets it too).
   * An overrun is interrupted and recorded `timed_out`; its failure policy
   * decides. A guard's timeout counts its own time, not the operation it
   * wraps. Applies to detached runs too.
   */
  readonly timeout?: Duration.DurationInput | undefined
  /** What its failure means (default: per point). */
  readonly failure?: FailurePolicy | undefined
  /** The contributions it may make (default: every one its points allow). */
  readonly capabilities?: ReadonlyArray<Capability> | undefined
  /** Its group (set by `HookGroup.make`): its runs' `RunMeta.group`. */
  readonly group?: string | undefined

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

  /** Around observers: see each run of an operation begin and end. */
  readonly around?: AroundHandlers<R> | undefined
  /** Guards: wrap or deny each run of an operation. */
  readonly guard?: GuardHandlers<R> | undefined

  /** Rewrites the prompt of each model call (planning and synthesis). */
  readonly beforeInference?: Transform<"inference", string, R> | undefined
  /** Rewrites the text of each model response (before a plan is decoded from it). */
  readonly afterInference?: Transform<"inference", string, R> | undefined
  /** Rewrites a tool call's arguments. */
  readonly beforeTool?: Transform<"tool_call", JsonObject, R> | undefined
  /** Rewrites a tool call's result content or error. */
  readonly afterTool?: Transform<"tool_call", ToolOutcome, R> | undefined
  /** Rewrites a retrieval query. */
  readonly beforeRetrieval?: Transform<"retrieval", string, R> | undefined
  /** Filters or re-ranks retrieved documents. */
  readonly afterRetrieval?: Transform<"retrieval", ReadonlyArray<Document>, R> | undefined
  /** Rewrites a memory query: its text, limit, minimum score and kinds (`query_rewrite`). */
  readonly beforeMemoryLoad?: Transform<"memory_load", MemoryQuery, R> | undefined
  /** Filters or rewrites loaded memory records: their `content` is the text a prompt gets. */
  readonly afterMemoryLoad?: Transform<"memory_load", ReadonlyArray<MemoryRecord>, R> | undefined
  /** Rewrites (e.g. scrubs) a memory record before it is stored, or sets the id it is stored under. */
  readonly beforeMemoryStore?: Transform<"memory_store", MemoryRecord, R> | undefined
  /** Sees the stored record's id (audit); failing aborts by its failure policy. */
  readonly afterMemoryStore?: Transform<"memory_store", string, R> | undefined
  /** Sees each operation run that ends `failed` or `denied`, with its `Cause`; observe-only (fails open). */
  readonly onError?: OnError<R> | undefined
}

/**
 * Any hook, whatever it requires.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Hook<unknown>

/**
 * What a list of hooks requires.
 *
 * @since 0.1.0
 * @category utility types
 */
export type Requirements<H> = H extends Hook<infer R> ? R : never

/**
 * A capability a hook's subscription can declare (see the `Capability` module).
 *
 * @since 0.1.0
 * @category models
 */
export type { Capability } from "../runtime/Capability.js"
/**
 * Refusing an operation from a guard (`deny` fails with a `Refusal`);
 * serving a model response from a `before_inference` transform (`respond`
 * fails with a `CachedResponse`).
 *
 * @since 0.1.0
 * @category errors
 */
export { CachedResponse, deny, Refusal, respond } from "../runtime/internal/operationHooks.js"
/**
 * An Around observer's finish callback, an `onError` handler, a tool result as `after_tool` sees it.
 * @since 0.1.0
 * @category models
 */
export type { Finish, OnError, ToolOutcome } from "../runtime/internal/operationHooks.js"
/**
 * What every operation hook call gets last (see `Operation.RunMeta`).
 *
 * @since 0.1.0
 * @category models
 */
export type { RunMeta } from "../domain/Operation.js"
/**
 * The execution policies of a hook run (see the `Policy` module).
 *
 * @since 0.1.0
 * @category constructors
 */
export { background, blocking, deadline, fireAndRecord } from "../runtime/Policy.js"
/**
 * How a hook run is executed, and what its failure means (see the `Policy` module).
 *
 * @since 0.1.0
 * @category models
 */
export type { ExecutionPolicy, FailurePolicy } from "../runtime/Policy.js"
/**
 * Marks a plain function as a synchronous hook handler.
 *
 * @since 0.1.0
 * @category constructors
 */
export { sync } from "../runtime/SyncHandler.js"
/**
 * A handler marked synchronous with {@link sync}.
 *
 * @since 0.1.0
 * @category models
 */
export type { SyncHandler } from "../runtime/SyncHandler.js"

/**
 * Declares a hook (an identity function that fixes the type).
 *
 * @since 0.1.0
 * @category constructors
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
 * @category constructors
 */
export const required = <R = never>(
  hook: Omit<Hook<R>, "required" | "afterPlanning"> & { readonly afterPlanning: NonNullable<Hook<R>["afterPlanning"]> }
): Hook<R> => ({ ...hook, required: true })

/**
 * What every stage runner receives about the request. Its hook runs are
 * recorded on the request the fiber works for (`Operations.currentRequest`):
 * a stage run outside any request records nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface StageRequest {
  /** The request context; its enrichments are the request-start snapshot after BeforePlanning. */
  readonly context: PipelineContext
}
