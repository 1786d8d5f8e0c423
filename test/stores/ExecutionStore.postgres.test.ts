import { describe, it } from "@effect/vitest"
import { postgresStore, unavailable } from "../support/Backends.js"
import { executionStoreConformance } from "./ExecutionStoreConformance.js"

const skipped = unavailable("postgres")
if (skipped === undefined) {
  executionStoreConformance("postgres", postgresStore)
} else {
  describe("ExecutionStore conformance: postgres", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
