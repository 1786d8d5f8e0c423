/**
 * The request path keeps the latest object of each per-request kind alive
 * (runtime/internal/liveShapes.ts), so optimized code that embeds their
 * hidden classes survives a full GC between bursts of requests. These tests
 * pin that the kinds are kept as the request path makes them, and that
 * only the latest is kept (what is retained stays bounded).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Hook } from "effect-agent-pipeline"
import { keptNow } from "../../src/runtime/internal/liveShapes.js"
import { makeHarness, plan, weatherStep } from "../support/Harness.js"

const hooks = [
  Hook.make({
    name: "enrich",
    beforePlanning: () => Effect.succeed({ enrichments: { note: "n" } })
  }),
  Hook.make({
    name: "watch",
    beforeInference: Hook.sync((_call, prompt: string) => prompt),
    around: { toolExecution: Hook.sync(() => undefined) }
  })
]

const requestIdOf = (
  result: { readonly _tag: "Completed"; readonly response: { readonly requestId: string } } | {
    readonly _tag: "Suspended"
    readonly requestId: string
  }
) => (result._tag === "Completed" ? result.response.requestId : result.requestId)

describe("live shapes", () => {
  it.effect("a request leaves the latest object of each kind kept", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks,
        script: { plans: [plan([weatherStep("s1")])], synthesis: "done" }
      })
      const response = yield* h.pipeline.process({ request: "weather?" })
      const kept = keptNow()
      const request = kept.request as { readonly context: { readonly requestId: string } }
      expect(request.context.requestId).toBe(requestIdOf(response))
      expect(kept.fiber).toBeDefined()
      expect(kept.fiberStatus).toBeDefined()
      // The keeper fiber is parked, not done.
      expect(kept.parked).toBeDefined()
      expect(kept.parked?.unsafePoll()).toBeNull()
      expect(kept.decodedRequest).toBeDefined()
      expect(kept.either).toBeDefined()
      expect(kept.transformChain).toBeDefined()
      expect(kept.observation).toBeDefined()
      expect(kept.modelAttempt).toBeDefined()
      expect(kept.hookRun).toBeDefined()
      // The Hook.sync fast path's timer, and a Hook.sync observer's begun run (recorded runs).
      expect(kept.runTimer).toBeDefined()
      expect(kept.begunObserver).toBeDefined()
      // The fast path's entries in each shape: synthesis (no phase), planning (a phase), a tool execution (a step).
      expect(kept.operationEntry).toMatchObject({ stage: "before_inference", operation: "inference" })
      expect(kept.phaseEntry).toMatchObject({ stage: "before_inference", phase: 1 })
      expect(kept.stepEntry).toMatchObject({ stage: "around_tool_execution", stepId: "s1" })
      // Hooked runs' frozen calls and coordinates.
      expect(kept.childCall).toMatchObject({ operation: "inference", payload: { purpose: "synthesis" } })
      expect(kept.requestCoordinates).toBeDefined()
      expect(kept.phaseCoordinates).toBeDefined()
      expect(kept.stepCoordinates).toEqual({ requestId: requestIdOf(response), phase: 1, stepId: "s1" })
      expect(kept.generatorProtocol.next).toBeTypeOf("function")
    }))

  it.effect("only the latest request is kept", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks,
        script: { plans: [plan([weatherStep("s1")]), plan([weatherStep("s1")])], synthesis: "done" }
      })
      const first = yield* h.pipeline.process({ request: "first" })
      const afterFirst = keptNow()
      const second = yield* h.pipeline.process({ request: "second" })
      const afterSecond = keptNow()
      const idOf = (kept: ReturnType<typeof keptNow>) =>
        (kept.request as { readonly context: { readonly requestId: string } }).context.requestId
      expect(idOf(afterFirst)).toBe(requestIdOf(first))
      expect(idOf(afterSecond)).toBe(requestIdOf(second))
      expect(afterSecond.transformChain).not.toBe(afterFirst.transformChain)
      expect(afterSecond.observation).not.toBe(afterFirst.observation)
      expect(afterSecond.modelAttempt).not.toBe(afterFirst.modelAttempt)
      expect(afterSecond.runTimer).not.toBe(afterFirst.runTimer)
      expect(afterSecond.begunObserver).not.toBe(afterFirst.begunObserver)
    }))
})
