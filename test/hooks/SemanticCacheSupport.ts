/**
 * Shared by the semantic cache tests: an agent on the offline model and
 * the demo tools with the cache's hooks registered over a given vector
 * store, readers of its records, and the flow every backend runs
 * (write-through, hit, tenants, model and tool-set dimensions, expiry,
 * invalidation).
 */
import type { EmbeddingModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, type Scope, TestClock } from "effect"
import {
  Agent,
  Embeddings,
  type ExecutionRecord,
  ExecutionStore,
  type Hook,
  Pipeline,
  type PipelineContext,
  ShortCircuit,
  VectorStore
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import * as SemanticCache from "../../src/hooks/SemanticCache.js"

export interface AgentOptions {
  readonly cache?: SemanticCache.Options
  /** The gate of each request (a custom `ShortCircuit.Gate` layer); default: reads on, no dimensions. */
  readonly gate?: (context: PipelineContext.PipelineContext) => ShortCircuit.PipelineGate
  readonly hooks?: ReadonlyArray<Hook.Hook<never>>
  /** Default: the offline embedder. */
  readonly embeddings?: Layer.Layer<EmbeddingModel.EmbeddingModel>
}

export interface CacheAgent {
  readonly cache: SemanticCache.SemanticCacheHooks
  readonly pipeline: Pipeline.Pipeline.Service
  readonly ask: (
    request: string,
    requestId: string,
    metadata?: Record<string, string>
  ) => Effect.Effect<{ readonly text: string | undefined; readonly record: ExecutionRecord.ExecutionRecord }>
}

/** An agent (offline model, demo tools) with the cache over the current `VectorStore`. */
export const makeAgent = (
  options: AgentOptions = {}
): Effect.Effect<CacheAgent, never, VectorStore.VectorStore | Scope.Scope> =>
  Effect.gen(function*() {
    const cache = yield* Effect.orDie(SemanticCache.make(options.cache))
    const vectors = yield* VectorStore.VectorStore
    const gate = options.gate
    const agent = Agent.layerOffline({ tools: allTools, hooks: [...cache.hooks, ...(options.hooks ?? [])] }).pipe(
      Layer.provide(
        Layer.merge(Layer.succeed(VectorStore.VectorStore, vectors), options.embeddings ?? Embeddings.layerOffline())
      ),
      Layer.provide(
        gate === undefined ? ShortCircuit.layerDefaultGate : Layer.succeed(ShortCircuit.Gate, { forRequest: gate })
      )
    )
    const context = yield* Effect.orDie(Layer.build(agent))
    const pipeline = Context.get(context, Pipeline.Pipeline)
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    return {
      cache,
      pipeline,
      ask: (request, requestId, metadata = {}) =>
        Effect.gen(function*() {
          const result = yield* pipeline.process({ request, requestId, metadata })
          const record = Option.getOrThrow(yield* store.get(requestId))
          return { text: result._tag === "Completed" ? result.response.response : undefined, record }
        }).pipe(Effect.orDie)
    }
  })

/** The invocation of a hook in a record (fails the test when absent). */
export const invocation = (record: ExecutionRecord.ExecutionRecord, name: string) => {
  const found = record.hookInvocations.find((i) => i.name === name)
  expect(found, `no invocation of ${name}`).toBeDefined()
  return found!
}

/** The data of an effect a hook reported. */
export const effectData = (record: ExecutionRecord.ExecutionRecord, hook: string, effectId: string) => {
  const effect = invocation(record, hook).effects.find((e) => e.effectId === effectId)
  expect(effect, `no effect ${effectId} of ${hook}`).toBeDefined()
  return effect!.data as Record<string, unknown>
}

export const lookupOf = (record: ExecutionRecord.ExecutionRecord) =>
  effectData(record, "semantic-cache-lookup", SemanticCache.lookupEffectId)
export const writeOf = (record: ExecutionRecord.ExecutionRecord) =>
  effectData(record, "semantic-cache-write", SemanticCache.writeEffectId)

/** Whether the request was answered from the cache (an accepted cache decision). */
export const served = (record: ExecutionRecord.ExecutionRecord) => record.shortCircuit?.kind === "cache"

export const weather = "What is the weather forecast in Paris?"

/**
 * The flow on one backend. `layer` builds a fresh, empty vector store; the
 * store's expiry follows the `Clock`, so `TestClock` drives it.
 */
export const semanticCacheFlow = (
  backend: string,
  layer: () => Layer.Layer<VectorStore.VectorStore>
) =>
  describe(`SemanticCache on ${backend}`, () => {
    it.scoped("C5: an answer is written through after synthesis and served to the next same request (cache_match)", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent()
        const first = yield* agent.ask(weather, "w-1")
        expect(served(first.record)).toBe(false)
        expect(lookupOf(first.record)).toMatchObject({ outcome: "miss", partition: "global" })
        expect(writeOf(first.record)).toMatchObject({ outcome: "written", partition: "global" })

        const second = yield* agent.ask(weather, "w-2")
        expect(served(second.record)).toBe(true)
        expect(second.text).toBe(first.text)
        expect(invocation(second.record, "semantic-cache-lookup").decision).toEqual({
          policy: "fail_closed",
          action: "short_circuit",
          reason: "cache_match"
        })
        const lookup = lookupOf(second.record)
        expect(lookup).toMatchObject({ outcome: "hit", entry_id: writeOf(first.record)["entry_id"], gate: "match" })
        expect(lookup["score"]).toBeGreaterThan(0.99)
        // The effect names the entry and the dimensions, never the cached text.
        expect(JSON.stringify(lookup)).not.toContain(first.text!)
        expect(agent.cache.pending()).toBe(0)
      }).pipe(Effect.provide(layer())))

    it.scoped("C5: two tenants never see each other's answers", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent()
        const a = yield* agent.ask(weather, "a-1", { tenant_id: "acme" })
        expect(writeOf(a.record)).toMatchObject({ outcome: "written", partition: "tenant:acme" })
        for (const [id, metadata] of [["b-1", { tenant_id: "globex" }], ["g-1", {}]] as const) {
          const other = yield* agent.ask(weather, id, metadata)
          expect(served(other.record)).toBe(false)
          expect(lookupOf(other.record)["outcome"]).toBe("miss")
        }
        // Each tenant now has its own entry; acme is still served from its own.
        const again = yield* agent.ask(weather, "a-2", { tenant_id: "acme" })
        expect(served(again.record)).toBe(true)
        expect(lookupOf(again.record)["entry_id"]).toBe(writeOf(a.record)["entry_id"])
        const globex = yield* agent.ask(weather, "b-2", { tenant_id: "globex" })
        expect(lookupOf(globex.record)["entry_id"]).not.toBe(writeOf(a.record)["entry_id"])
      }).pipe(Effect.provide(layer())))

    it.scoped("C5: a changed model or tool set is a miss; the same ones hit", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent({
          cache: {
            dimensions: {
              model: SemanticCache.fromMetadata("model"),
              tools: (ctx) => String(ctx.metadata["tools"] ?? "").split(",")
            }
          }
        })
        yield* agent.ask(weather, "m-1", { model: "m1", tools: "weather,fx" })
        const otherModel = yield* agent.ask(weather, "m-2", { model: "m2", tools: "weather,fx" })
        expect(lookupOf(otherModel.record)["outcome"]).toBe("miss")
        const otherTools = yield* agent.ask(weather, "m-3", { model: "m1", tools: "weather" })
        expect(lookupOf(otherTools.record)["outcome"]).toBe("miss")
        // The tool set is a set: order does not matter.
        const same = yield* agent.ask(weather, "m-4", { model: "m1", tools: "fx,weather" })
        expect(served(same.record)).toBe(true)
        expect(lookupOf(same.record)["dimensions"]).toEqual({
          locale: "en",
          model: "m1",
          tools: SemanticCache.toolSetKey(["weather", "fx"]),
          vary: "locale,model,tools"
        })
        // No model configured: a request without one is uncacheable rather than shared.
        const none = yield* agent.ask(weather, "m-5", { tools: "fx" })
        expect(lookupOf(none.record)).toMatchObject({ outcome: "skipped", reason: "missing_dimension" })
        expect(writeOf(none.record)).toMatchObject({ outcome: "skipped", reason: "missing_dimension" })
      }).pipe(Effect.provide(layer())))

    it.scoped("entries expire after the ttl (TestClock); purgeExpired deletes them", () =>
      Effect.gen(function*() {
        // Shorter than the SQL stores' own sweep (every minute on the Clock),
        // so only the explicit purge deletes.
        const agent = yield* makeAgent({ cache: { ttl: "10 seconds" } })
        yield* agent.ask(weather, "t-1")
        yield* TestClock.adjust("9 seconds")
        expect(served((yield* agent.ask(weather, "t-2")).record)).toBe(true)
        yield* TestClock.adjust("2 seconds")
        const late = yield* agent.ask(weather, "t-3")
        expect(served(late.record)).toBe(false)
        expect(lookupOf(late.record)["outcome"]).toBe("miss")
        // t-3 wrote a fresh entry (same id: it replaced the expired one).
        expect(writeOf(late.record)["entry_id"]).toBe(lookupOf((yield* agent.ask(weather, "t-4")).record)["entry_id"])
        yield* TestClock.adjust("11 seconds")
        expect(yield* SemanticCache.purgeExpired).toBe(1)
        expect(yield* SemanticCache.invalidate()).toBe(0)
      }).pipe(Effect.provide(layer())))

    it.scoped("invalidate removes entries by tenant, by keys, by ids, or all", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent({ cache: { dimensions: { model: SemanticCache.fromMetadata("model") } } })
        const ids: Record<string, unknown> = {}
        for (const [tenant, model] of [["acme", "m1"], ["acme", "m2"], ["globex", "m1"], ["initech", "m1"]]) {
          const { record } = yield* agent.ask(weather, `${tenant}-${model}`, { tenant_id: tenant!, model: model! })
          ids[`${tenant}-${model}`] = writeOf(record)["entry_id"]
        }
        yield* agent.ask(weather, "global-m1", { model: "m1" })
        expect(yield* SemanticCache.invalidate({ ids: [String(ids["globex-m1"])] })).toBe(1)
        expect(served((yield* agent.ask(weather, "globex-again", { tenant_id: "globex", model: "m1" })).record))
          .toBe(false)
        expect(yield* SemanticCache.invalidate({ tenant: "acme", keys: { model: "m2" } })).toBe(1)
        expect(served((yield* agent.ask(weather, "acme-m1-again", { tenant_id: "acme", model: "m1" })).record))
          .toBe(true)
        expect(yield* SemanticCache.invalidate({ tenant: null })).toBe(1)
        expect(yield* SemanticCache.invalidate({ tenant: "acme" })).toBe(1)
        // Left: initech and globex (rewritten after its invalidation).
        expect(yield* SemanticCache.invalidate()).toBe(2)
        expect(served((yield* agent.ask(weather, "initech-again", { tenant_id: "initech", model: "m1" })).record))
          .toBe(false)
      }).pipe(Effect.provide(layer())))
  })
