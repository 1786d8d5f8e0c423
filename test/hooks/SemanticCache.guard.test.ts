/**
 * The salient-token guard inside the hooks (issue 22), on the offline
 * embedder: a near miss above `minScore` is skipped for the next best
 * candidate, the lookup effect counts the rejections without the texts, and
 * `guard: "none"` restores the similarity-only behaviour.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Embeddings, PipelineContext, ShortCircuit, VectorStore } from "effect-agent-pipeline"
import * as SemanticCache from "../../src/hooks/SemanticCache.js"
import { lookupOf, makeAgent, served, writeOf } from "./SemanticCacheSupport.js"

const memory = () => Layer.orDie(VectorStore.layerMemory())

// Offline (feature hashing) scores against `request`: Lyon 0.806, Paris 0.797.
const lyon = "What is the weather forecast in Lyon?"
const paris = "Paris: weather forecast"
const request = "What is the weather forecast for Paris?"

describe("SemanticCache salient-token guard", () => {
  it.scoped(
    "a near miss that outscores the right entry is rejected (guard_rejected 1) and the next candidate is served",
    () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent({ cache: { minScore: 0.7 } })
        const wrong = yield* agent.ask(lyon, "gd-1")
        const right = yield* agent.ask(paris, "gd-2")
        const asked = yield* agent.ask(request, "gd-3")
        expect(served(asked.record)).toBe(true)
        const lookup = lookupOf(asked.record)
        expect(lookup).toMatchObject({
          outcome: "hit",
          entry_id: writeOf(right.record)["entry_id"],
          guard: "salientTokens",
          guard_rejected: 1
        })
        expect(lookup["entry_id"]).not.toBe(writeOf(wrong.record)["entry_id"])
        // Counts only: neither request's text is recorded.
        expect(JSON.stringify(lookup)).not.toMatch(/Lyon|Paris|forecast/)
      }).pipe(Effect.provide(memory()))
  )

  it.scoped("a near miss alone is a miss with guard_rejected; guard \"none\" serves it (the flaw the guard fixes)", () =>
    Effect.gen(function*() {
      const guarded = yield* makeAgent({ cache: { minScore: 0.7 } })
      yield* guarded.ask(lyon, "gn-1")
      const miss = yield* guarded.ask(request, "gn-2")
      expect(served(miss.record)).toBe(false)
      expect(lookupOf(miss.record)).toMatchObject({ outcome: "miss", guard: "salientTokens", guard_rejected: 1 })

      const open = yield* makeAgent({ cache: { minScore: 0.7, guard: "none", collection: "unguarded" } })
      const first = yield* open.ask(lyon, "gn-3")
      const hit = yield* open.ask(request, "gn-4")
      expect(served(hit.record)).toBe(true)
      expect(hit.text).toBe(first.text)
      expect(lookupOf(hit.record)).toMatchObject({ outcome: "hit", guard: "none" })
      expect(lookupOf(hit.record)).not.toHaveProperty("guard_rejected")
    }).pipe(Effect.provide(memory())))

  it.effect("an entry written without tokens (before the guard) is guarded by its stored request text", () =>
    Effect.gen(function*() {
      const store = yield* VectorStore.VectorStore
      const cache = yield* SemanticCache.make({ minScore: 0.7, dimensions: { locale: false } })
      yield* store.put({
        collection: SemanticCache.defaultCollection,
        id: "legacy",
        partition: "global",
        keys: { vary: "none" },
        text: lyon,
        payload: { response: "Lyon: rain", cache_vary: {} },
        embedding: Embeddings.embedOffline(lyon)
      })
      const context = {
        requestId: Schema.decodeSync(PipelineContext.RequestId)("legacy-1"),
        request,
        metadata: {},
        enrichments: {}
      }
      const result = yield* cache.lookup.beforePlanning!(context, ShortCircuit.defaultGate)
      expect(result?.decision).toBeUndefined()
      const lyonContext = { ...context, requestId: Schema.decodeSync(PipelineContext.RequestId)("legacy-2") }
      const again = yield* cache.lookup.beforePlanning!({ ...lyonContext, request: lyon }, ShortCircuit.defaultGate)
      expect(again?.decision?.shortCircuit.response).toBe("Lyon: rain")
    }).pipe(Effect.provide(Layer.merge(memory(), Embeddings.layerOffline()))))
})
