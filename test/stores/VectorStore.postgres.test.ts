import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { VectorStore } from "../../src/stores/VectorStore.js"
import { dropTables, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { vectorStoreConformance } from "./VectorStoreConformance.js"

const postgres = (vectorSearch: "bruteForce" | "auto") => () => {
  const prefix = uniquePrefix()
  return SqlStores.layerVectorStore({ tablePrefix: prefix, vectorSearch }).pipe(
    Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
    Layer.provide(postgresClient()),
    Layer.orDie
  )
}

const skipped = unavailable("postgres")
if (skipped === undefined) {
  vectorStoreConformance("postgres (brute force)", postgres("bruteForce"), "brute-force")

  describe("VectorStore on PostgreSQL", () => {
    it.effect("auto: pgvector when CREATE EXTENSION vector works, else brute force with one warning", () =>
      Effect.gen(function*() {
        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(message))
        })
        yield* Effect.gen(function*() {
          const store = yield* VectorStore
          yield* store.put({ collection: "c", id: "a", partition: "p", text: "t", payload: {}, embedding: [1, 0] })
          for (let i = 0; i < 3; i++) {
            const hits = yield* store.search({ collection: "c", partition: "p", vector: [1, 0], limit: 1 })
            expect(hits.map((h) => h.item.id)).toEqual(["a"])
          }
          const mode = yield* store.mode
          // pgvector is not installed on the CI machines (not in Debian's packages): brute force.
          if (mode === "brute-force") {
            expect(warnings).toHaveLength(1)
            expect(warnings[0]).toContain("pgvector cannot be used")
          } else {
            expect(mode).toBe("pgvector")
            expect(warnings).toEqual([])
          }
        }).pipe(Effect.provide(Layer.merge(postgres("auto")(), Logger.replace(Logger.defaultLogger, logger))))
      }))
  })
} else {
  describe("VectorStore conformance: postgres", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
