/**
 * The shapes of the memory hooks' configuration and handle (see
 * `MemoryHooks.build`): kept apart from the builder so it stays one concept.
 */
import type { EmbeddingModel, LanguageModel } from "@effect/ai"
import type { Duration, Effect } from "effect"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { Hook } from "../../pipeline/Hook.js"
import type { ActivityHooks, Options as ActivityOptions } from "./activityOptions.js"

/**
 * Options of `MemoryHooks.build`. All are optional.
 *
 * - `domain`: the episodic scope events are filed in and read from — fixed,
 *   or per request; default: request metadata `memory_domain` (a non-empty
 *   string), else `"default"`
 * - `recentWindow` / `recentLimit`: the recent-window read (default 7 days, 10 events)
 * - `relatedLimit` / `relatedMinScore`: related events and knowledge found by
 *   embedding (default 5, 0.35; needs an embedding model)
 * - `knowledgeLimit`: knowledge fragments in the view (default 3)
 * - `byteBudget`: the view's UTF-8 bytes, notice and legend included (default 2,000; 512..65,536)
 * - `entityExtractor`: the request's entities (default: capitalized words,
 *   tickers, quoted phrases, ids)
 * - `recordRequestEntities`: identities of the request added to every
 *   recorded event — for recording only
 * - `summarizer`: `"model"` (default when a language model is configured) or `"heuristic"`
 * - `summarizerTimeout`: bound of the summarizer call only (default: `Config`
 *   `AGENT_MEMORY_SUMMARIZER_TIMEOUT`, else 2 minutes)
 * - `batchLimit`: steps per summarizer call; the rest get the heuristic (default 20)
 * - `writeTimeout`: time for the recorder's writes on top of the summarizer's (default 1 minute)
 * - `retention`: how long events and fragments are kept (default: until removed)
 * - `knowledge`: build the knowledge-extraction hook (default true; needs a
 *   language model and an embedding model)
 * - `activity`: also build the activity hooks (announcement first, cleanup last)
 * - `embeddings` / `model`: the backends; default: the context's
 *   `EmbeddingModel` / `LanguageModel` when present
 * - `names`: the hooks' names
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly domain?: string | ((context: PipelineContext) => string) | undefined
  readonly recentWindow?: Duration.DurationInput | undefined
  readonly recentLimit?: number | undefined
  readonly relatedLimit?: number | undefined
  readonly relatedMinScore?: number | undefined
  readonly knowledgeLimit?: number | undefined
  readonly byteBudget?: number | undefined
  readonly entityExtractor?: ((request: string) => ReadonlyArray<string>) | undefined
  readonly recordRequestEntities?: ((request: string) => ReadonlyArray<string>) | undefined
  readonly summarizer?: "model" | "heuristic" | undefined
  readonly summarizerTimeout?: Duration.DurationInput | undefined
  readonly batchLimit?: number | undefined
  readonly writeTimeout?: Duration.DurationInput | undefined
  readonly retention?: Duration.DurationInput | undefined
  readonly knowledge?: boolean | undefined
  readonly activity?: ActivityOptions | undefined
  readonly embeddings?: EmbeddingModel.Service | undefined
  readonly model?: LanguageModel.Service | undefined
  readonly names?: {
    readonly enrichment?: string | undefined
    readonly record?: string | undefined
    readonly knowledge?: string | undefined
  } | undefined
}

/**
 * The memory hooks: register `hooks` (their order is the execution order).
 * `R` is `ActivityStore` when the activity hooks were built, else `never`.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryHooks<R = never> {
  /** BeforePlanning: the recent window (and related events, knowledge) as one bounded view in `rag_context`. */
  readonly enrichment: Hook
  /** AfterExecution: one episodic event per executed step, before synthesis (C19). */
  readonly record: Hook
  /** AfterSynthesis, detached: 0–3 knowledge fragments (built with a language model and an embedding model). */
  readonly knowledge?: Hook | undefined
  /** The activity hooks, when `activity` was given. */
  readonly activity?: ActivityHooks | undefined
  /**
   * In execution order: activity announcement → enrichment → record →
   * knowledge extraction → activity cleanup (the ones built).
   */
  readonly hooks: ReadonlyArray<Hook<R>>
  /** Waits until no detached knowledge extraction is running. */
  readonly idle: Effect.Effect<void>
}
