/**
 * What operation hooks can observe (seed 003, seed 002): a closed taxonomy
 * of operations, the immutable call snapshot each run of one gets, and the
 * closed set of outcomes it ends with.
 *
 * - `request` — the whole run of one request
 * - `phase` — one planning phase (plan, AfterPlanning, HITL, execution)
 * - `inference` — one model call, planning or synthesis, streamed or not
 * - `tool_call` — the semantic call of one plan step (guards, argument and result transforms)
 * - `tool_execution` — the tool handler's run only, after guards and transforms
 * - `retrieval` — one retriever query
 * - `memory_load` / `memory_store` — one read from / write to the memory store
 * - `approval_wait` — a HITL suspension waiting for a human
 * - `record_write` — one write of the execution record
 *
 * Around observers may target any operation; guards only the guardable
 * ones (a guard deciding whether a record is written or a phase exists
 * makes no sense).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { JsonObject } from "./Json.js"

/**
 * The operations.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Operation = Schema.Literal(
  "request",
  "phase",
  "inference",
  "tool_call",
  "tool_execution",
  "retrieval",
  "memory_load",
  "memory_store",
  "approval_wait",
  "record_write"
)
/**
 * One of the {@link Operation} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type Operation = typeof Operation.Type

/**
 * Every operation, in taxonomy order.
 *
 * @since 0.1.0
 * @category constants
 */
export const operations: ReadonlyArray<Operation> = Operation.literals

/**
 * The operations a guard may target.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GuardableOperation = Schema.Literal(
  "request",
  "inference",
  "tool_call",
  "retrieval",
  "memory_load",
  "memory_store"
)
/**
 * One of the {@link GuardableOperation} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type GuardableOperation = typeof GuardableOperation.Type

const guardable: ReadonlySet<string> = new Set(GuardableOperation.literals)

/**
 * Whether a guard may target `operation`.
 *
 * @example
 * ```ts
 * import { Operation } from "effect-agent-pipeline"
 *
 * Operation.isGuardable("tool_call") // true
 * Operation.isGuardable("tool_execution") // false: the execution is already approved
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isGuardable = (operation: string): operation is GuardableOperation => guardable.has(operation)

/**
 * How a run of an operation ended. `denied` is a guard's refusal.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Outcome = Schema.Literal("completed", "denied", "failed", "canceled")
/**
 * One of the {@link Outcome} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = typeof Outcome.Type

/**
 * Where a run happened.
 *
 * @since 0.1.0
 * @category models
 */
export interface Coordinates {
  readonly requestId: string
  /** One-based planning phase, for runs inside a phase. */
  readonly phase?: number | undefined
  /** The plan step, for tool calls and executions. */
  readonly stepId?: string | undefined
}

/**
 * A memory record: what the memory store keeps.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryRecord {
  /** The id to store the record under (a store assigns one when absent); a stored record's id when loaded. */
  readonly id?: string | undefined
  readonly content: string
  readonly metadata?: JsonObject | undefined
}

/**
 * What one memory read asks for: the `memory_load` operation's input,
 * which `before_memory_load` transforms may rewrite (with the
 * `query_rewrite` capability).
 *
 * - `query` — the text to match; an empty query matches every record
 * - `limit` — at most this many records (an integer, 1 to 1000)
 * - `minScore` — only records the backend scores at least this (in [-1, 1]:
 *   a cosine similarity for vector backends; each backend documents its score)
 * - `kinds` — only records whose `metadata.kind` is one of these
 *
 * @example
 * ```ts
 * import type { Operation } from "effect-agent-pipeline"
 *
 * const facts: Operation.MemoryQuery = { query: "currency", limit: 5, minScore: 0.2, kinds: ["fact"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryQuery {
  readonly query: string
  readonly limit: number
  readonly minScore?: number | undefined
  readonly kinds?: ReadonlyArray<string> | undefined
}

/**
 * A retrieved document.
 *
 * @since 0.1.0
 * @category models
 */
export interface Document {
  readonly id: string
  readonly content: string
  readonly score?: number | undefined
  readonly metadata?: JsonObject | undefined
}

/**
 * The payload of each operation: exactly one per call, matching its
 * operation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Payloads {
  readonly request: {
    readonly mode: "pipeline" | "stream" | "resume" | "workflow" | "durable"
    readonly request: string
  }
  readonly phase: { readonly phase: number; readonly resumed: boolean }
  readonly inference: {
    readonly purpose: "planning" | "synthesis"
    readonly streamed: boolean
    readonly prompt: string
  }
  readonly tool_call: ToolCallPayload
  readonly tool_execution: ToolCallPayload
  readonly retrieval: { readonly retriever: string; readonly query: string; readonly limit: number }
  readonly memory_load: { readonly scope: string } & MemoryQuery
  readonly memory_store: { readonly scope: string; readonly record: MemoryRecord }
  /** `decision`: what the human decided (the wait's run starts when the decision arrives). */
  readonly approval_wait: {
    readonly checkpointId: string
    readonly reason: string
    readonly decision: "approve" | "reject"
  }
  /**
   * `revision`: the snapshot's, or -1 for a merge into the newest stored
   * record (a read-modify-write whose revision the store assigns);
   * `status`: the snapshot's lifecycle status, or `merge`.
   */
  readonly record_write: { readonly revision: number; readonly status: string }
}

/**
 * What a tool call or execution is about.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallPayload {
  readonly namespace: string
  readonly agent: string
  readonly capability: string
  readonly parameters: JsonObject
}

/**
 * A reference to one run of an operation: its causal parent.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallRef {
  readonly operation: Operation
  readonly callId: string
}

/**
 * The immutable snapshot of one run of an operation, taken when it starts.
 * Hooks get it frozen; changing it changes nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Call<Op extends Operation = Operation> {
  readonly operation: Op
  readonly callId: string
  /** Epoch milliseconds, from the `Clock`. */
  readonly startedAt: number
  readonly coordinates: Coordinates
  /** The operation whose run started this one (the request has none). */
  readonly parent?: CallRef | undefined
  readonly payload: Payloads[Op]
}

/**
 * How a run ended, as an Around observer sees it. `error` is trusted,
 * in-process data: redact it before it crosses a logging or network
 * boundary.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly outcome: Outcome
  /** Epoch milliseconds. */
  readonly endedAt: number
  readonly error?: unknown
}

/**
 * What a hook run knows about the run it is part of (seed 002 "RunMeta"),
 * handed to every operation hook's call as its last argument: read-only
 * (frozen) and shared between the runs that have the same values.
 *
 * - `runId` — the request's id (`coordinates.requestId`)
 * - `iteration` — the zero-based round of the model loop: a run inside
 *   planning phase `n` (its planning call, its tool calls, what they start)
 *   is round `n - 1`; a run outside any phase is the round after the
 *   phases begun before it — `0` before the first phase, `k` for the
 *   synthesis call after `k` phases
 * - `group` — the name of the running hook's group (`HookGroup.make`), or
 *   `undefined`
 * - `servedBy` — on the `after_inference` transforms of a response a
 *   `before_inference` transform served (`Hook.respond`): that hook's name
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * const rounds = Hook.make({
 *   name: "rounds",
 *   around: {
 *     inference: (call, meta) =>
 *       Effect.log(`${meta.runId}: ${call.payload.purpose} in round ${meta.iteration}`)
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunMeta {
  readonly runId: string
  readonly iteration: number
  readonly group: string | undefined
  readonly servedBy?: string | undefined
}
