/**
 * The typed memory collections over the VectorStore (EpisodicMemory,
 * KnowledgeBase): what cannot be read back is refused on the way in
 * (`invalid_input`, nothing written) and a stored item that does not decode
 * is a `corrupt` error on the way out — never a crash, never dropped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { EpisodicMemory, KnowledgeBase, VectorStore } from "effect-agent-pipeline"

const event: EpisodicMemory.EpisodicEvent = {
  requestId: "r1",
  stepId: "s1",
  capability: "weather_forecast",
  outcome: "succeeded",
  entities: ["Lisbon"],
  importance: 0.5,
  summary: "sunny",
  summarySource: "heuristic",
  occurredAt: 1,
  recordedAt: 2
}

describe("typed memory collections", () => {
  it.effect("an event that would not decode back is refused as invalid_input; nothing is written", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        EpisodicMemory.append({ id: "e1", scope: "travel", event: { ...event, importance: 2 } })
      )
      expect(error).toMatchObject({ _tag: "VectorStoreError", reason: "invalid_input", operation: "put" })
      expect(yield* EpisodicMemory.recent({ scope: "travel", limit: 5 })).toEqual([])
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.effect("a stored item that does not decode is a corrupt error, for events and fragments alike", () =>
    Effect.gen(function*() {
      const store = yield* VectorStore.VectorStore
      yield* store.put({
        collection: EpisodicMemory.collection,
        id: "bad",
        partition: "travel",
        text: "x",
        payload: { summary: 42 },
        embedding: [1, 0]
      })
      yield* store.put({
        collection: KnowledgeBase.collection,
        id: "bad",
        partition: "travel",
        text: "x",
        payload: { text: "" },
        embedding: [1, 0]
      })
      expect(yield* Effect.flip(EpisodicMemory.recent({ scope: "travel", limit: 5 }))).toMatchObject({
        reason: "corrupt",
        operation: "recent"
      })
      expect(yield* Effect.flip(EpisodicMemory.related({ scope: "travel", vector: [1, 0], limit: 5 }))).toMatchObject({
        reason: "corrupt",
        operation: "search"
      })
      expect(yield* Effect.flip(KnowledgeBase.search({ scope: "travel", vector: [1, 0], limit: 5 }))).toMatchObject({
        reason: "corrupt"
      })
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.effect("round trip: what is appended is read back, with its user; forgetScope clears a scope", () =>
    Effect.gen(function*() {
      const stored = yield* EpisodicMemory.append({ id: "e1", scope: "travel", event, user: "ann", embedding: [1, 0] })
      expect(stored).toMatchObject({ id: "e1", scope: "travel", user: "ann", event })
      expect((yield* EpisodicMemory.related({ scope: "travel", vector: [1, 0], limit: 1 }))[0]?.score).toBeCloseTo(1)
      expect(yield* EpisodicMemory.forgetScope("travel")).toBe(1)
      expect(yield* EpisodicMemory.recent({ scope: "travel", limit: 5 })).toEqual([])
    }).pipe(Effect.provide(VectorStore.layerMemory())))
})
