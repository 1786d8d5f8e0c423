/**
 * Memory-backed conversation history (seed 000 §10
 * `ConversationHistoryHook`): a hook you construct directly and register
 * yourself — the memory builders do not wire it.
 *
 * - BeforePlanning: the session's last turns (session id from metadata
 *   `session_id`, or a function of the request), loaded from the
 *   `VectorStore` (collection `conversation_turns`, partition = session) as
 *   one `memory_load` operation (scope `conversation:<session>`), become the
 *   `conversation_history` enrichment — `role: content` lines, as the
 *   default `ConversationHistoryPreparer` writes them, the newest kept
 *   within a byte budget. It replaces a history promoted from request
 *   metadata (the stored one is the session's record). Effect
 *   `conversation_history_context`.
 * - AfterSynthesis (unless `record: false`): the request and the response
 *   are appended as a `user` and an `assistant` turn, each one
 *   `memory_store` operation; the response is returned unchanged. Effect
 *   `conversation_history_record`.
 *
 * No session id: both do nothing (recorded as such). For turns the caller
 * already holds, the metadata path (`conversation_turns`, §5.4) needs no
 * hook at all.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Either } from "effect"
import * as Memory from "../ai/Memory.js"
import { byteLength } from "../domain/internal/utf8Chunks.js"
import type { MemoryRecord } from "../domain/Operation.js"
import { enrichmentConversationHistory, type PipelineContext } from "../domain/PipelineContext.js"
import type { Hook } from "../pipeline/Hook.js"
import * as HookEffects from "../runtime/HookEffects.js"
import { VectorStore } from "../stores/VectorStore.js"
import { appendTurn, lastTurns, turnId } from "./internal/conversationHistoryTurns.js"
import { shorten } from "./internal/memoryModel.js"
import { duration, InvalidMemoryOptions, name as nonEmpty, wholeNumber } from "./internal/memoryServices.js"

/**
 * The construction error (an option out of range, an empty name).
 *
 * @since 0.1.0
 * @category errors
 */
export { InvalidMemoryOptions }

/**
 * The vector store collection conversation turns live in.
 *
 * @since 0.1.0
 * @category constants
 */
export { collection } from "./internal/conversationHistoryTurns.js"

/**
 * Effect id of the history read (BeforePlanning).
 *
 * @since 0.1.0
 * @category constants
 */
export const contextEffectId = "conversation_history_context"

/**
 * Effect id of the turns' write (AfterSynthesis).
 *
 * @since 0.1.0
 * @category constants
 */
export const recordEffectId = "conversation_history_record"

/**
 * The request metadata key the session id is read from by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const metadataSessionId = "session_id"

/**
 * A stored turn's content is cut to this many characters (with `…`), so
 * every turn fits the vector store's text limit.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxTurnChars = 16_000

/**
 * Options of {@link make}. All are optional.
 *
 * - `sessionId`: the session of a request (default: metadata `session_id`, a non-empty string)
 * - `maxTurns`: turns loaded at most (default 20, 1..1,000)
 * - `budgetBytes`: the history's size in UTF-8 bytes, newest turns kept (default 8,000, 64..262,144)
 * - `record`: append this request's turns after synthesis (default `true`)
 * - `ttl`: retention of a stored turn (default: kept until removed)
 * - `name`: the hook's name (default `conversation-history`)
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly sessionId?: ((context: PipelineContext) => string | undefined) | undefined
  readonly maxTurns?: number | undefined
  readonly budgetBytes?: number | undefined
  readonly record?: boolean | undefined
  readonly ttl?: Duration.DurationInput | undefined
  readonly name?: string | undefined
}

/**
 * The memory scope of a session's turns, as memory operation hooks see it.
 *
 * @since 0.1.0
 * @category utils
 */
export const scopeOf = (session: string): string => `conversation:${session}`

/**
 * The `conversation_history` text of `lines` (oldest first): the newest
 * lines whose joined size fits `budgetBytes`.
 *
 * @since 0.1.0
 * @category utils
 */
export const renderHistory = (lines: ReadonlyArray<string>, budgetBytes: number): ReadonlyArray<string> => {
  const kept: Array<string> = []
  let bytes = 0
  for (let i = lines.length - 1; i >= 0; i--) {
    const size = byteLength(lines[i]!) + (kept.length === 0 ? 0 : 1)
    if (bytes + size > budgetBytes) break
    bytes += size
    kept.push(lines[i]!)
  }
  return kept.reverse()
}

const fromMetadata = (context: PipelineContext): string | undefined => {
  const value = context.metadata[metadataSessionId]
  return typeof value === "string" && value.length > 0 ? value : undefined
}

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

const report = (input: HookEffects.HookEffectInput) => Effect.ignore(HookEffects.report(input))

