/**
 * The shapes of operation hooks (seed 003 Around / Guard, seed 002
 * before/after transforms), and the refusal a guard fails with.
 *
 * - An **Around** observer gets the immutable call when a run starts and may
 *   return a `finish` callback that gets the result; it observes and cannot
 *   change the outcome.
 * - A **Guard** gets the call and the operation's effect (`proceed`) and
 *   returns an effect in its place — `proceed` itself, wrapped (retried,
 *   timed out, raced), or a refusal (`deny(reason)`): the Effect-native
 *   middleware shape. It cannot invent the operation's result.
 * - A **transform** gets the call and the current value (a prompt, a
 *   completion, tool arguments or result, a query, documents, memory) and
 *   returns the value for the next transform: chained in order. A
 *   `before_inference` transform may instead serve the response
 *   (`respond(text)`): the model is not called.
 * - An **on_error** handler gets the call, the result and the `Cause` of
 *   every run that ends `failed` or `denied`; it observes only.
 *
 * Every handler gets the run's `RunMeta` as its last argument.
 *
 * The `Hook` namespace re-exports what users name: `deny`, `Refusal`,
 * `respond`, `CachedResponse`, `Finish`, `OnError` and `ToolOutcome`.
 */
import { type Cause, Data, Effect } from "effect"
import type { Json, JsonObject } from "../../domain/Json.js"
import type {
  Call,
  Document,
  GuardableOperation,
  MemoryQuery,
  MemoryRecord,
  Operation,
  Result,
  RunMeta
} from "../../domain/Operation.js"

/**
 * Called with the result when the observed run ends.
 *
 * @since 0.1.0
 * @category models
 */
export type Finish<R = never> = (result: Result) => Effect.Effect<void, unknown, R>

/**
 * An Around observer of operation `Op`.
 *
 * @since 0.1.0
 * @category models
 */
export type Around<Op extends Operation, R = never> = (
  call: Call<Op>,
  meta: RunMeta
) => Effect.Effect<Finish<R> | void, unknown, R>

/**
 * A guard of operation `Op`: returns the effect that runs in the
 * operation's place.
 *
 * @since 0.1.0
 * @category models
 */
export type Guard<Op extends GuardableOperation, R = never> = <A, E>(
  call: Call<Op>,
  proceed: Effect.Effect<A, E>,
  meta: RunMeta
) => Effect.Effect<A, unknown, R>

/**
 * A transform of a value of type `V` at an operation `Op`.
 *
 * @since 0.1.0
 * @category models
 */
export type Transform<Op extends Operation, V, R = never> = (
  call: Call<Op>,
  value: V,
  meta: RunMeta
) => Effect.Effect<V, unknown, R>

/**
 * An `on_error` handler: called once for each operation run that ends
 * `failed` or `denied`, with the run's call, its result (outcome, error)
 * and the whole `Cause`. It observes: what it returns is ignored, and its
 * own failure is recorded, never the operation's.
 *
 * @since 0.1.0
 * @category models
 */
export type OnError<R = never> = (
  call: Call,
  result: Result,
  cause: Cause.Cause<unknown>,
  meta: RunMeta
) => Effect.Effect<unknown, unknown, R>

/**
 * A tool call's result as `after_tool` transforms see it: the output, or
 * the error text.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolOutcome = { readonly output: Json } | { readonly error: string }

/**
 * What each transform point rewrites.
 *
 * @since 0.1.0
 * @category models
 */
export interface TransformValues {
  readonly before_inference: string
  readonly after_inference: string
  readonly before_tool: JsonObject
  readonly after_tool: ToolOutcome
  readonly before_retrieval: string
  readonly after_retrieval: ReadonlyArray<Document>
  readonly before_memory_load: MemoryQuery
  readonly after_memory_load: ReadonlyArray<MemoryRecord>
  readonly before_memory_store: MemoryRecord
  readonly after_memory_store: string
}

/**
 * The operations whose input and output transforms rewrite, and the values
 * they rewrite: the input before the operation's body runs, its output
 * after.
 *
 * @since 0.1.0
 * @category models
 */
export interface Transformed {
  readonly inference: { readonly input: string; readonly output: string }
  readonly tool_call: { readonly input: JsonObject; readonly output: ToolOutcome }
  readonly retrieval: { readonly input: string; readonly output: ReadonlyArray<Document> }
  readonly memory_load: { readonly input: MemoryQuery; readonly output: ReadonlyArray<MemoryRecord> }
  readonly memory_store: { readonly input: MemoryRecord; readonly output: string }
}

/**
 * An operation with before and after transforms.
 *
 * @since 0.1.0
 * @category models
 */
