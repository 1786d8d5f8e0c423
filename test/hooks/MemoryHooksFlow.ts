/**
 * The memory hooks' whole flow, run on every vector store backend: a
 * request's steps are recorded, a later request's planning prompt shows
 * them (recent window, related events by embedding, knowledge fragments),
 * a user is forgotten.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, TestClock } from "effect"
import { Embeddings, EpisodicMemory, KnowledgeBase, MemoryHooks, type VectorStore } from "effect-agent-pipeline"
import { effectOf, forecastStep, makeAgent, plan, planningPrompts, textModel } from "./MemoryHooksSupport.js"

export const memoryHooksFlow = <E>(name: string, vectors: () => Layer.Layer<VectorStore.VectorStore, E>) =>
  describe(`memory hooks on ${name}`, () => {
    it.scoped("record → recall (recent, related, knowledge) → forget a user", () =>
      Effect.gen(function*() {
        const { service: model } = yield* textModel((prompt) =>
          Effect.succeed(
            prompt.includes("knowledge fragments") ? JSON.stringify(["Lisbon forecasts are in Celsius."]) : "[]"
          )
        )
        const memory = yield* MemoryHooks.build({
          model,
          embeddings: yield* Embeddings.makeOffline(),
          recentLimit: 1,
          relatedMinScore: 0.1
        })
        const agent = yield* makeAgent({
          hooks: memory.hooks,
          script: {
            plans: [plan(forecastStep("s1", "Lisbon")), plan(forecastStep("s1", "Paris")), plan()],
            synthesis: "noted"
          }
        })
        const travel = { memory_domain: "travel", user_id: "ann" }
        yield* agent.pipeline.process({ request: "Weather in Lisbon?", requestId: "r1", metadata: travel })
        yield* memory.idle
        yield* TestClock.adjust("1 minute")
        yield* agent.pipeline.process({ request: "Weather in Paris?", requestId: "r2", metadata: travel })
        yield* memory.idle
        yield* agent.pipeline.process({ request: "Lisbon again?", requestId: "r3", metadata: travel })
        // r3's detached knowledge extraction too: a fragment stored after forgetUser would outlive it.
        yield* memory.idle
        const prompt = planningPrompts(agent)[2]!
        const view = prompt.slice(prompt.indexOf("<agent_memory>"), prompt.indexOf("</agent_memory>"))
        // The recent window holds the newest event only (limit 1); the Lisbon event comes back as related.
        expect(view).toContain("Paris: 15°C, cloudy")
        expect(view).toContain("21°C and sunny")
        expect(view).toContain("- knowledge: Lisbon forecasts are in Celsius.")
        const context = effectOf(
          yield* agent.test.record("r3"),
          "memory-enrichment",
          MemoryHooks.planningContextEffectId
        )
        expect(context?.data).toMatchObject({ section_count: 3, view: { sections: { recent: 1, related: 1 } } })
        expect(effectOf(yield* agent.test.record("r3"), "memory-enrichment", MemoryHooks.digestWindowEffectId)?.data)
          .toMatchObject({ cache_entry_found: true, coverage: "limited_window" })

        const forgotten = yield* MemoryHooks.forgetUser("ann")
        expect(forgotten.events).toBe(2)
        expect(forgotten.fragments).toBeGreaterThanOrEqual(1)
        expect(yield* EpisodicMemory.recent({ scope: "travel", limit: 10 })).toEqual([])
        expect(yield* KnowledgeBase.recent({ scope: "travel", limit: 10 })).toEqual([])
      }).pipe(Effect.provide(vectors())))
  })
