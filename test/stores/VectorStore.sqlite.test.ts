import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { VectorStore } from "../../src/stores/VectorStore.js"
import { vectorStoreConformance } from "./VectorStoreConformance.js"

const sqlite = (vectorSearch: "extension" | "bruteForce" | "auto") => () =>
  SqlStores.layerVectorStore({ vectorSearch }).pipe(Layer.provide(Sqlite.layerClient(":memory:")), Layer.orDie)

vectorStoreConformance("sqlite (sqlite-vec)", sqlite("extension"), "sqlite-vec")
vectorStoreConformance("sqlite (extension forced off: brute force)", sqlite("bruteForce"), "brute-force")

describe("VectorStore on SQLite", () => {
  it.effect("auto: sqlite-vec is loaded into the client's connection when it is installed", () =>
    Effect.gen(function*() {
      expect(yield* (yield* VectorStore).mode).toBe("sqlite-vec")
    }).pipe(Effect.provide(sqlite("auto")())))

  it.effect("Sqlite.layer provides the vector store over the same file as the other stores; items survive a restart", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-vectors-"))
      const filename = path.join(dir, "agent.db")
      const item = {
        collection: "knowledge",
        id: "k1",
        partition: "acme",
        text: "refunds take 5 days",
        payload: { source: "faq" },
        embedding: [0.6, 0.8]
      }
      yield* Effect.flatMap(VectorStore, (store) => store.put(item)).pipe(
        Effect.provide(Layer.orDie(Sqlite.layer({ filename })))
      )
      const found = yield* Effect.flatMap(
        VectorStore,
        (store) => store.search({ collection: "knowledge", partition: "acme", vector: [0.6, 0.8], limit: 1 })
      ).pipe(Effect.provide(Layer.orDie(Sqlite.layerVectorStore({ filename }))))
      expect(found.map((hit) => [hit.item.id, hit.item.payload])).toEqual([["k1", { source: "faq" }]])
      expect(found[0]!.score).toBeCloseTo(1, 5)
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  it.effect("a corrupt row is a typed corrupt error, not a crash or a wrong item", () =>
    Effect.gen(function*() {
      const store = yield* VectorStore
      const sql = yield* SqlClient
      yield* store.put({ collection: "c", id: "bad", partition: "p", text: "t", payload: {}, embedding: [1, 0] })
      yield* sql`UPDATE eap_vector_items SET payload = 'not json' WHERE item_id = 'bad'`
      const error = yield* Effect.flip(store.get({ collection: "c", id: "bad" }))
      expect(error.reason).toBe("corrupt")
      expect(error.detail).toContain("c/bad")
      const searched = yield* Effect.flip(store.search({ collection: "c", partition: "p", vector: [1, 0], limit: 1 }))
      expect(searched.reason).toBe("corrupt")
    }).pipe(
      Effect.provide(
        SqlStores.layerVectorStore({ vectorSearch: "bruteForce" }).pipe(
          Layer.provideMerge(Sqlite.layerClient(":memory:")),
          Layer.orDie
        )
      )
    ))
})
