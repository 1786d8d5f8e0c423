/**
 * The knowledge-extraction hook (seed 000 §9, §10): the response goes out
 * at once and unchanged; the pending `knowledge_extraction` effect is
 * announced before the hook returns and completed by detached work with the
 * exact model reply, the normalized fragments and each one's outcome; the
 * work runs under a fresh root span linked to the scheduling span; its
 * fragments reach a later planning prompt.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { Embeddings, Hook, KnowledgeBase, MemoryHooks, VectorStore } from "effect-agent-pipeline"
import * as Tracing from "../support/InMemoryTracing.js"
import { effectOf, forecastStep, makeAgent, plan, planningPrompts, textModel } from "./MemoryHooksSupport.js"

const travel = { memory_domain: "travel" }
const fragments = [
  "Lisbon forecasts are in Celsius.",
  "x",
  "Lisbon forecasts are in Celsius.",
  "Porto is north of Lisbon.",
  {
    text: "Faro is the sunniest city in Portugal."
  },
  "One fragment too many for the limit."
]

/** A model that answers the summarizer with `[]` and the extraction prompt once `release` is done. */
const modelWith = (release: Deferred.Deferred<void>) =>
  textModel((prompt) =>
    prompt.includes("knowledge fragments")
      ? Effect.as(Deferred.await(release), JSON.stringify(fragments))
      : Effect.succeed("[]")
  )

