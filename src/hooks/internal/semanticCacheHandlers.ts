/**
 * The semantic cache's three handlers (see `SemanticCache.make`): the
 * lookup (BeforePlanning), the capture of the synthesized draft and the
 * write-through (AfterSynthesis). They share one request's state through
 * the bounded `PendingRequests`.
 */
import { EmbeddingModel } from "@effect/ai"
import { Clock, Effect, Option } from "effect"
import type { Json } from "../../domain/Json.js"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { BeforePlanningResult } from "../../pipeline/Hook.js"
import { dimensionsMatch, type PipelineGate } from "../../pipeline/ShortCircuit.js"
import * as RequestScope from "../../runtime/RequestScope.js"
import { VectorStore } from "../../stores/contract/VectorStore.js"
import { salientTokens, sameSalient } from "./salientTokens.js"
import { type ResolvedDimensions, type Scope, scopeOf } from "./semanticCacheDimensions.js"
import {
  decodeEntry,
  encodeEntry,
  type Entry,
  entryIdFor,
  lookupEffectId,
  report,
  utf8Bytes,
  writeEffectId
} from "./semanticCacheEntry.js"
import { type Guard } from "./semanticCacheOptions.js"
import type { Pending, PendingRequests } from "./semanticCachePending.js"

/**
 * Candidates a guarded lookup reads, best first: a near miss that outscores
 * the right entry is skipped, not the end of the search.
 */
export const guardCandidates = 5

/** The validated options the handlers close over. */
export interface Config {
  readonly dimensions: ResolvedDimensions
  readonly pending: PendingRequests
  readonly collection: string
  readonly minScore: number
  readonly guard: Guard
  readonly ttlMillis: number
  readonly maxRequestBytes: number
  readonly maxResponseBytes: number
}

const scopeData = (scope: Scope): { readonly [key: string]: Json } =>
  scope._tag === "Scope" ? { partition: scope.partition, dimensions: scope.keys } : { missing: scope.dimension }

