import { AiError, EmbeddingModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema, TestClock } from "effect"
import { Embeddings, Hook, PipelineContext, ShortCircuit, VectorStore } from "effect-agent-pipeline"
import * as SemanticCache from "../../src/hooks/SemanticCache.js"
import { invocation, lookupOf, makeAgent, semanticCacheFlow, served, weather, writeOf } from "./SemanticCacheSupport.js"

semanticCacheFlow("memory", () => Layer.orDie(VectorStore.layerMemory()))

const memory = () => Layer.orDie(VectorStore.layerMemory())

const contextOf = (requestId: string, request = weather, metadata: Record<string, string> = {}) => ({
  requestId: Schema.decodeSync(PipelineContext.RequestId)(requestId),
  request,
  metadata,
  enrichments: {}
})

/** The offline embedder, counting its calls. */
const countingEmbedder = (calls: { count: number }) =>
  Layer.effect(
    EmbeddingModel.EmbeddingModel,
    EmbeddingModel.make({
      embedMany: (inputs) =>
        Effect.sync(() => {
          calls.count += inputs.length
          return inputs.map((input, index) => ({ index, embeddings: Embeddings.embedOffline(input) }))
        })
    })
  )

describe("SemanticCache and the C5 gate", () => {
  it.scoped(
    "C5: a hit whose written cacheVary differs from the gate's on one side only is rejected (cache_dimension_mismatch, the request continues); a symmetric one short-circuits (cache_match)",
    () =>
      Effect.gen(function*() {
        // A custom gate: the policy revision (and an optional extra dimension) are reserved.
        const agent = yield* makeAgent({
          gate: (ctx) => ({
            cacheReadEnabled: true,
            cacheVary: {
              policy: String(ctx.metadata["policy"]),
              ...(ctx.metadata["extra"] === undefined ? {} : { extra: String(ctx.metadata["extra"]) })
            }
          })
        })
        const first = yield* agent.ask(weather, "g-1", { policy: "1" })
        expect(writeOf(first.record)).toMatchObject({ outcome: "written" })

        const mismatch = { policy: "fail_closed", action: "continue", reason: "cache_dimension_mismatch" }
        // The gate has a dimension the entry was not written under.
        const gateSide = yield* agent.ask(weather, "g-2", { policy: "1", extra: "x" })
        expect(lookupOf(gateSide.record)).toMatchObject({ outcome: "hit", gate: "mismatch" })
        expect(invocation(gateSide.record, "semantic-cache-lookup").decision).toEqual(mismatch)
        expect(served(gateSide.record)).toBe(false)
        expect(gateSide.record.phases.length).toBeGreaterThan(0)
        expect(gateSide.text).toBe(first.text)
        // The fresh answer replaced the entry, written under the current variation.
        expect(writeOf(gateSide.record)).toMatchObject({
          outcome: "written",
          entry_id: writeOf(first.record)["entry_id"]
        })

        // Now the entry has a dimension the gate lacks.
        const entrySide = yield* agent.ask(weather, "g-3", { policy: "1" })
        expect(invocation(entrySide.record, "semantic-cache-lookup").decision).toEqual(mismatch)
        expect(served(entrySide.record)).toBe(false)

        const match = yield* agent.ask(weather, "g-4", { policy: "1" })
        expect(invocation(match.record, "semantic-cache-lookup").decision).toEqual({
          policy: "fail_closed",
          action: "short_circuit",
          reason: "cache_match"
        })
        expect(served(match.record)).toBe(true)
        expect(match.record.phases).toEqual([])

        const otherValue = yield* agent.ask(weather, "g-5", { policy: "2" })
        expect(invocation(otherValue.record, "semantic-cache-lookup").decision).toEqual(mismatch)
      }).pipe(Effect.provide(memory()))
  )

  it.scoped("cache reads disabled by the gate: no lookup (nothing embedded for it), the answer is still written through", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const agent = yield* makeAgent({
        embeddings: countingEmbedder(calls),
        gate: (ctx) => ({ cacheReadEnabled: ctx.metadata["no_cache"] !== "1", cacheVary: {} })
      })
      yield* agent.ask(weather, "n-1")
      const off = yield* agent.ask(weather, "n-2", { no_cache: "1" })
      expect(lookupOf(off.record)).toMatchObject({ outcome: "skipped", reason: "cache_read_disabled" })
      expect(served(off.record)).toBe(false)
      expect(writeOf(off.record)).toMatchObject({ outcome: "written" })
      // n-1: one embedding at lookup, reused by the write; n-2: one, by the write.
      expect(calls.count).toBe(2)
    }).pipe(Effect.provide(memory())))
})

