import { describe, it } from "@effect/vitest"
import { Layer } from "effect"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTables, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { semanticCacheFlow } from "./SemanticCacheSupport.js"

const postgres = () => {
  const prefix = uniquePrefix()
  return SqlStores.layerVectorStore({ tablePrefix: prefix, vectorSearch: "auto" }).pipe(
    Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
    Layer.provide(postgresClient()),
    Layer.orDie
  )
}

const skipped = unavailable("postgres")
if (skipped === undefined) {
  semanticCacheFlow("PostgreSQL", postgres)
} else {
  describe("SemanticCache on PostgreSQL", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
