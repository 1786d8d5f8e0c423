/**
 * Every hook run is bounded on the live clock too, where the deadline is a
 * plain timer rather than a sleep on a fiber (runtime/internal/liveTimer.ts):
 * a hook that waits past its timeout is cut off, one that ignores the
 * interruption is abandoned after the grace period, one that answers in
 * time is kept — and the request goes on in each case. (The TestClock
 * suite, WedgedHooks.test.ts, pins the same rules with the clock driven.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type AgentResponse, type ExecutionRecord, Hook } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep } from "../support/Harness.js"

const script = { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
const options = { hookTimeout: "60 millis", hookGracePeriod: "40 millis" } as const

const text = (result: AgentResponse.PipelineResult) =>
  result._tag === "Completed" ? result.response.response : `(${result._tag})`

const runOf = (record: ExecutionRecord.ExecutionRecord, name: string) => {
  const run = record.hookInvocations.find((i) => i.name === name)
  if (run === undefined) throw new Error(`no run of ${name}`)
  return run
}

/** The request, and how long it took (ms). */
const timed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const result = yield* effect
    return [result, Date.now() - started] as const
  })

describe("wedged hooks on the live clock", () => {
  it.live("a hook that waits past its timeout is cut off at it; the request carries on (fail open)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "slow", beforePlanning: () => Effect.sleep("10 seconds") })],
        script,
        options
      })
      const [result, took] = yield* timed(h.pipeline.process({ request: "quote ACME", requestId: "live-slow" }))
      expect(text(result)).toBe("draft")
      expect(took).toBeGreaterThanOrEqual(55)
      expect(took).toBeLessThan(5_000)
      const run = runOf(yield* h.record("live-slow"), "slow")
      expect([run.status, run.decision?.reason, run.abandoned]).toEqual(["timed_out", "timed_out", undefined])
    }))

  it.live("a hook that ignores the interruption is abandoned after the grace period", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "wedged", afterExecution: () => Effect.uninterruptible(Effect.sleep("3 seconds")) })],
        script,
        options
      })
      const [result, took] = yield* timed(h.pipeline.process({ request: "quote ACME", requestId: "live-wedged" }))
      expect(text(result)).toBe("draft")
      expect(took).toBeGreaterThanOrEqual(90)
      expect(took).toBeLessThan(2_500)
      const run = runOf(yield* h.record("live-wedged"), "wedged")
      expect([run.status, run.abandoned]).toEqual(["timed_out", true])
    }))

  it.live("a hook that waits but answers in time is kept, on stages and on operations", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "prompt",
            beforeInference: (_call, prompt: string) => Effect.as(Effect.sleep("5 millis"), `${prompt}\n[seen]`)
          }),
          Hook.make({
            name: "answer",
            afterSynthesis: (_context, draft: string) => Effect.as(Effect.sleep("5 millis"), `${draft}!`)
          })
        ],
        script,
        options
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "live-ok" })
      expect(text(result)).toBe("draft!")
      expect(h.prompts.map((p) => p.prompt.endsWith("[seen]"))).toEqual([true, true])
      const record = yield* h.record("live-ok")
      expect(record.hookInvocations.map((i) => [i.name, i.status])).toEqual([
        ["prompt", "completed"],
        ["prompt", "completed"],
        ["answer", "completed"]
      ])
    }))
})
