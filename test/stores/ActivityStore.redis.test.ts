import { describe, it } from "@effect/vitest"
import { redisActivityStore } from "../support/ActivityBackends.js"
import { unavailable } from "../support/Backends.js"
import { activityStoreConformance } from "./ActivityStoreConformance.js"

const skipped = unavailable("redis")
if (skipped === undefined) {
  activityStoreConformance("redis", redisActivityStore, 25)
} else {
  describe("ActivityStore conformance: redis", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