export type TransformedOperation = keyof Transformed

/**
 * The handler at each operation point (`R`: what they need; registration
 * provides it, so the runtime sees `R = never`).
 *
 * @since 0.1.0
 * @category models
 */
export interface OperationHandlers<R = never> {
  readonly around_request?: Around<"request", R> | undefined
  readonly around_phase?: Around<"phase", R> | undefined
  readonly around_inference?: Around<"inference", R> | undefined
  readonly around_tool_call?: Around<"tool_call", R> | undefined
  readonly around_tool_execution?: Around<"tool_execution", R> | undefined
  readonly around_retrieval?: Around<"retrieval", R> | undefined
  readonly around_memory_load?: Around<"memory_load", R> | undefined
  readonly around_memory_store?: Around<"memory_store", R> | undefined
  readonly around_approval_wait?: Around<"approval_wait", R> | undefined
  readonly around_record_write?: Around<"record_write", R> | undefined
  readonly guard_request?: Guard<"request", R> | undefined
  readonly guard_inference?: Guard<"inference", R> | undefined
  readonly guard_tool_call?: Guard<"tool_call", R> | undefined
  readonly guard_retrieval?: Guard<"retrieval", R> | undefined
  readonly guard_memory_load?: Guard<"memory_load", R> | undefined
  readonly guard_memory_store?: Guard<"memory_store", R> | undefined
  readonly before_inference?: Transform<"inference", string, R> | undefined
  readonly after_inference?: Transform<"inference", string, R> | undefined
  readonly before_tool?: Transform<"tool_call", JsonObject, R> | undefined
  readonly after_tool?: Transform<"tool_call", ToolOutcome, R> | undefined
  readonly before_retrieval?: Transform<"retrieval", string, R> | undefined
  readonly after_retrieval?: Transform<"retrieval", ReadonlyArray<Document>, R> | undefined
  readonly before_memory_load?: Transform<"memory_load", MemoryQuery, R> | undefined
  readonly after_memory_load?: Transform<"memory_load", ReadonlyArray<MemoryRecord>, R> | undefined
  readonly before_memory_store?: Transform<"memory_store", MemoryRecord, R> | undefined
  readonly after_memory_store?: Transform<"memory_store", string, R> | undefined
  readonly on_error?: OnError<R> | undefined
}

/**
 * A guard's refusal: fail with it (via {@link deny}) to deny the operation.
 * The operation then ends `denied` and its caller gets `HookDenied` with
 * this reason, and `cause` as the denial's cause.
 *
 * @since 0.1.0
 * @category errors
 */
export class Refusal extends Data.TaggedError("Refusal")<{
  readonly reason: string
  readonly cause?: unknown
}> {}

/**
 * Denies the guarded operation.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * const noTrades = Hook.make({
 *   name: "no-trades",
 *   guard: {
 *     toolCall: (call, proceed) =>
 *       call.payload.capability === "execute_trade" ? Hook.deny("trades are not allowed") : proceed
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const deny = (reason: string, cause?: unknown): Effect.Effect<never, Refusal> =>
  Effect.fail(cause === undefined ? new Refusal({ reason }) : new Refusal({ reason, cause }))

/**
 * A `before_inference` transform's answer in the model's place: fail with
 * it (via {@link respond}) to serve `text` as the model's response. The
 * hook needs the `inference_cache` capability.
 *
 * @since 0.1.0
 * @category errors
 */
export class CachedResponse extends Data.TaggedError("CachedResponse")<{
  readonly text: string
}> {}

/**
 * Serves `text` as the response of the model call a `before_inference`
 * transform sees (an LLM response cache's read side): the model is not
 * called, the remaining `before_inference` transforms are skipped, the
 * `after_inference` transforms run on `text` (their `RunMeta.servedBy`
 * names the hook), and the hook's record entry says it served the response
 * (decision `short_circuit` / `cache_match`). Needs the `inference_cache`
 * capability; from any other point it is a failure of the hook.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * const cache = new Map<string, string>()
 * const llmCache = Hook.make({
 *   name: "llm-cache",
 *   capabilities: ["inference_cache"],
 *   beforeInference: (_call, prompt) => {
 *     const hit = cache.get(prompt)
 *     return hit === undefined ? Effect.succeed(prompt) : Hook.respond(hit)
 *   },
 *   afterInference: (call, text, meta) =>
 *     Effect.sync(() => {
 *       if (meta.servedBy === undefined) cache.set(call.payload.prompt, text)
 *       return text
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const respond = (text: string): Effect.Effect<never, CachedResponse> => Effect.fail(new CachedResponse({ text }))