export const makeHandlers = (config: Config) => {
  const { collection, dimensions, guard, maxRequestBytes, maxResponseBytes, minScore, pending, ttlMillis } = config
  // Managed request: its finalizer drops the state on every exit, so a
  // request that fails between the hooks leaves nothing behind.
  const remember = (requestId: string, state: Pending) =>
    Effect.gen(function*() {
      pending.set(requestId, state)
      if (Option.isSome(yield* RequestScope.get)) {
        yield* RequestScope.addFinalizer(() => Effect.sync(() => pending.delete(requestId)))
      }
    })

  const lookup = (context: PipelineContext, gate: PipelineGate) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const scope = scopeOf(dimensions, context)
      const state: Pending = { scope, vary: gate.cacheVary, vector: undefined, served: undefined, draft: undefined }
      yield* remember(context.requestId, state)
      const done = (status: "succeeded" | "failed", data: { readonly [key: string]: Json }, error?: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          report(
            lookupEffectId,
            status,
            { ...data, ...scopeData(scope), min_score: minScore, guard },
            started,
            now,
            error
          ))
      const failed = (error: { readonly message: string }) => done("failed", { outcome: "failed" }, error.message)

      if (!gate.cacheReadEnabled) {
        return yield* done("succeeded", { outcome: "skipped", reason: "cache_read_disabled" })
      }
      if (scope._tag === "Missing") {
        return yield* done("succeeded", { outcome: "skipped", reason: "missing_dimension" })
      }
      if (utf8Bytes(context.request) > maxRequestBytes) {
        return yield* done("succeeded", { outcome: "skipped", reason: "too_large" })
      }
      const vector = yield* Effect.flatMap(EmbeddingModel.EmbeddingModel, (m) => m.embed(context.request)).pipe(
        Effect.tapError(failed)
      )
      state.vector = vector
      const store = yield* VectorStore
      const hits = yield* store.search({
        collection,
        partition: scope.partition,
        vector,
        limit: guard === "none" ? 1 : guardCandidates,
        minScore,
        keys: scope.keys
      }).pipe(Effect.tapError(failed))
      // The guard: the best candidate whose salient tokens are the request's
      // (the count of the rejected ones is recorded, never their texts).
      const request = guard === "none" ? [] : salientTokens(context.request)
      let rejected = 0
      let found: { readonly hit: (typeof hits)[number]; readonly entry: Entry } | undefined
      for (const hit of hits) {
        const entry = decodeEntry(hit.item.payload, hit.item.text)
        if (entry === undefined) {
          return yield* done(
            "failed",
            { outcome: "failed", entry_id: hit.item.id },
            "entry payload is not a cache entry"
          )
        }
        if (guard === "none" || sameSalient(request, entry.salient)) {
          found = { hit, entry }
          break
        }
        rejected++
      }
      const guarded = guard === "none" ? {} : { guard_rejected: rejected }
      if (found === undefined) return yield* done("succeeded", { outcome: "miss", ...guarded })
      const { entry, hit } = found
      const ageMillis = Math.max(0, started - hit.item.createdAt)
      const match = dimensionsMatch(gate.cacheVary, entry.cacheVary)
      if (match) state.served = entry.response
      yield* done("succeeded", {
        outcome: "hit",
        score: hit.score,
        entry_id: hit.item.id,
        age_ms: ageMillis,
        // What the C5 gate will say: the entry's stored variation against the current one.
        gate: match ? "match" : "mismatch",
        ...guarded
      })
      const result: BeforePlanningResult = {
        decision: {
          kind: "cache",
          shortCircuit: {
            response: entry.response,
            source: "semantic_cache",
            metadata: { semantic_cache: { entry_id: hit.item.id, score: hit.score, age_ms: ageMillis } }
          },
          cachedAgainst: entry.cacheVary
        }
      }
      return result
    }).pipe(Effect.withSpan("SemanticCache.lookup", { captureStackTrace: false }))

  const capture = (context: PipelineContext, response: string) =>
    Effect.sync(() => {
      const state = pending.get(context.requestId)
      if (state !== undefined) state.draft = response
      return response
    })

  const write = (context: PipelineContext, response: string) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const state = pending.take(context.requestId)
      const done = (status: "succeeded" | "failed", data: { readonly [key: string]: Json }, error?: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          report(
            writeEffectId,
            status,
            { ...data, ...(state === undefined ? {} : scopeData(state.scope)) },
            started,
            now,
            error
          ))
      const skip = (reason: string) => done("succeeded", { outcome: "skipped", reason })
      if (state === undefined) return yield* skip("no_lookup")
      if (state.draft === undefined) return yield* skip("not_captured")
      if (state.served !== undefined && state.served === response) return yield* skip("served_from_cache")
      if (response !== state.draft) return yield* skip("response_changed")
      const scope = state.scope
      if (scope._tag === "Missing") return yield* skip("missing_dimension")
      const responseBytes = utf8Bytes(response)
      if (utf8Bytes(context.request) > maxRequestBytes || responseBytes > maxResponseBytes) {
        return yield* skip("too_large")
      }
      const stored = yield* Effect.gen(function*() {
        const vector = state.vector ??
          (yield* Effect.flatMap(EmbeddingModel.EmbeddingModel, (m) => m.embed(context.request)))
        const store = yield* VectorStore
        return yield* store.put({
          collection,
          id: entryIdFor(scope.partition, scope.keys, context.request),
          partition: scope.partition,
          keys: scope.keys,
          text: context.request,
          payload: encodeEntry({ response, cacheVary: state.vary, salient: salientTokens(context.request) }),
          embedding: vector,
          createdAt: started,
          expiresAt: started + ttlMillis
        })
      }).pipe(Effect.either)
      // A failed write fails nothing: the response is already final.
      if (stored._tag === "Left") return yield* done("failed", { outcome: "failed" }, stored.left.message)
      yield* done("succeeded", {
        outcome: "written",
        entry_id: stored.right.id,
        response_bytes: responseBytes,
        expires_at: stored.right.expiresAt ?? null
      })
    }).pipe(Effect.as(response), Effect.withSpan("SemanticCache.write", { captureStackTrace: false }))

  return { lookup, capture, write }
}
