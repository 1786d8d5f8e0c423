/**
 * Per-user memory (seed 000 §8.2 `BuildUserMemoryHooks`, §10, C19): what
 * a user told the agent in earlier requests reaches the planner in later
 * ones.
 *
 * - The **enrichment** hook (BeforePlanning, `UserMemoryEnrichment`) reads
 *   the request's user id (metadata `user_id`; no user, no read — recorded
 *   as such), loads the user's identity facts and the facts relevant to the
 *   request (by embedding similarity when an `EmbeddingModel` is
 *   configured, else the newest) as one `memory_load` operation, and writes
 *   them as the `user_profile` enrichment: its own `<user_profile>` block
 *   (the default prompt builder inserts that key verbatim, §5.3), every
 *   fact escaped and the block within a byte budget. Effect
 *   `user_memory_context`: user present, read status, facts by kind, bytes.
 *   The injected text itself is only in `planning_enrichment:user_profile`.
 * - The **extraction** hook (AfterSynthesis, `UserMemoryExtraction`) is
 *   built only when a `LanguageModel` is configured. It asks the model for
 *   durable facts in request + response, checks them (count, length, kind,
 *   confidence, nothing that looks like a secret) and stores each as one
 *   `memory_store` operation in {@link UserFacts}. The response is returned
 *   unchanged. Effect `user_memory_extraction`: the exact model reply, the
 *   normalized facts and each fact's outcome — with `fireAndRecord`
 *   (default) pending when the hook returns and completed by a detached
 *   fiber owned by the builder's scope.
 *
 * Users' memory operation hooks see every read and write (scope
 * `user:<id>`): a `before_memory_load` transform may change the limit,
 * minimum score and kinds; an `after_memory_load` transform sees — and may
 * drop — the facts before they become the prompt; a `before_memory_store`
 * transform may scrub a fact or change its id.
 *
 * @since 0.1.0
 */
import { Effect, FiberSet, Option, type Scope } from "effect"
import type { VectorStore } from "../stores/VectorStore.js"
import { InvalidMemoryOptions, resolve } from "./internal/memoryServices.js"
import { makeEnrichment } from "./internal/userMemoryEnrichment.js"
import { makeExtraction } from "./internal/userMemoryExtraction.js"
import { type Options, settingsOf, type UserMemoryHooks } from "./internal/userMemoryOptions.js"

/**
 * The memory builders' construction error (an option out of range, an
 * empty name).
 *
 * @since 0.1.0
 * @category errors
 */
export { InvalidMemoryOptions }

/**
 * The builder's options and what it returns.
 *
 * @since 0.1.0
 * @category models
 */
export type { Options, UserMemoryHooks } from "./internal/userMemoryOptions.js"

/**
 * The request metadata key the user id is read from by default.
 *
 * @since 0.1.0
 * @category constants
 */
export { metadataUserId } from "./internal/userMemoryOptions.js"

/**
 * Effect ids: the enrichment's read report (`user_memory_context`) and the
 * extraction's report (`user_memory_extraction`).
 *
 * @since 0.1.0
 * @category constants
 */
export { contextEffectId } from "./internal/userMemoryEnrichment.js"

/**
 * Effect id of the extraction's report, and how many detached extractions
 * may be in flight at once (past it an exchange is recorded as refused).
 *
 * @since 0.1.0
 * @category constants
 */
export { extractionEffectId, maxInFlight } from "./internal/userMemoryExtraction.js"

/**
 * The memory scope a user's facts are read and written under, as memory
 * operation hooks see it (`user:<id>`).
 *
 * @since 0.1.0
 * @category utils
 */
export { scopeOf } from "./internal/userMemoryEnrichment.js"

/**
 * Whether a fact's text looks like it carries a secret: the extraction
 * does not keep such facts.
 *
 * @since 0.1.0
 * @category utils
 */
export { looksSecret } from "./internal/userMemoryFacts.js"

/**
 * Builds the user memory hooks over the `VectorStore` in context (facts
 * live in its `user_facts` collection, see {@link UserFacts}). The
 * extraction hook exists only when a `LanguageModel` is configured (in
 * `options.model` or in context); without an `EmbeddingModel` the
 * enrichment injects the newest facts instead of the most relevant ones.
 * Detached extractions run in the scope the builder runs in: built inside
 * an agent's Layer, they are interrupted when the agent shuts down;
 * `idle` waits for them.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, Embeddings, ScriptedModel, UserMemoryHooks, VectorStore } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   hooks: Effect.gen(function*() {
 *     // The model that extracts facts (a real one in production).
 *     const extractor = yield* ScriptedModel.make({
 *       plans: [],
 *       synthesis: `[{"text": "Prefers window seats", "kind": "preference", "confidence": 0.9}]`
 *     })
 *     const memory = yield* UserMemoryHooks.build({
 *       model: extractor.service,
 *       embeddings: yield* Embeddings.makeOffline(),
 *       ttl: "365 days"
 *     })
 *     return memory.hooks
 *   })
 * }).pipe(Layer.provide(VectorStore.layerMemory()))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (
  options: Options = {}
): Effect.Effect<UserMemoryHooks, InvalidMemoryOptions, VectorStore | Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* settingsOf(options)
    const services = yield* resolve({ embeddings: options.embeddings, model: options.model })
    const fibers = yield* FiberSet.make<void>()
    const enrichment = makeEnrichment(settings, services)
    const extraction = Option.isSome(services.model)
      ? makeExtraction(settings, services, services.model.value, fibers)
      : undefined
    return {
      enrichment,
      extraction,
      hooks: extraction === undefined ? [enrichment] : [enrichment, extraction],
      idle: FiberSet.awaitEmpty(fibers)
    }
  })
