/**
 * The shapes of the user memory hooks' configuration and handle (see
 * `UserMemoryHooks.build`), and the validation of the options into the
 * settings the hooks close over — kept apart from the hooks' behaviour.
 */
import type { EmbeddingModel, LanguageModel } from "@effect/ai"
import { Duration, Effect } from "effect"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { Hook } from "../../pipeline/Hook.js"
import { between, duration, InvalidMemoryOptions, name, wholeNumber } from "./memoryServices.js"

/**
 * Options of `UserMemoryHooks.build`. All are optional.
 *
 * Backends: `embeddings` (else the `EmbeddingModel` in context, if any)
 * ranks facts by similarity to the request — without one the newest facts
 * are used; `model` (else the `LanguageModel` in context, if any) extracts
 * facts — without one there is no extraction hook.
 *
 * - `userId`: the user of a request (default: metadata `user_id`, a non-empty string)
 * - `tenant`: files and reads facts under this tenant only
 * - `limit`: facts injected at most, identity facts first (default 10, 1..100)
 * - `identityLimit`: identity facts among them at most (default 5, 0..100)
 * - `minScore`: least similarity of a relevant fact (default 0.3, -1..1)
 * - `budgetBytes`: the `<user_profile>` block's size in UTF-8 bytes (default 2,000, 64..65,536)
 * - `ttl`: retention of an extracted fact (default: kept until forgotten)
 * - `execution`: `"fireAndRecord"` (default: the response returns at once,
 *   extraction finishes in the background) or `"blocking"`
 * - `maxFacts`: facts kept from one extraction (default 5, 1..20)
 * - `maxFactLength`: a fact's length in characters (default 300, 16..2,000)
 * - `minConfidence`: least confidence of a kept fact (default 0.5, 0..1)
 * - `extractionTimeout`: bound of the extraction model call (default 2 minutes)
 * - `enrichmentName` / `extractionName`: the hooks' names
 *   (default `user-memory-enrichment` / `user-memory-extraction`)
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly embeddings?: EmbeddingModel.Service | undefined
  readonly model?: LanguageModel.Service | undefined
  readonly userId?: ((context: PipelineContext) => string | undefined) | undefined
  readonly tenant?: string | undefined
  readonly limit?: number | undefined
  readonly identityLimit?: number | undefined
  readonly minScore?: number | undefined
  readonly budgetBytes?: number | undefined
  readonly ttl?: Duration.DurationInput | undefined
  readonly execution?: "blocking" | "fireAndRecord" | undefined
  readonly maxFacts?: number | undefined
  readonly maxFactLength?: number | undefined
  readonly minConfidence?: number | undefined
  readonly extractionTimeout?: Duration.DurationInput | undefined
  readonly enrichmentName?: string | undefined
  readonly extractionName?: string | undefined
}

/**
 * The user memory hooks: register `hooks` (enrichment, then extraction when
 * there is one).
 *
 * @since 0.1.0
 * @category models
 */
export interface UserMemoryHooks {
  /**
   * BeforePlanning: the user's identity facts and the facts relevant to the
   * request, as the `user_profile` enrichment (its own escaped
   * `<user_profile>` block); effect `user_memory_context`. No-op without a
   * user id.
   */
  readonly enrichment: Hook
  /**
   * AfterSynthesis (only when a language model is configured): durable
   * facts extracted from request and response, stored per user; the
   * response is returned unchanged; effect `user_memory_extraction`.
   */
  readonly extraction: Hook | undefined
  /** The hooks in registration order: enrichment, then extraction (when built). */
  readonly hooks: ReadonlyArray<Hook>
  /** Waits until no extraction is in flight (detached ones included). */
  readonly idle: Effect.Effect<void>
}

/** The validated settings the hooks close over. */
export interface Settings {
  readonly userId: (context: PipelineContext) => string | undefined
  readonly tenant: string | undefined
  readonly limit: number
  readonly identityLimit: number
  readonly minScore: number
  readonly budgetBytes: number
  readonly ttlMillis: number | undefined
  readonly execution: "blocking" | "fireAndRecord"
  readonly maxFacts: number
  readonly maxFactLength: number
  readonly minConfidence: number
  readonly extractionTimeout: Duration.Duration
  readonly enrichmentName: string
  readonly extractionName: string
}

/** The request metadata key the user id is read from by default. */
export const metadataUserId = "user_id"

const fromMetadata = (context: PipelineContext): string | undefined => {
  const value = context.metadata[metadataUserId]
  return typeof value === "string" && value.length > 0 ? value : undefined
}

/** Validates the options (every number in range, names non-empty) into settings. */
export const settingsOf = (options: Options): Effect.Effect<Settings, InvalidMemoryOptions> =>
  Effect.gen(function*() {
    const execution = options.execution ?? "fireAndRecord"
    if (execution !== "blocking" && execution !== "fireAndRecord") {
      return yield* new InvalidMemoryOptions({
        option: "execution",
        detail: `must be "blocking" or "fireAndRecord", got ${String(execution)}`
      })
    }
    if (options.tenant !== undefined) yield* name("tenant", options.tenant, "")
    if (options.userId !== undefined && typeof options.userId !== "function") {
      return yield* new InvalidMemoryOptions({ option: "userId", detail: "must be a function of the request context" })
    }
    const ttl = options.ttl === undefined ? undefined : yield* duration("ttl", options.ttl, 1)
    return {
      userId: options.userId ?? fromMetadata,
      tenant: options.tenant,
      limit: yield* wholeNumber("limit", options.limit, 10, 1, 100),
      identityLimit: yield* wholeNumber("identityLimit", options.identityLimit, 5, 0, 100),
      minScore: yield* between("minScore", options.minScore, 0.3, -1, 1),
      budgetBytes: yield* wholeNumber("budgetBytes", options.budgetBytes, 2_000, 64, 65_536),
      ttlMillis: ttl === undefined ? undefined : Math.ceil(Duration.toMillis(ttl)),
      execution,
      maxFacts: yield* wholeNumber("maxFacts", options.maxFacts, 5, 1, 20),
      maxFactLength: yield* wholeNumber("maxFactLength", options.maxFactLength, 300, 16, 2_000),
      minConfidence: yield* between("minConfidence", options.minConfidence, 0.5, 0, 1),
      extractionTimeout: yield* duration("extractionTimeout", options.extractionTimeout, "2 minutes"),
      enrichmentName: yield* name("enrichmentName", options.enrichmentName, "user-memory-enrichment"),
      extractionName: yield* name("extractionName", options.extractionName, "user-memory-extraction")
    }
  })
