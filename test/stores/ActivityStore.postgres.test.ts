import { describe, it } from "@effect/vitest"
import { postgresActivityStore } from "../support/ActivityBackends.js"
import { unavailable } from "../support/Backends.js"
import { activityStoreConformance } from "./ActivityStoreConformance.js"

const skipped = unavailable("postgres")
if (skipped === undefined) {
  activityStoreConformance("postgres", postgresActivityStore, 15)
} else {
  describe("ActivityStore conformance: postgres", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
