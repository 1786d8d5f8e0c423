import { describe, it } from "@effect/vitest"
import { Layer } from "effect"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTables, postgresCheckpointStore, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { checkpointStoreConformance } from "./CheckpointStoreConformance.js"
import { undecodableCheckpoints } from "./CheckpointStoreUndecodable.js"

const skipped = unavailable("postgres")
if (skipped === undefined) {
  checkpointStoreConformance("postgres", postgresCheckpointStore)
  undecodableCheckpoints("postgres", () => {
    const prefix = uniquePrefix()
    return {
      layer: SqlStores.layerCheckpointStore({ tablePrefix: prefix }).pipe(
        Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
        Layer.provideMerge(postgresClient()),
        Layer.orDie
      ),
      table: `${prefix}checkpoints`
    }
  })
} else {
  describe("CheckpointStore conformance: postgres", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
