/**
 * Where a hook subscribes (seed 001 "phases", seed 002 hook points, seed
 * 003 operations): the four pipeline stages of seed 000, an Around observer
 * or a guard on an operation, a before/after transform of an operation's
 * input or output, or `on_error` (seed 004: every operation run that ends
 * `failed` or `denied`). A point's name is what records and span names carry
 * (`pipeline.hook.<point>.<hook>`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import {
  type GuardableOperation,
  GuardableOperation as GuardableSchema,
  type Operation,
  Operation as OperationSchema
} from "./Operation.js"

/**
 * The four pipeline stages (seed 000).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Stage = Schema.Literal("before_planning", "after_planning", "after_execution", "after_synthesis")
/**
 * One of the {@link Stage} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type Stage = typeof Stage.Type

/**
 * The transform points (seed 002): chained rewrites of an operation's input
 * (`before_*`) or output (`after_*`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransformPoint = Schema.Literal(
  "before_inference",
  "after_inference",
  "before_tool",
  "after_tool",
  "before_retrieval",
  "after_retrieval",
  "before_memory_load",
  "after_memory_load",
  "before_memory_store",
  "after_memory_store"
)
/**
 * One of the {@link TransformPoint} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type TransformPoint = typeof TransformPoint.Type

/**
 * The point of an Around observer on an operation (`around_tool_call`).
 *
 * @since 0.1.0
 * @category models
 */
export type AroundPoint = `around_${Operation}`
/**
 * The point of a guard on a guardable operation (`guard_tool_call`).
 *
 * @since 0.1.0
 * @category models
 */
export type GuardPoint = `guard_${GuardableOperation}`

/**
 * The point that sees every operation run that ends `failed` or `denied`,
 * with its cause (seed 004 "OnError"): observe-only.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OnErrorPoint = Schema.Literal("on_error")
/**
 * The {@link OnErrorPoint} literal.
 *
 * @since 0.1.0
 * @category models
 */
export type OnErrorPoint = typeof OnErrorPoint.Type

/**
 * Every point a hook can subscribe to: a stage, an Around or guard point of
 * an operation, a transform point, or `on_error`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { HookPoint } from "effect-agent-pipeline"
 *
 * Schema.is(HookPoint.HookPoint)("guard_tool_call") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookPoint = Schema.Literal(
  ...Stage.literals,
  ...OperationSchema.literals.map((op): AroundPoint => `around_${op}`),
  ...GuardableSchema.literals.map((op): GuardPoint => `guard_${op}`),
  ...TransformPoint.literals,
  ...OnErrorPoint.literals
)
/**
 * One of the {@link HookPoint} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type HookPoint = Stage | AroundPoint | GuardPoint | TransformPoint | OnErrorPoint

/**
 * The operation a transform point belongs to.
 *
 * @since 0.1.0
 * @category constants
 */
export const transformOperation: Readonly<Record<TransformPoint, Operation>> = {
  before_inference: "inference",
  after_inference: "inference",
  before_tool: "tool_call",
  after_tool: "tool_call",
  before_retrieval: "retrieval",
  after_retrieval: "retrieval",
  before_memory_load: "memory_load",
  after_memory_load: "memory_load",
  before_memory_store: "memory_store",
  after_memory_store: "memory_store"
}

/**
 * Points whose hooks only observe: nothing they return changes the request.
 *
 * @since 0.1.0
 * @category guards
 */
export const isObserveOnly = (point: HookPoint): boolean =>
  point === "after_execution" || point === "on_error" || point.startsWith("around_")
