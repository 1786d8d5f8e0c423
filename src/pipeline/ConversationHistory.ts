/**
 * Auto-promotion, the zero-hook path (seed 000 §5.4, C6): before any hook
 * runs, `conversation_history` and `rag_context` — and nothing else — are
 * copied from request metadata into the enrichments. Raw conversation turns
 * (`metadata.conversation_turns`) go through the replaceable
 * `ConversationHistoryPreparer`. Hooks run afterwards and may override.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Json, JsonObject } from "../domain/Json.js"
import {
  enrichmentConversationHistory,
  enrichmentRagContext,
  metadataConversationTurns
} from "../domain/PipelineContext.js"

/**
 * Turns raw conversation turns into the `conversation_history` text.
 *
 * @since 0.1.0
 * @category services
 */
export class ConversationHistoryPreparer extends Context.Tag("effect-agent-pipeline/ConversationHistoryPreparer")<
  ConversationHistoryPreparer,
  { readonly prepare: (turns: Json) => Option.Option<string> }
>() {}

/**
 * The default preparer: keeps the last `maxTurns` turns of the form
 * `{ role, content }` and renders them as `role: content` lines. Anything
 * that is not a list of such turns yields nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDefaultPreparer = (maxTurns = 20): ConversationHistoryPreparer["Type"] => ({
  prepare: (turns) => {
    if (!Array.isArray(turns)) return Option.none()
    const lines: Array<string> = []
    for (const turn of turns.slice(-maxTurns)) {
      if (turn === null || typeof turn !== "object" || Array.isArray(turn)) continue
      const { content, role } = turn as JsonObject
      if (typeof role === "string" && typeof content === "string") lines.push(`${role}: ${content}`)
    }
    return lines.length === 0 ? Option.none() : Option.some(lines.join("\n"))
  }
})

/**
 * The default preparer as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDefault: Layer.Layer<ConversationHistoryPreparer> = Layer.succeed(
  ConversationHistoryPreparer,
  makeDefaultPreparer()
)

/**
 * The enrichments a request starts with: only `rag_context` and
 * `conversation_history` are promoted; an explicit `conversation_history`
 * wins over prepared turns.
 *
 * @example
 * ```ts
 * import { ConversationHistory } from "effect-agent-pipeline"
 * ConversationHistory.promote(
 *   { conversation_turns: [{ role: "user", content: "hi" }], user_id: "u1" },
 *   ConversationHistory.makeDefaultPreparer()
 * ) // { conversation_history: "user: hi" }
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const promote = (metadata: JsonObject, preparer: ConversationHistoryPreparer["Type"]): JsonObject => {
  const out: Record<string, Json> = {}
  const rag = metadata[enrichmentRagContext]
  if (rag !== undefined) out[enrichmentRagContext] = rag
  const history = metadata[enrichmentConversationHistory]
  if (history !== undefined) {
    out[enrichmentConversationHistory] = history
  } else {
    const turns = metadata[metadataConversationTurns]
    if (turns !== undefined) {
      const prepared = preparer.prepare(turns)
      if (Option.isSome(prepared)) out[enrichmentConversationHistory] = prepared.value
    }
  }
  return out
}

/**
 * The preparer in context, or the default one.
 *
 * @since 0.1.0
 * @category accessors
 */
export const currentPreparer: Effect.Effect<ConversationHistoryPreparer["Type"]> = Effect.map(
  Effect.serviceOption(ConversationHistoryPreparer),
  Option.getOrElse(() => makeDefaultPreparer())
)
