/**
 * Built-in memory hooks and their builder (seed 000 §8.2, §10, C19): shared
 * episodic memory read before planning and written after execution, and
 * reusable knowledge extracted after synthesis.
 *
 * - **`MemoryEnrichment`** (BeforePlanning): the request's entities, the
 *   recent window of the domain's episodic events — and with an embedding
 *   model the related events and knowledge fragments — appended to
 *   `rag_context` (rendered as `<agent_memory>`) as one bounded view: a scope
 *   and historical-origin notice first, a legend when the compact form pays,
 *   the events inside a byte budget. Effects `memory_planning_context`,
 *   `memory_episodic_read`, `memory_digest_window`; the injected text itself
 *   only in `planning_enrichment:rag_context`.
 * - **`MemoryRecord`** (AfterExecution): one event per executed step
 *   (entities, outcome, importance, occurrence and recording time, error
 *   facts), submitted before synthesis. Only its summarizer call is bounded
 *   (C19); a timeout or an unusable reply falls back to the heuristic
 *   summary; canceling the request fails `episodic_memory_records` and stops
 *   the writes.
 * - **`KnowledgeExtraction`** (AfterSynthesis, detached): 0–3 fragments from
 *   the model, embedded and stored in a fiber of the agent's scope under a
 *   fresh root span; effect `knowledge_extraction`.
 *
 * Every read and write is a `memory_load` / `memory_store` operation run:
 * users' guards, transforms and observers see them (a transform may change a
 * read's limit, minimum score or kinds — the event outcomes — and a stored
 * event's id or text). Reads fail open: the request goes on without memory.
 * The hooks are written with the public hook API only.
 *
 * @since 0.1.0
 */
import { Config, Duration, Effect, Either, FiberSet, Option, type Scope } from "effect"
import type { PipelineContext } from "../domain/PipelineContext.js"
import type { Hook } from "../pipeline/Hook.js"
import type { ActivityStore } from "../stores/ActivityStore.js"
import * as EpisodicMemory from "../stores/EpisodicMemory.js"
import * as KnowledgeBase from "../stores/KnowledgeBase.js"
import * as UserFacts from "../stores/UserFacts.js"
import type { VectorStore, VectorStoreError } from "../stores/VectorStore.js"
import * as Activity from "./Activity.js"
import type { Options as ActivityOptions } from "./internal/activityOptions.js"
import * as KnowledgeExtraction from "./internal/knowledgeExtraction.js"
import * as MemoryEnrichment from "./internal/memoryEnrichment.js"
import { extractEntities } from "./internal/memoryEntities.js"
import type { MemoryHooks, Options } from "./internal/memoryOptions.js"
import * as MemoryRecord from "./internal/memoryRecord.js"
import { between, duration, InvalidMemoryOptions, name, resolve, wholeNumber } from "./internal/memoryServices.js"
import * as SemanticCache from "./SemanticCache.js"

/**
 * The builder's options and what it returns.
 *
 * @since 0.1.0
 * @category models
 */
export type { MemoryHooks, Options } from "./internal/memoryOptions.js"

/**
 * The memory builders' construction error.
 *
 * @since 0.1.0
 * @category errors
 */
export { InvalidMemoryOptions } from "./internal/memoryServices.js"

/**
 * Effect ids of the enrichment hook.
 *
 * @since 0.1.0
 * @category constants
 */
export { digestWindowEffectId, episodicReadEffectId, planningContextEffectId } from "./internal/memoryEnrichment.js"

/**
 * Effect id of the recorder.
 *
 * @since 0.1.0
 * @category constants
 */
export { recordsEffectId } from "./internal/memoryRecord.js"

/**
 * Effect id of the knowledge extraction.
 *
 * @since 0.1.0
 * @category constants
 */
export { knowledgeEffectId } from "./internal/knowledgeExtraction.js"

/**
 * The request metadata key the domain is read from when `domain` is not set.
 *
 * @since 0.1.0
 * @category constants
 */
export const metadataMemoryDomain = "memory_domain"

