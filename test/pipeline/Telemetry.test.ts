import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeHarness, plan, quoteStep, tracer } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"

describe("probe", () => {
  it.effect("probe", () => {
    const t = InMemoryTracing.make()
    return Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({ hooks: [tracer("a", calls)], script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
      yield* h.pipeline.process({ request: "q", requestId: "r1" })
      for (const s of t.spans()) console.log(s.name, s.spanContext().spanId, s.parentSpanContext?.spanId, s.ended, s.status, JSON.stringify(s.attributes))
    }).pipe(Effect.provide(t.layer))
  })
})