/**
 * Builds the conversation history hook over the `VectorStore` in context.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, ConversationHistoryHook, Pipeline, VectorStore } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   hooks: Effect.map(ConversationHistoryHook.make({ maxTurns: 10, ttl: "30 days" }), (hook) => [hook])
 * }).pipe(Layer.provide(VectorStore.layerMemory()))
 *
 * const chat = (text: string) =>
 *   Effect.flatMap(Pipeline.Pipeline, (pipeline) =>
 *     pipeline.process({ request: text, metadata: { session_id: "s-42" } }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Hook, InvalidMemoryOptions, VectorStore> =>
  Effect.gen(function*() {
    const maxTurns = yield* wholeNumber("maxTurns", options.maxTurns, 20, 1, 1_000)
    const budgetBytes = yield* wholeNumber("budgetBytes", options.budgetBytes, 8_000, 64, 262_144)
    const hookName = yield* nonEmpty("name", options.name, "conversation-history")
    const ttl = options.ttl === undefined ? undefined : Duration.toMillis(yield* duration("ttl", options.ttl, 1))
    if (options.sessionId !== undefined && typeof options.sessionId !== "function") {
      return yield* new InvalidMemoryOptions({
        option: "sessionId",
        detail: "must be a function of the request context"
      })
    }
    const sessionOf = options.sessionId ?? fromMetadata
    const vectors = yield* VectorStore
    const provide = Effect.provideService(VectorStore, vectors)

    const load = (context: PipelineContext) =>
      Effect.gen(function*() {
        const session = sessionOf(context)
        const effect = { effectId: contextEffectId, name: "Conversation history" }
        if (session === undefined) {
          yield* report({
            ...effect,
            status: "succeeded",
            data: { session_id_present: false, read_status: "skipped" },
            summary: "no session id: nothing read"
          })
          return undefined
        }
        const loaded = yield* Effect.either(
          Memory.loadWith(scopeOf(session), { query: context.request, limit: maxTurns }, (query) =>
            lastTurns(session, Math.max(1, Math.min(query.limit, 1_000))).pipe(
              provide,
              Effect.map((turns) =>
                turns.map((turn): MemoryRecord => ({
                  id: turn.id,
                  content: `${turn.role}: ${turn.content}`,
                  metadata: { role: turn.role, request_id: turn.requestId, created_at: turn.createdAt }
                }))
              )
            ))
        )
        const common = { session_id_present: true, query_limit: maxTurns, budget_bytes: budgetBytes }
        if (Either.isLeft(loaded)) {
          yield* report({
            ...effect,
            status: "failed",
            data: { ...common, read_status: "read_failed" },
            error: messageOf(loaded.left)
          })
          return undefined
        }
        const lines = renderHistory(
          loaded.right.map((r) =>
            r.content
          ),
          budgetBytes
        )
        const text = lines.join("\n")
        yield* report({
          ...effect,
          status: "succeeded",
          data: {
            ...common,
            read_status: "read_succeeded",
            turns_found: loaded.right.length,
            turns_injected: lines.length,
            bytes: byteLength(text),
            replaced_existing: context.enrichments[enrichmentConversationHistory] !== undefined && lines.length > 0
          },
          summary: `${lines.length} of ${loaded.right.length} turns injected`
        })
        return lines.length === 0 ? undefined : { enrichments: { [enrichmentConversationHistory]: text } }
      })

    const append = (context: PipelineContext, response: string) =>
      Effect.gen(function*() {
        const session = sessionOf(context)
        if (session === undefined) return response
        const turns = [{ role: "user", content: context.request }, { role: "assistant", content: response }] as const
        const outcomes = yield* Effect.forEach(turns, (turn) => {
          const record: MemoryRecord = {
            id: turnId(session, context.requestId, turn.role),
            content: shorten(turn.content, maxTurnChars).text,
            metadata: { role: turn.role }
          }
          return Memory.storeWith(scopeOf(session), record, (stored) =>
            appendTurn({
              id: stored.id ?? record.id ?? turnId(session, context.requestId, turn.role),
              session,
              role: turn.role,
              content: shorten(stored.content, maxTurnChars).text,
              requestId: context.requestId,
              ttlMillis: ttl
            }).pipe(provide)).pipe(
              Effect.either,
              Effect.map((stored) =>
                Either.isRight(stored)
                  ? { role: turn.role, outcome: "stored", id: stored.right }
                  : { role: turn.role, outcome: "failed", error: messageOf(stored.left) }
              )
            )
        })
        const failed = outcomes.filter((o) => o.outcome === "failed").length
        yield* report({
          effectId: recordEffectId,
          name: "Conversation history record",
          status: failed === 0 ? "succeeded" : "failed",
          data: { submitted: outcomes.length, failed, outcomes },
          summary: `${outcomes.length - failed} of ${outcomes.length} turns stored`,
          ...(failed === 0 ? {} : { error: `${failed} turn(s) not stored` })
        })
        return response
      })

    return {
      name: hookName,
      capabilities: ["enrichments"],
      beforePlanning: load,
      ...(options.record === false ? {} : { afterSynthesis: append })
    }
  })
