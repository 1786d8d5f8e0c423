/**
 * The memory recorder (C19): it completes before synthesis; only its
 * summarizer call is bounded (2 minutes by default, `summarizerTimeout` or
 * `AGENT_MEMORY_SUMMARIZER_TIMEOUT`), falling back to the heuristic summary;
 * canceling the request fails `episodic_memory_records` and stops the
 * writes. The summarizer's reply is checked entry by entry and counted.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Effect, Fiber, TestClock } from "effect"
import { EpisodicMemory, Hook, MemoryHooks, VectorStore } from "effect-agent-pipeline"
import { effectOf, forecastStep, makeAgent, plan, textModel } from "./MemoryHooksSupport.js"

const travel = { memory_domain: "travel" }
const twoCities = { plans: [plan(forecastStep("s1", "Lisbon"), forecastStep("s2", "Paris"))], synthesis: "done" }

describe("C19: the memory recorder", () => {
  it.scoped("C19: every event is written before synthesis starts", () =>
    Effect.gen(function*() {
      const { service: model } = yield* textModel(() => Effect.succeed("[]"))
      const memory = yield* MemoryHooks.build({ model })
      const order: Array<string> = []
      const watch = Hook.make({
        name: "watch",
        around: {
          memoryStore: () =>
            Effect.sync(() => {
              order.push("store")
              return () => Effect.sync(() => void order.push("stored"))
            }),
          inference: (call) => Effect.sync(() => void order.push(`inference:${call.payload.purpose}`))
        }
      })
      const agent = yield* makeAgent({ hooks: [...memory.hooks, watch], script: twoCities })
      yield* agent.pipeline.process({ request: "Weather?", requestId: "r1", metadata: travel })
      expect(order.filter((o) => o !== "inference:planning")).toEqual([
        "store",
        "stored",
        "store",
        "stored",
        "inference:synthesis"
      ])
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.scoped("C19: a summarizer that does not answer within 2 minutes (the default) is abandoned for the heuristic; the events are written", () =>
    Effect.gen(function*() {
      const { service: model } = yield* textModel(() => Effect.as(Effect.sleep("10 minutes"), "[]"))
      const memory = yield* MemoryHooks.build({ model })
      const agent = yield* makeAgent({ hooks: memory.hooks, script: twoCities })
      const fiber = yield* Effect.fork(
        agent.pipeline.process({ request: "Weather?", requestId: "r1", metadata: travel })
      )
      yield* TestClock.adjust("119 seconds")
      expect(yield* EpisodicMemory.recent({ scope: "travel", limit: 10 })).toEqual([])
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      expect(result._tag).toBe("Completed")
      const recorded = effectOf(yield* agent.test.record("r1"), "memory-record", MemoryHooks.recordsEffectId)
      expect(recorded?.status).toBe("succeeded")
      expect(recorded?.data).toMatchObject({
        submitted: 2,
        provider_call: { status: "timed_out" },
        summary_coverage: { sources: { model: 0, heuristic: 2 } }
      })
      expect((yield* EpisodicMemory.recent({ scope: "travel", limit: 10 })).map((e) => e.event.summarySource))
        .toEqual(["heuristic", "heuristic"])
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.scoped("C19: AGENT_MEMORY_SUMMARIZER_TIMEOUT sets the bound; an unreadable value is a typed construction error", () =>
    Effect.gen(function*() {
      const { service: model } = yield* textModel(() => Effect.as(Effect.sleep("10 minutes"), "[]"))
      const withTimeout = (value: string) =>
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["AGENT_MEMORY_SUMMARIZER_TIMEOUT", value]])))
      const memory = yield* MemoryHooks.build({ model }).pipe(withTimeout("5 seconds"))
      const agent = yield* makeAgent({ hooks: memory.hooks, script: twoCities })
      const fiber = yield* Effect.fork(
        agent.pipeline.process({ request: "Weather?", requestId: "r1", metadata: travel })
      )
      yield* TestClock.adjust("5 seconds")
      expect((yield* Fiber.join(fiber))._tag).toBe("Completed")
      expect(
        effectOf(yield* agent.test.record("r1"), "memory-record", MemoryHooks.recordsEffectId)?.data
      ).toMatchObject({ submitted: 2, provider_call: { status: "timed_out" } })

      const error = yield* Effect.flip(MemoryHooks.build({ model }).pipe(withTimeout("soon")))
      expect(error).toMatchObject({ _tag: "InvalidMemoryOptions", option: "AGENT_MEMORY_SUMMARIZER_TIMEOUT" })
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.scoped("C19: canceling the request while the summarizer runs fails the effect and writes nothing", () =>
    Effect.gen(function*() {
      const asked = yield* Deferred.make<void>()
      const { service: model } = yield* textModel(() => Effect.zipRight(Deferred.succeed(asked, void 0), Effect.never))
      const memory = yield* MemoryHooks.build({ model })
      const agent = yield* makeAgent({ hooks: memory.hooks, script: twoCities })
      const fiber = yield* Effect.fork(
        agent.pipeline.process({ request: "Weather?", requestId: "r1", metadata: travel })
      )
      yield* Deferred.await(asked)
      yield* Fiber.interrupt(fiber)
      expect(yield* EpisodicMemory.recent({ scope: "travel", limit: 10 })).toEqual([])
      const recorded = effectOf(yield* agent.test.record("r1"), "memory-record", MemoryHooks.recordsEffectId)
      expect(recorded?.status).toBe("failed")
      expect(recorded?.data).toMatchObject({ steps: 2, submitted: 0, stopped: "request_canceled" })
      expect(recorded?.error).toContain("request canceled: 0 of 2 events submitted")
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.scoped("C19: canceling between writes stops the rest: what was submitted is reported, nothing after it is written", () =>
    Effect.gen(function*() {
      const firstStored = yield* Deferred.make<void>()
      const memory = yield* MemoryHooks.build({ summarizer: "heuristic" })
      // The second write waits forever (a slow backend): the request is canceled meanwhile.
      let writes = 0
      const slow = Hook.make({
        name: "slow-backend",
        guard: {
          memoryStore: (_call, proceed) =>
            Effect.suspend(() =>
              ++writes === 1 ? Effect.tap(proceed, () => Deferred.succeed(firstStored, void 0)) : Effect.never
            )
        }
      })
      const agent = yield* makeAgent({ hooks: [...memory.hooks, slow], script: twoCities })
      const fiber = yield* Effect.fork(
        agent.pipeline.process({ request: "Weather?", requestId: "r1", metadata: travel })
      )
      yield* Deferred.await(firstStored)
      yield* Fiber.interrupt(fiber)
      expect((yield* EpisodicMemory.recent({ scope: "travel", limit: 10 })).map((e) => e.id)).toEqual(["r1:s1"])
      const recorded = effectOf(yield* agent.test.record("r1"), "memory-record", MemoryHooks.recordsEffectId)
      expect(recorded?.status).toBe("failed")
      expect(recorded?.data).toMatchObject({ submitted: 1, stopped: "request_canceled" })
    }).pipe(Effect.provide(VectorStore.layerMemory())))
})

describe("the summarizer's reply", () => {
  it.scoped("model summaries are used where valid; ungrounded entities are rejected; a missing entry gets the heuristic; counts in summary_coverage", () =>
    Effect.gen(function*() {
      const reply = JSON.stringify([
        { step_id: "s1", summary: "Lisbon: 21°C and sunny.", entities: ["Lisbon", "Narnia"] },
        { step_id: "s1", summary: "a duplicate", entities: [] },
        { step_id: "nope", summary: "unknown step" }
      ])
      const { prompts, service: model } = yield* textModel(() => Effect.succeed("```json\n" + reply + "\n```"))
      const memory = yield* MemoryHooks.build({ model })
      const agent = yield* makeAgent({ hooks: memory.hooks, script: twoCities })
      yield* agent.pipeline.process({ request: "Weather?", requestId: "r1", metadata: travel })
      expect(prompts[0]).toContain("<step id=\"s1\" tool=\"weather_forecast\" outcome=\"succeeded\">")
      const recorded = effectOf(yield* agent.test.record("r1"), "memory-record", MemoryHooks.recordsEffectId)
      expect(recorded?.data).toMatchObject({
        provider_call: { status: "returned" },
        summary_coverage: {
          sources: { model: 1, heuristic: 1 },
          batch: {
            entity_fields: {
              observed: 1,
              missing: 1,
              duplicates: 1,
              invalid: 1,
              mixed: 1,
              valid: 0,
              accepted_entities: 1,
              rejected_entities: 1
            }
          }
        },
        events: [
          { step_id: "s1", summary_source: "model", entities: ["Lisbon"] },
          { step_id: "s2", summary_source: "heuristic", summary_cause: "missing" }
        ]
      })
      const events = yield* EpisodicMemory.recent({ scope: "travel", limit: 10 })
      expect(events.find((e) => e.id === "r1:s1")?.event.summary).toBe("Lisbon: 21°C and sunny.")
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.scoped("steps beyond the batch limit get the heuristic and carry batch_limit; an unusable reply falls back for all", () =>
    Effect.gen(function*() {
      const { service: model } = yield* textModel(() =>
        Effect.succeed(JSON.stringify([{ step_id: "s1", summary: "Lisbon is sunny", entities: [] }]))
      )
      const memory = yield* MemoryHooks.build({ model, batchLimit: 1 })
      const agent = yield* makeAgent({ hooks: memory.hooks, script: twoCities })
      yield* agent.pipeline.process({ request: "Weather?", requestId: "r1", metadata: travel })
      expect(
        effectOf(yield* agent.test.record("r1"), "memory-record", MemoryHooks.recordsEffectId)?.data
      ).toMatchObject({
        summary_coverage: { batch_excluded: 1, batch_limit: 1, sources: { model: 1, heuristic: 1 } },
        events: [
          { step_id: "s1", summary_source: "model" },
          { step_id: "s2", summary_source: "heuristic", summary_cause: "batch_excluded", batch_limit: 1 }
        ]
      })

      const { service: confused } = yield* textModel(() => Effect.succeed("I summarized them nicely!"))
      const fallback = yield* MemoryHooks.build({ model: confused, domain: "other" })
      const second = yield* makeAgent({ hooks: fallback.hooks, script: twoCities })
      yield* second.pipeline.process({ request: "Weather?", requestId: "r2" })
      expect(
        effectOf(yield* second.test.record("r2"), "memory-record", MemoryHooks.recordsEffectId)?.data
      ).toMatchObject({
        provider_call: { status: "returned", parse_error: "reply is not a JSON array" },
        summary_coverage: { sources: { model: 0, heuristic: 2 } }
      })
    }).pipe(Effect.provide(VectorStore.layerMemory())))
})
