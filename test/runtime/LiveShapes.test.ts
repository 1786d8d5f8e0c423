/**
 * The request path keeps the newest object of each per-request kind alive,
 * and one parked fiber (domain/internal/liveShapes.ts), so optimized code
 * that embeds their hidden classes survives a full collection between
 * bursts of requests. These tests pin that the kinds are kept as the
 * request path makes them, and that only the newest is kept (what is
 * retained stays bounded). What it buys is measured, not asserted here:
 * docs/performance.md, "Bursts after an idle collection".
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Hook } from "effect-agent-pipeline"
import { makeHarness, plan, weatherStep } from "../support/Harness.js"
import { LiveShapes } from "../support/Internal.js"

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

/** The request id of the kept recorder's record. */
const keptRequestId = (kept: ReturnType<typeof LiveShapes.keptNow>): unknown => {
  const recorder = kept.recorder
  if (typeof recorder !== "object" || recorder === null || !("current" in recorder)) return undefined
  const current = recorder.current
  if (typeof current !== "function") return undefined
  const record: unknown = current.call(recorder)
  return typeof record === "object" && record !== null && "requestId" in record ? record.requestId : undefined
}

describe("live shapes", () => {
  it.effect("a request leaves the newest object of each kind kept, and the keeper fiber parked", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks,
        script: { plans: [plan([weatherStep("s1")])], synthesis: "done" }
      })
      const response = yield* h.pipeline.process({ request: "weather?" })
      const kept = LiveShapes.keptNow()
      expect(keptRequestId(kept)).toBe(requestIdOf(response))
      expect(kept.fiber).toBeDefined()
      // Parked, not done: a done fiber keeps none of the runtime's per-step objects.
      expect(kept.parked).toBeDefined()
      expect(kept.parked?.unsafePoll()).toBeNull()
      expect(kept.transformChain).toBeDefined()
      expect(kept.observation).toBeDefined()
      expect(kept.hookRun).toBeDefined()
      expect(kept.runTimer).toBeDefined()
      expect(kept.operationEntry).toMatchObject({ status: "completed" })
      // The request's start, the plan as parsed, a fiber status, the record's encoding, a hash's state.
      expect(kept.requestStart).toBeDefined()
      expect(kept.parsedPlan).toMatchObject({ steps: [{ step_id: "s1" }] })
      expect(kept.fiberStatus).toBeDefined()
      expect(kept.encoding).toBeDefined()
      expect(kept.hash).toBeDefined()
      expect(kept.enrichments).toMatchObject({ note: "n" })
      // The newest calls, of the request's several shapes (with a parent, a phase, a step).
      const calls = kept.calls.filter((c): c is { readonly operation: string } =>
        typeof c === "object" && c !== null && "operation" in c
      )
      // (The ring may still hold calls of earlier requests of other shapes.)
      const operations = new Set(calls.map((c) => c.operation))
      for (const operation of ["request", "phase", "inference", "tool_call", "tool_execution"]) {
        expect(operations.has(operation), operation).toBe(true)
      }
      expect(kept.calls.length).toBeLessThanOrEqual(16)
    }))

  it.effect("only the newest request is kept", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks,
        script: { plans: [plan([weatherStep("s1")]), plan([weatherStep("s1")])], synthesis: "done" }
      })
      const first = yield* h.pipeline.process({ request: "first" })
      const afterFirst = LiveShapes.keptNow()
      const second = yield* h.pipeline.process({ request: "second" })
      const afterSecond = LiveShapes.keptNow()
      expect(keptRequestId(afterFirst)).toBe(requestIdOf(first))
      expect(keptRequestId(afterSecond)).toBe(requestIdOf(second))
      expect(afterSecond.recorder).not.toBe(afterFirst.recorder)
      expect(afterSecond.transformChain).not.toBe(afterFirst.transformChain)
      expect(afterSecond.observation).not.toBe(afterFirst.observation)
      expect(afterSecond.hookRun).not.toBe(afterFirst.hookRun)
      expect(afterSecond.runTimer).not.toBe(afterFirst.runTimer)
      expect(afterSecond.operationEntry).not.toBe(afterFirst.operationEntry)
      expect(afterSecond.requestStart).not.toBe(afterFirst.requestStart)
      expect(afterSecond.parsedPlan).not.toBe(afterFirst.parsedPlan)
      expect(afterSecond.encoding).not.toBe(afterFirst.encoding)
      // One parked fiber per process, however many pipelines.
      expect(afterSecond.parked).toBe(afterFirst.parked)
    }))
})
