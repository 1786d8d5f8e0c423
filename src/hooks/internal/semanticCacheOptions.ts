/**
 * The shapes of the semantic cache's configuration and handle (see
 * `SemanticCache.make`): kept apart from the hooks' behaviour so the module
 * that builds them stays one concept.
 */
import type { EmbeddingModel } from "@effect/ai"
import type { Duration } from "effect"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { Hook } from "../../pipeline/Hook.js"
import type { VectorStore } from "../../stores/contract/VectorStore.js"

/**
 * One variation dimension: a fixed value, or a value per request
 * (`undefined`: the request has none — see {@link Dimensions}).
 *
 * @since 0.1.0
 * @category models
 */
export type Dimension = string | ((context: PipelineContext) => string | undefined)

/**
 * The variation dimensions an entry is written and looked up under. Each
 * becomes an exact-match key of the entry (the tenant: its partition), so
 * an entry is only ever found by a request with the same values.
 *
 * - `tenant`: default request metadata `tenant_id` (a non-empty string);
 *   without one, the shared global partition. `false`: always global.
 * - `user`: only when configured (e.g. `SemanticCache.fromMetadata("user_id")`).
 * - `locale`: default metadata `locale`, else `"en"` (the measured embedding
 *   model is English-only: a locale must never share entries with another).
 *   `false`: not a dimension.
 * - `model`: only when configured (the model that wrote the answer).
 * - `tools`: only when configured: the tool names the answer may depend on,
 *   stored as a hash of the sorted, de-duplicated list.
 *
 * A dimension other than the tenant whose value is missing (`undefined`) or
 * not a string of 1..256 characters makes the request uncacheable: no lookup,
 * no write (reason `missing_dimension`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Dimensions {
  readonly tenant?: Dimension | false | undefined
  readonly user?: Dimension | undefined
  readonly locale?: Dimension | false | undefined
  readonly model?: Dimension | undefined
  readonly tools?: ReadonlyArray<string> | ((context: PipelineContext) => ReadonlyArray<string>) | undefined
}

/**
 * What a candidate above `minScore` must also pass to be served:
 * `"salientTokens"` (the default) — the request's salient tokens (numbers,
 * currencies, codes, names, time words, negations, direction) equal the
 * written request's, so "Lyon" is not served "Paris"'s answer; `"none"` —
 * the similarity alone decides.
 *
 * @since 0.1.0
 * @category models
 */
export type Guard = "salientTokens" | "none"

/**
 * Options of `SemanticCache.make`. Everything is optional.
 *
 * - `minScore`: the lowest cosine similarity served (default 0.82, measured
 *   on the paraphrase fixture with the guard: see docs/semantic-cache.md); in (0, 1]
 * - `guard`: see {@link Guard} (default `"salientTokens"`)
 * - `ttl`: how long an entry lives (default 1 hour)
 * - `maxResponseBytes`: longer responses (UTF-8) are not cached (default 16 KiB, at most 192 KiB)
 * - `maxRequestBytes`: longer requests are neither looked up nor cached (default 4 KiB, at most 64 KiB)
 * - `dimensions`: see {@link Dimensions}
 * - `collection`: the vector store collection (default `semantic_cache`)
 * - `maxPending`: requests whose per-request state is kept between the
 *   lookup and the write (default 10,000); past it the oldest is dropped
 * - `name`: the hooks' name prefix (default `semantic-cache`: hooks
 *   `semantic-cache-lookup`, `-capture`, `-write`)
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly minScore?: number | undefined
  readonly guard?: Guard | undefined
  readonly ttl?: Duration.DurationInput | undefined
  readonly maxResponseBytes?: number | undefined
  readonly maxRequestBytes?: number | undefined
  readonly dimensions?: Dimensions | undefined
  readonly collection?: string | undefined
  readonly maxPending?: number | undefined
  readonly name?: string | undefined
}

/**
 * What the cache's hooks need: the vector store the entries live in and the
 * embedding model requests are embedded with.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = VectorStore | EmbeddingModel.EmbeddingModel

/**
 * The semantic cache's hooks: register `hooks` (lookup, capture, write).
 *
 * @since 0.1.0
 * @category models
 */
export interface SemanticCacheHooks {
  /**
   * BeforePlanning: embeds the request, searches the entries of its tenant
   * and dimensions, and on a hit that passes the guard returns a `cache` decision whose
   * `cachedAgainst` is the gate's `cacheVary` stored with the entry. Skipped
   * when the gate disables cache reads. A store or embedding failure fails
   * the hook (fail-open: the request continues; effect `failed`).
   */
  readonly lookup: Hook<Requirements>
  /** AfterSynthesis, runs first: remembers the synthesized draft. Response unchanged. */
  readonly capture: Hook<Requirements>
  /**
   * AfterSynthesis, runs last: writes the entry when the final response is
   * the captured draft (no other hook changed it). Response unchanged.
   */
  readonly write: Hook<Requirements>
  /** The three hooks in registration order. */
  readonly hooks: readonly [Hook<Requirements>, Hook<Requirements>, Hook<Requirements>]
  /** Requests whose state is held between lookup and write (0 once every request ended). */
  readonly pending: () => number
}

/**
 * Which entries `SemanticCache.invalidate` removes: those matching every
 * given filter. `tenant`: a tenant's partition (`null`: the global one);
 * `keys`: dimension values (`{ model: "gpt-4o" }`, `{ tools:
 * SemanticCache.toolSetKey([...]) }`); `ids`: entry ids (from the
 * `semantic_cache_lookup` effect). `{}` removes every entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface InvalidateFilter {
  readonly tenant?: string | null | undefined
  readonly keys?: Readonly<Record<string, string>> | undefined
  readonly ids?: ReadonlyArray<string> | undefined
  readonly collection?: string | undefined
}
