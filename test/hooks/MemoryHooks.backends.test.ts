/**
 * The memory hooks on every backend the issue names: the in-memory store,
 * SQLite (sqlite-vec and brute force) and PostgreSQL (brute force here:
 * pgvector is not in Debian's packages on the CI machines).
 */
import { describe, it } from "@effect/vitest"
import { Layer } from "effect"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import * as VectorStore from "../../src/stores/VectorStore.js"
import { dropTables, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { memoryHooksFlow } from "./MemoryHooksFlow.js"

memoryHooksFlow("the memory store", () => VectorStore.layerMemory())
memoryHooksFlow(
  "SQLite (sqlite-vec)",
  () =>
    SqlStores.layerVectorStore({ vectorSearch: "extension" }).pipe(
      Layer.provide(Sqlite.layerClient(":memory:")),
      Layer.orDie
    )
)
memoryHooksFlow(
  "SQLite (brute force)",
  () =>
    SqlStores.layerVectorStore({ vectorSearch: "bruteForce" }).pipe(
      Layer.provide(Sqlite.layerClient(":memory:")),
      Layer.orDie
    )
)

const skipped = unavailable("postgres")
if (skipped === undefined) {
  memoryHooksFlow("PostgreSQL", () => {
    const prefix = uniquePrefix()
    return SqlStores.layerVectorStore({ tablePrefix: prefix, vectorSearch: "auto" }).pipe(
      Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
      Layer.provide(postgresClient()),
      Layer.orDie
    )
  })
} else {
  describe("memory hooks on PostgreSQL", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
