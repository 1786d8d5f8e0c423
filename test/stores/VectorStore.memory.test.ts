import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { layerMemory, makeMemory, VectorStore } from "../../src/stores/VectorStore.js"
import { vectorStoreConformance } from "./VectorStoreConformance.js"

vectorStoreConformance("memory", () => Layer.orDie(layerMemory()), "memory")

const put = (id: string, extra: { readonly text?: string; readonly expiresAt?: number } = {}) =>
  Effect.flatMap(
    VectorStore,
    (store) =>
      store.put({
        collection: "c",
        id,
        partition: "p",
        text: extra.text ?? id,
        payload: {},
        embedding: [1, 0],
        ...extra
      })
  )

const ids = Effect.flatMap(
  VectorStore,
  (store) =>
    Effect.map(store.recent({ collection: "c", partition: "p", limit: 100 }), (items) => items.map((i) => i.id).sort())
)

describe("VectorStore memory bounds", () => {
  it.effect("maxItems: past the bound, expired items go first, then the least recently written", () =>
    Effect.gen(function*() {
      yield* put("a")
      yield* put("c")
      yield* put("b", { expiresAt: 1 })
      yield* TestClock.setTime(5)
      // Over the bound: "b" is expired, so it goes — not "a", the least recently written.
      yield* put("d")
      expect(yield* ids).toEqual(["a", "c", "d"])
      yield* put("a", { text: "rewritten" }) // now the most recently written
      yield* put("e")
      expect(yield* ids).toEqual(["a", "d", "e"])
    }).pipe(Effect.provide(Layer.orDie(layerMemory({ maxItems: 3 })))))

  it.effect("maxBytes: an item is counted by its text, payload, keys and float32 embedding", () =>
    Effect.gen(function*() {
      // Each item: 10 bytes of text + 2 of payload ({}) + 2 of keys ({}) + 8 of embedding = 22.
      yield* put("x1", { text: "0123456789" })
      yield* put("x2", { text: "0123456789" })
      yield* put("x3", { text: "0123456789" })
      expect(yield* ids).toEqual(["x2", "x3"])
    }).pipe(Effect.provide(Layer.orDie(layerMemory({ maxBytes: 50 })))))

  it.effect("bounds that are not positive integers are refused", () =>
    Effect.gen(function*() {
      for (const options of [{ maxItems: 0 }, { maxItems: 1.5 }, { maxBytes: -1 }, { maxItems: 10_000_001 }]) {
        const error = yield* Effect.flip(makeMemory(options))
        expect(error.reason).toBe("invalid_input")
        expect(error.operation).toBe("open")
      }
    }))
})