describe("KnowledgeExtraction", () => {
  it.scoped("the response is returned before the model replies; the effect goes pending → succeeded with the exact reply, normalized fragments and outcomes; a later prompt shows them", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const { service: model } = yield* modelWith(release)
      const embeddings = yield* Embeddings.makeOffline()
      const memory = yield* MemoryHooks.build({ model, embeddings, relatedMinScore: 0.1 })
      const agent = yield* makeAgent({
        hooks: memory.hooks,
        script: { plans: [plan(forecastStep("s1", "Lisbon")), plan()], synthesis: "Lisbon: 21°C and sunny." }
      })
      const result = yield* agent.pipeline.process({ request: "Weather in Lisbon?", requestId: "r1", metadata: travel })
      expect(result._tag === "Completed" && result.response.response).toBe("Lisbon: 21°C and sunny.")
      expect(effectOf(yield* agent.test.record("r1"), "knowledge-extraction", MemoryHooks.knowledgeEffectId))
        .toMatchObject({ status: "pending", data: { scheduled: true } })

      yield* Deferred.succeed(release, void 0)
      yield* memory.idle
      const done = effectOf(yield* agent.test.record("r1"), "knowledge-extraction", MemoryHooks.knowledgeEffectId)
      expect(done?.status).toBe("succeeded")
      expect(done?.data).toMatchObject({
        domain: "travel",
        provider_call_status: "returned",
        model_response: JSON.stringify(fragments),
        fragments: [
          "Lisbon forecasts are in Celsius.",
          "Porto is north of Lisbon.",
          "Faro is the sunniest city in Portugal."
        ],
        outcomes: [
          { text: "Lisbon forecasts are in Celsius.", outcome: "stored" },
          { text: "x", outcome: "rejected", reason: "too_short" },
          { text: "Lisbon forecasts are in Celsius.", outcome: "rejected", reason: "duplicate" },
          { text: "Porto is north of Lisbon.", outcome: "stored" },
          { text: "Faro is the sunniest city in Portugal.", outcome: "stored" },
          { text: "One fragment too many for the limit.", outcome: "rejected", reason: "over_limit" }
        ]
      })
      expect((yield* KnowledgeBase.recent({ scope: "travel", limit: 10 })).map((f) => f.fragment.text).sort())
        .toEqual([
          "Faro is the sunniest city in Portugal.",
          "Lisbon forecasts are in Celsius.",
          "Porto is north of Lisbon."
        ])

      yield* agent.pipeline.process({ request: "Lisbon forecasts?", requestId: "r2", metadata: travel })
      expect(planningPrompts(agent)[1]).toContain("- knowledge: Lisbon forecasts are in Celsius.")
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.scoped("fragments are memory_store runs: a transform scrubs them before they are stored", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      yield* Deferred.succeed(release, void 0)
      const { service: model } = yield* modelWith(release)
      const memory = yield* MemoryHooks.build({ model, embeddings: yield* Embeddings.makeOffline() })
      const scrub = Hook.make({
        name: "scrub",
        beforeMemoryStore: (call, record) =>
          Effect.succeed(
            call.payload.scope.startsWith("knowledge:")
              ? { ...record, content: record.content.replace("Faro", "[city]") }
              : record
          )
      })
      const agent = yield* makeAgent({ hooks: [...memory.hooks, scrub], script: { plans: [plan()], synthesis: "ok" } })
      yield* agent.pipeline.process({ request: "Tell me about Portugal", requestId: "r1", metadata: travel })
      yield* memory.idle
      const texts = (yield* KnowledgeBase.recent({ scope: "travel", limit: 10 })).map((f) => f.fragment.text)
      expect(texts).toContain("[city] is the sunniest city in Portugal.")
      expect(texts.join("\n")).not.toContain("Faro")
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  it.scoped("an unusable reply fails the effect, with the exact reply; nothing is stored", () =>
    Effect.gen(function*() {
      const { service: model } = yield* textModel((prompt) =>
        Effect.succeed(prompt.includes("knowledge fragments") ? "Sure! Here you go." : "[]")
      )
      const memory = yield* MemoryHooks.build({ model, embeddings: yield* Embeddings.makeOffline() })
      const agent = yield* makeAgent({ hooks: memory.hooks, script: { plans: [plan()], synthesis: "ok" } })
      yield* agent.pipeline.process({ request: "Anything?", requestId: "r1", metadata: travel })
      yield* memory.idle
      const effect = effectOf(yield* agent.test.record("r1"), "knowledge-extraction", MemoryHooks.knowledgeEffectId)
      expect(effect).toMatchObject({
        status: "failed",
        data: { model_response: "Sure! Here you go.", fragments: [] },
        error: "model reply unusable: reply is not a JSON array"
      })
      expect(yield* KnowledgeBase.recent({ scope: "travel", limit: 10 })).toEqual([])
    }).pipe(Effect.provide(VectorStore.layerMemory())))

  const tracing = Tracing.make()
  it.effect("the detached work runs under a fresh root span linked to the scheduling span; closing the agent's scope interrupts it", () =>
    Effect.gen(function*() {
      const never = yield* Deferred.make<void>()
      const { service: model } = yield* modelWith(never)
      const recordOf = yield* Effect.scoped(
        Effect.gen(function*() {
          const memory = yield* MemoryHooks.build({ model, embeddings: yield* Embeddings.makeOffline() })
          const agent = yield* makeAgent({ hooks: memory.hooks, script: { plans: [plan()], synthesis: "ok" } })
          yield* agent.pipeline.process({ request: "Anything?", requestId: "r1", metadata: travel })
          return agent.test.record("r1")
        })
      )
      // The scope closed while the model was still thinking: the work was interrupted and said so.
      const effect = effectOf(yield* recordOf, "knowledge-extraction", MemoryHooks.knowledgeEffectId)
      expect(effect).toMatchObject({ status: "failed", error: "knowledge extraction stopped: interrupted" })
      const spans = tracing.spans()
      const [detached] = Tracing.named(spans, "pipeline.hook.async.knowledge-extraction")
      expect(detached).toBeDefined()
      expect(Tracing.parentIdOf(detached!)).toBeUndefined()
      expect(detached!.links).toHaveLength(1)
      const linked = spans.find((s) => Tracing.spanIdOf(s) === detached!.links[0]!.context.spanId)
      expect(linked).toBeDefined()
      expect(Tracing.traceIdOf(detached!)).not.toBe(Tracing.traceIdOf(linked!))
    }).pipe(Effect.provide(Layer.merge(VectorStore.layerMemory(), tracing.layer))))
})