/**
 * The default entity extractor: quoted phrases, capitalized words (less
 * common sentence openers), all-caps tokens and ids with digits.
 *
 * @example
 * ```ts
 * import { MemoryHooks } from "effect-agent-pipeline"
 *
 * MemoryHooks.extractEntities("Quote ACME, then the weather in Lisbon") // ["ACME", "Lisbon"]
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export { extractEntities } from "./internal/memoryEntities.js"

/** Reads `AGENT_MEMORY_SUMMARIZER_TIMEOUT` (a duration such as `"90 seconds"`), else 2 minutes. */
const summarizerTimeoutConfig = Config.duration("AGENT_MEMORY_SUMMARIZER_TIMEOUT").pipe(
  Config.withDefault(Duration.minutes(2))
)

const domainOf = (option: Options["domain"]) => (context: PipelineContext): string => {
  if (typeof option === "string") return option
  if (typeof option === "function") return option(context)
  const fromMetadata = context.metadata[metadataMemoryDomain]
  return typeof fromMetadata === "string" && fromMetadata.length > 0 ? fromMetadata : "default"
}

const buildHooks = (
  opts: Options
): Effect.Effect<
  MemoryHooks<ActivityStore>,
  InvalidMemoryOptions | Activity.InvalidActivityOptions,
  VectorStore | Scope.Scope
> =>
  Effect.gen(function*() {
    const services = yield* resolve({ embeddings: opts.embeddings, model: opts.model })
    const recentWindow = yield* duration("recentWindow", opts.recentWindow, Duration.days(7))
    const recentLimit = yield* wholeNumber("recentLimit", opts.recentLimit, 10, 1, 1000)
    const relatedLimit = yield* wholeNumber("relatedLimit", opts.relatedLimit, 5, 0, 1000)
    const relatedMinScore = yield* between("relatedMinScore", opts.relatedMinScore, 0.35, -1, 1)
    const knowledgeLimit = yield* wholeNumber("knowledgeLimit", opts.knowledgeLimit, 3, 0, 1000)
    const byteBudget = yield* wholeNumber("byteBudget", opts.byteBudget, 2_000, 512, 65_536)
    const batchLimit = yield* wholeNumber("batchLimit", opts.batchLimit, 20, 1, 200)
    const configured = yield* Effect.either(summarizerTimeoutConfig)
    if (opts.summarizerTimeout === undefined && Either.isLeft(configured)) {
      return yield* new InvalidMemoryOptions({
        option: "AGENT_MEMORY_SUMMARIZER_TIMEOUT",
        detail: configured.left.message
      })
    }
    const summarizerTimeout = yield* duration(
      "summarizerTimeout",
      opts.summarizerTimeout ?? Either.getOrElse(configured, () => Duration.minutes(2)),
      Duration.minutes(2)
    )
    const writeTimeout = yield* duration("writeTimeout", opts.writeTimeout, Duration.minutes(1))
    const retention = opts.retention === undefined ? undefined : yield* duration("retention", opts.retention, 1)
    if (opts.summarizer !== undefined && opts.summarizer !== "model" && opts.summarizer !== "heuristic") {
      return yield* new InvalidMemoryOptions({ option: "summarizer", detail: `must be "model" or "heuristic"` })
    }
    if (opts.summarizer === "model" && Option.isNone(services.model)) {
      return yield* new InvalidMemoryOptions({
        option: "summarizer",
        detail: "\"model\" needs a LanguageModel (in the options or the context)"
      })
    }
    const names = {
      enrichment: yield* name("names.enrichment", opts.names?.enrichment, "memory-enrichment"),
      record: yield* name("names.record", opts.names?.record, "memory-record"),
      knowledge: yield* name("names.knowledge", opts.names?.knowledge, "knowledge-extraction")
    }
    const domain = domainOf(opts.domain)
    const retentionMillis = retention === undefined ? undefined : Duration.toMillis(retention)

    const enrichment = MemoryEnrichment.make({
      name: names.enrichment,
      services,
      domainOf: domain,
      entitiesOf: opts.entityExtractor ?? extractEntities,
      recentWindowMillis: Duration.toMillis(recentWindow),
      recentLimit,
      relatedLimit,
      relatedMinScore,
      knowledgeLimit,
      byteBudget
    })
    const record = MemoryRecord.make({
      name: names.record,
      services,
      domainOf: domain,
      requestEntities: opts.recordRequestEntities,
      summarizer: opts.summarizer ?? "model",
      summarizerTimeout,
      batchLimit,
      retentionMillis,
      timeout: Duration.sum(summarizerTimeout, writeTimeout)
    })
    const fibers = yield* FiberSet.make<void, never>()
    const knowledge = opts.knowledge !== false && Option.isSome(services.model) && Option.isSome(services.embeddings)
      ? KnowledgeExtraction.make({ name: names.knowledge, services, domainOf: domain, retentionMillis }, fibers)
      : undefined
    const activity = opts.activity === undefined ? undefined : yield* Activity.make(opts.activity)

    const hooks: Array<Hook<ActivityStore>> = []
    if (activity !== undefined) hooks.push(activity.announcement)
    hooks.push(enrichment, record)
    if (knowledge !== undefined) hooks.push(knowledge)
    if (activity !== undefined) hooks.push(activity.cleanup)
    return { enrichment, record, knowledge, activity, hooks, idle: FiberSet.awaitEmpty(fibers) }
  })

