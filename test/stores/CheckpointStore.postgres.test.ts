import { describe, it } from "@effect/vitest"
import { postgresCheckpointStore, unavailable } from "../support/Backends.js"
import { checkpointStoreConformance } from "./CheckpointStoreConformance.js"

const skipped = unavailable("postgres")
if (skipped === undefined) {
  checkpointStoreConformance("postgres", postgresCheckpointStore)
} else {
  describe("CheckpointStore conformance: postgres", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
