/**
 * Prompt-value preparation (seed 000 §5.2–5.3): a replaceable function
 * applied to each known *string* enrichment — `rag_context`,
 * `conversation_history`, `activity_coordination`, `user_profile` — before a
 * prompt builder sees it. The default is the identity, and with it the
 * pipeline does no work at all.
 *
 * Preparation is a prompt concern: the planning prompt, every continuation
 * (phase 2+) prompt — a resumed request's included — and the synthesis
 * prompt (workflow mode's too) are built from prepared values, by the
 * default builder and a custom one alike. The request-start snapshot itself
 * is never changed: hooks, `planning_enrichment:<key>` effects, checkpoints
 * and a short-circuit response's metadata keep the values the hooks wrote.
 * The snapshot is prepared once per request (once more on a resume), so
 * every prompt of a request sees the same prepared values.
 *
 * Non-string values of the known keys and every other key pass through
 * untouched. A preparer that throws, or returns something that is not a
 * string, does not fail the request: that value is left out of the prompts
 * (fail closed for the value — it is never rendered unprepared, since a
 * preparer may redact or shorten it), and the failure is logged and
 * recorded in the record's `diagnostics`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import { thrownText } from "../domain/internal/jsonSnapshot.js"
import type { Json, JsonObject } from "../domain/Json.js"
import { knownEnrichmentKeys } from "../domain/PipelineContext.js"

/**
 * One of the four known enrichment keys whose string values are prepared
 * (in the order the default builder renders them).
 *
 * @since 0.1.0
 * @category models
 */
export type Key = typeof knownEnrichmentKeys[number]

/**
 * The keys whose string values are prepared: `rag_context`,
 * `conversation_history`, `activity_coordination`, `user_profile`.
 *
 * @since 0.1.0
 * @category constants
 */
export const keys: ReadonlyArray<Key> = knownEnrichmentKeys

/**
 * Prepares one known string enrichment for the prompts. It receives the
 * value and its key and returns the text the prompt builder gets (an empty
 * string leaves the value out of the default builder's prompts). It must be
 * pure: it runs once per request snapshot, on the request's hot path.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { PromptPreparation } from "effect-agent-pipeline"
 *
 * // Collapse runs of blank lines in retrieved text; leave the other keys alone.
 * const compact = Layer.succeed(PromptPreparation.PromptValuePreparer, {
 *   prepare: (value, key) => (key === "rag_context" ? value.replace(/\n{3,}/g, "\n\n") : value)
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class PromptValuePreparer extends Context.Tag("effect-agent-pipeline/PromptValuePreparer")<
  PromptValuePreparer,
  PromptValuePreparer.Service
>() {}

/**
 * The types of the {@link PromptValuePreparer} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace PromptValuePreparer {
  /**
   * A preparer: the text a prompt builder gets for a known string value.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly prepare: (value: string, key: Key) => string
  }
}

/**
 * The default preparer: every value as it is. The pipeline recognizes it
 * and skips preparation entirely.
 *
 * @since 0.1.0
 * @category constants
 */
export const identity: PromptValuePreparer.Service = { prepare: (value) => value }

/**
 * A preparer from a function.
 *
 * @example
 * ```ts
 * import { PromptPreparation } from "effect-agent-pipeline"
 *
 * const trimmed = PromptPreparation.make((value) => value.trim())
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (prepare: (value: string, key: Key) => string): PromptValuePreparer.Service => ({ prepare })

/**
 * The default (identity) preparer as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDefault: Layer.Layer<PromptValuePreparer> = Layer.succeed(PromptValuePreparer, identity)

/**
 * A preparer from a function, as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (prepare: (value: string, key: Key) => string): Layer.Layer<PromptValuePreparer> =>
  Layer.succeed(PromptValuePreparer, make(prepare))

/**
 * A value the preparer could not prepare: it threw (`threw`), or returned
 * something that is not a string (`not_a_string`). The value is left out
 * of the prompts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Failure {
  readonly key: Key
  readonly reason: "threw" | "not_a_string"
  /** What was thrown or returned, in one bounded line. */
  readonly detail: string
}

/**
 * Enrichments as the prompts get them, and the values that could not be
 * prepared (left out of `enrichments`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Prepared {
  readonly enrichments: JsonObject
  readonly failures: ReadonlyArray<Failure>
}

const describeReturned = (returned: unknown): string => {
  if (returned === null || returned === undefined) return String(returned)
  if (Array.isArray(returned)) return "an array"
  const type = typeof returned
  return type === "object" ? "an object" : `a ${type}`
}

/**
 * Applies a preparer to the known string values of `enrichments`; every
 * other value is kept as it is. With {@link identity}, `enrichments` is
 * returned as it is. Never throws: a value the preparer fails on is left
 * out and reported in `failures`.
 *
 * @example
 * ```ts
 * import { PromptPreparation } from "effect-agent-pipeline"
 *
 * PromptPreparation.prepare(
 *   { rag_context: "  notes  ", user_profile: { tier: "gold" }, tenant: " acme " },
 *   PromptPreparation.make((value) => value.trim())
 * )
 * // { enrichments: { rag_context: "notes", user_profile: { tier: "gold" }, tenant: " acme " }, failures: [] }
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const prepare = (enrichments: JsonObject, preparer: PromptValuePreparer.Service): Prepared => {
  if (preparer === identity) return { enrichments, failures: [] }
  const out: Record<string, Json> = { ...enrichments }
  const failures: Array<Failure> = []
  for (const key of keys) {
    const value = enrichments[key]
    if (typeof value !== "string") continue
    let returned: unknown
    try {
      returned = preparer.prepare(value, key)
    } catch (thrown) {
      delete out[key]
      failures.push({ key, reason: "threw", detail: thrownText(thrown) })
      continue
    }
    if (typeof returned === "string") {
      out[key] = returned
    } else {
      delete out[key]
      failures.push({ key, reason: "not_a_string", detail: `returned ${describeReturned(returned)}` })
    }
  }
  return { enrichments: out, failures }
}

/**
 * The diagnostic a failure is recorded with.
 *
 * @since 0.1.0
 * @category utils
 */
export const failureText = (failure: Failure): string =>
  `prompt value preparation failed for ${failure.key} (${failure.reason}: ${failure.detail}); ` +
  "the value is left out of the prompts"

/**
 * The preparer in context, or {@link identity}.
 *
 * @since 0.1.0
 * @category accessors
 */
export const currentPreparer: Effect.Effect<PromptValuePreparer.Service> = Effect.map(
  Effect.serviceOption(PromptValuePreparer),
  Option.getOrElse(() => identity)
)