/**
 * Builds the memory hooks, gated on the backends configured: the
 * `VectorStore` is required; with a `LanguageModel` the recorder summarizes
 * with it; with both a `LanguageModel` and an `EmbeddingModel` the
 * knowledge-extraction hook is built and the enrichment also reads related
 * events and knowledge. Backends come from the options, else from the
 * context. Detached work lives in the current scope — the agent's, when the
 * builder is given as the agent's `hooks`. With `activity`, the activity
 * hooks come first and last (and the hooks need an `ActivityStore`).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, Embeddings, MemoryHooks, OfflineModel, VectorStore } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   hooks: Effect.map(MemoryHooks.build({ domain: "travel", retention: "30 days" }), (memory) => memory.hooks)
 * }).pipe(
 *   Layer.provide(Layer.mergeAll(VectorStore.layerMemory(), Embeddings.layerOffline(), OfflineModel.layer))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export function build(
  options?: Options & { readonly activity?: undefined }
): Effect.Effect<
  MemoryHooks,
  InvalidMemoryOptions | Activity.InvalidActivityOptions,
  VectorStore | Scope.Scope
>
export function build(
  options: Options & { readonly activity: ActivityOptions }
): Effect.Effect<
  MemoryHooks<ActivityStore>,
  InvalidMemoryOptions | Activity.InvalidActivityOptions,
  VectorStore | Scope.Scope
>
export function build(
  options?: Options
): Effect.Effect<
  MemoryHooks<ActivityStore>,
  InvalidMemoryOptions | Activity.InvalidActivityOptions,
  VectorStore | Scope.Scope
> {
  return buildHooks(options ?? {})
}

/**
 * Forgets a user (a user can ask to be forgotten): every episodic event and
 * knowledge fragment filed for them (`metadata.user_id` of the request that
 * produced it), every fact `UserMemoryHooks` extracted about them, and every
 * semantic-cache entry written under their `user` dimension. Returns how
 * many of each were deleted.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryHooks, VectorStore } from "effect-agent-pipeline"
 *
 * const program = MemoryHooks.forgetUser("u-42").pipe(Effect.provide(VectorStore.layerMemory()))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const forgetUser = (user: string): Effect.Effect<
  {
    readonly events: number
    readonly fragments: number
    readonly facts: number
    readonly cacheEntries: number
  },
  VectorStoreError,
  VectorStore
> =>
  Effect.all({
    events: EpisodicMemory.forgetUser(user),
    fragments: KnowledgeBase.forgetUser(user),
    facts: UserFacts.forget(user),
    cacheEntries: SemanticCache.invalidate({ keys: { user } })
  })
