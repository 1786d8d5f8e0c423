import { describe, it } from "@effect/vitest"
import { Layer } from "effect"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTables, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { userFactsConformance } from "./UserFactsConformance.js"

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
  userFactsConformance("postgres", postgres)
} else {
  describe("UserFacts conformance: postgres", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
