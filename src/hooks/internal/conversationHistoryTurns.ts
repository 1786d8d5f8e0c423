/**
 * Conversation turns in the vector store (collection `conversation_turns`,
 * partition = session id): one item per turn, its text the turn's content,
 * its payload the role and the request it came from. Read back newest
 * first; a stored item whose payload does not decode is a `corrupt` error.
 */
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { type Item, VectorStore, VectorStoreError } from "../../stores/VectorStore.js"

/** The vector store collection conversation turns live in. */
export const collection = "conversation_turns"

/** A stored turn. */
export interface Turn {
  readonly id: string
  readonly role: string
  readonly content: string
  readonly requestId: string
  readonly createdAt: number
}

const Payload = Schema.Struct({ role: Schema.String, requestId: Schema.String })
const decode = Schema.decodeUnknownEither(Payload)

const turnOf = (item: Item): Effect.Effect<Turn, VectorStoreError> => {
  const decoded = decode(item.payload)
  return decoded._tag === "Left"
    ? Effect.fail(
      new VectorStoreError({
        operation: "recent",
        reason: "corrupt",
        detail: `conversation turn ${item.id} does not decode: ${decoded.left.message}`
      })
    )
    : Effect.succeed({
      id: item.id,
      role: decoded.right.role,
      content: item.text,
      requestId: decoded.right.requestId,
      createdAt: item.createdAt
    })
}

/**
 * The id of a request's turn. Both turns of a request are written at the
 * same millisecond, and the store lists equal times by ascending id, so
 * the assistant's id (`…:a`) sorts before — reads as newer than — the
 * user's (`…:u`).
 */
export const turnId = (session: string, requestId: string, role: "user" | "assistant"): string =>
  `ct-${createHash("sha256").update(JSON.stringify([session, requestId])).digest("hex").slice(0, 40)}:${
    role === "assistant" ? "a" : "u"
  }`

/** The last `limit` turns of a session, oldest first. */
export const lastTurns = (
  session: string,
  limit: number
): Effect.Effect<ReadonlyArray<Turn>, VectorStoreError, VectorStore> =>
  Effect.flatMap(VectorStore, (store) => store.recent({ collection, partition: session, limit })).pipe(
    Effect.flatMap((items) => Effect.forEach(items, turnOf)),
    Effect.map((turns) => turns.slice().reverse())
  )

/** Appends a turn (replacing one with the same id); returns its id. */
export const appendTurn = (input: {
  readonly id: string
  readonly session: string
  readonly role: string
  readonly content: string
  readonly requestId: string
  readonly ttlMillis: number | undefined
}): Effect.Effect<string, VectorStoreError, VectorStore> =>
  Effect.gen(function*() {
    const store = yield* VectorStore
    const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const item = yield* store.put({
      collection,
      id: input.id,
      partition: input.session,
      text: input.content,
      payload: { role: input.role, requestId: input.requestId },
      createdAt: now,
      ...(input.ttlMillis === undefined ? {} : { expiresAt: now + input.ttlMillis })
    })
    return item.id
  })