describe("SemanticCache write-through", () => {
  it.scoped("a response changed by a redaction hook is not written (response_changed); an unchanged one is", () =>
    Effect.gen(function*() {
      const redact = Hook.make({
        name: "redact-city",
        afterSynthesis: (_ctx, text) => Effect.succeed(text.replaceAll("Paris", "[city]"))
      })
      const agent = yield* makeAgent({ hooks: [redact] })
      const first = yield* agent.ask(weather, "x-1")
      expect(first.text).toContain("[city]")
      expect(writeOf(first.record)).toMatchObject({ outcome: "skipped", reason: "response_changed" })
      expect(served((yield* agent.ask(weather, "x-2")).record)).toBe(false)
      // Capture runs first and write last, whatever the registration order.
      const order = first.record.hookInvocations.filter((i) => i.stage === "after_synthesis").map((i) => i.name)
      expect(order).toEqual(["semantic-cache-capture", "redact-city", "semantic-cache-write"])

      const untouched = yield* makeAgent({
        hooks: [Hook.make({ name: "observe", afterSynthesis: (_ctx, text) => Effect.succeed(text) })]
      })
      const other = yield* untouched.ask("What is the weather forecast in Lisbon?", "x-3")
      expect(writeOf(other.record)).toMatchObject({ outcome: "written" })
    }).pipe(Effect.provide(memory())))

  it.scoped("a response served from the cache is never written back (handlers used directly)", () =>
    Effect.gen(function*() {
      const cache = yield* SemanticCache.make()
      const gate = ShortCircuit.defaultGate
      const first = contextOf("d-1")
      yield* cache.lookup.beforePlanning!(first, gate)
      yield* cache.capture.afterSynthesis!(first, "Sunny in Paris")
      yield* cache.write.afterSynthesis!(first, "Sunny in Paris")
      const store = yield* VectorStore.VectorStore
      const [written] = yield* store.recent({ collection: "semantic_cache", partition: "global", limit: 10 })
      expect(written?.createdAt).toBe(0)

      yield* TestClock.adjust("1 minute")
      const second = contextOf("d-2")
      const result = yield* cache.lookup.beforePlanning!(second, gate)
      expect(result?.decision).toMatchObject({
        kind: "cache",
        shortCircuit: { response: "Sunny in Paris", source: "semantic_cache" },
        cachedAgainst: {}
      })
      expect(yield* cache.capture.afterSynthesis!(second, "Sunny in Paris")).toBe("Sunny in Paris")
      expect(yield* cache.write.afterSynthesis!(second, "Sunny in Paris")).toBe("Sunny in Paris")
      // Not rewritten: the entry still has its first write time.
      const entry = yield* store.get({ collection: "semantic_cache", id: written!.id })
      expect(Option.map(entry, (e) => e.createdAt)).toEqual(Option.some(0))
      expect(cache.pending()).toBe(0)
    }).pipe(Effect.provide(Layer.merge(memory(), Embeddings.layerOffline()))))

  it.scoped("responses over maxResponseBytes are not cached; requests over maxRequestBytes are not looked up", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent({ cache: { maxResponseBytes: 10 } })
      const { record } = yield* agent.ask(weather, "l-1")
      expect(writeOf(record)).toMatchObject({ outcome: "skipped", reason: "too_large" })
      const small = yield* makeAgent({ cache: { maxRequestBytes: 10 } })
      const long = yield* small.ask(weather, "l-2")
      expect(lookupOf(long.record)).toMatchObject({ outcome: "skipped", reason: "too_large" })
      expect(writeOf(long.record)).toMatchObject({ outcome: "skipped", reason: "too_large" })
    }).pipe(Effect.provide(memory())))
})

describe("SemanticCache failures fail open", () => {
  it.scoped("a failing store: the lookup fails (recorded), the request is answered", () =>
    Effect.gen(function*() {
      const inner = yield* VectorStore.makeMemory()
      const failing = Layer.succeed(VectorStore.VectorStore, {
        ...inner,
        search: () =>
          Effect.fail(new VectorStore.VectorStoreError({ operation: "search", reason: "backend", detail: "down" }))
      })
      const agent = yield* makeAgent().pipe(Effect.provide(failing))
      const { record, text } = yield* agent.ask(weather, "f-1")
      expect(text).toContain("Paris")
      const lookup = invocation(record, "semantic-cache-lookup")
      expect(lookup.outcome).toBe("failed")
      expect(lookup.decision).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
      expect(lookup.effects[0]).toMatchObject({ status: "failed", data: { outcome: "failed" } })
      expect(lookup.effects[0]?.error).toContain("down")
      expect(writeOf(record)).toMatchObject({ outcome: "written" })
    }))

  it.scoped("a failing embedding model: lookup and write fail (recorded), the response is unchanged", () =>
    Effect.gen(function*() {
      const broken = Layer.effect(
        EmbeddingModel.EmbeddingModel,
        EmbeddingModel.make({
          embedMany: () =>
            Effect.fail(new AiError.UnknownError({ module: "Test", method: "embed", description: "no embeddings" }))
        })
      )
      const agent = yield* makeAgent({ embeddings: broken })
      const { record, text } = yield* agent.ask(weather, "f-2")
      expect(text).toContain("Paris")
      expect(invocation(record, "semantic-cache-lookup").outcome).toBe("failed")
      const write = invocation(record, "semantic-cache-write")
      expect(write.outcome).toBe("succeeded")
      expect(write.effects[0]).toMatchObject({ status: "failed", error: "Test.embed: no embeddings" })
    }).pipe(Effect.provide(memory())))
})

describe("SemanticCache per-request state", () => {
  it.scoped("a request that fails between the lookup and the write leaves no state behind (request finalizer)", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent({
        hooks: [Hook.required({ name: "deny-all", afterPlanning: () => Effect.fail(new Error("denied")) })]
      })
      const result = yield* Effect.either(agent.pipeline.process({ request: weather, requestId: "p-1" }))
      expect(result._tag === "Left" || result.right._tag !== "Completed").toBe(true)
      expect(agent.cache.pending()).toBe(0)
    }).pipe(Effect.provide(memory())))

  it.effect("without a request scope the state is bounded by maxPending (oldest dropped)", () =>
    Effect.gen(function*() {
      const cache = yield* SemanticCache.make({ maxPending: 2 })
      for (const id of ["a", "b", "c", "d", "e"]) {
        yield* cache.lookup.beforePlanning!(contextOf(id), ShortCircuit.defaultGate)
      }
      expect(cache.pending()).toBe(2)
      // "e" is kept: its write finds its state and writes.
      yield* cache.capture.afterSynthesis!(contextOf("e"), "answer")
      yield* cache.write.afterSynthesis!(contextOf("e"), "answer")
      expect(cache.pending()).toBe(1)
      const store = yield* VectorStore.VectorStore
      expect(yield* store.recent({ collection: "semantic_cache", partition: "global", limit: 10 })).toHaveLength(1)
    }).pipe(Effect.provide(Layer.merge(memory(), Embeddings.layerOffline()))))
})

describe("SemanticCache options", () => {
  it.effect("options out of range are a typed InvalidSemanticCacheOptions naming the option", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [SemanticCache.Options, string]> = [
        [{ minScore: 0 }, "minScore"],
        [{ minScore: 1.5 }, "minScore"],
        [{ minScore: Number.NaN }, "minScore"],
        [{ ttl: "0 millis" }, "ttl"],
        [{ ttl: "forever" as never }, "ttl"],
        [{ maxResponseBytes: 0 }, "maxResponseBytes"],
        [{ maxResponseBytes: 1_000_000 }, "maxResponseBytes"],
        [{ maxRequestBytes: 1.5 }, "maxRequestBytes"],
        [{ maxPending: 0 }, "maxPending"],
        [{ collection: "" }, "collection"],
        [{ name: "" }, "name"],
        [{ guard: "fuzzy" as never }, "guard"],
        [{ dimensions: { model: "" } }, "dimensions.model"],
        [{ dimensions: { tools: [1] as never } }, "dimensions.tools"]
      ]
      for (const [options, option] of cases) {
        const error = yield* Effect.flip(SemanticCache.make(options))
        expect(error._tag).toBe("InvalidSemanticCacheOptions")
        expect(error.option).toBe(option)
      }
      const ok = yield* SemanticCache.make({ name: "faq-cache" })
      expect(ok.hooks.map((h) => h.name)).toEqual(["faq-cache-lookup", "faq-cache-capture", "faq-cache-write"])
    }))
})
