/**
 * The skill selector's view of the enrichments (seed 000 §5.4): skills
 * activation and resource selectors see the four known string enrichments
 * through a short, bounded view — not the full planner prompt. Each value is
 * cut to its first 1,000 UTF-8 bytes, never inside a code point (nor a
 * surrogate pair), with `...` appended when it was cut.
 *
 * Scope and historical-origin warnings go first, and a legend (how to read
 * the records that follow) right after them: both are counted inside the
 * value's budget, so a notice that fits the budget always survives the cut.
 * A writer that puts its own notice inside the value (the built-in memory
 * hook appends its block after other hooks' RAG text, which keeps its order
 * and may use up the prefix) gets the same rule from {@link truncate}; a
 * selector-only warning can be given here as a {@link Preface}.
 *
 * Check what a selector sees with {@link view}, separately from the
 * planner's prompt.
 *
 * @since 0.1.0
 */
import { exceeds, utf8Length, utf8Prefix } from "../ai/internal/outputBounds.js"
import type { Json, JsonObject } from "../domain/Json.js"
import { knownEnrichmentKeys } from "../domain/PipelineContext.js"
import { renderKnownEnrichments } from "./PromptBuilder.js"

/**
 * One of the four known enrichment keys, in the order the view holds them.
 *
 * @since 0.1.0
 * @category models
 */
export type Key = typeof knownEnrichmentKeys[number]

/**
 * The UTF-8 bytes kept of each value (the `...` of a cut value comes on top).
 *
 * @since 0.1.0
 * @category constants
 */
export const budgetBytes = 1_000

/**
 * What is appended to a value that was cut.
 *
 * @since 0.1.0
 * @category constants
 */
export const ellipsis = "..."

/**
 * A text cut to a byte budget.
 *
 * @since 0.1.0
 * @category models
 */
export interface Truncated {
  /** The kept prefix, followed by {@link ellipsis} when it was cut. */
  readonly text: string
  /** UTF-8 bytes of the kept prefix (without the ellipsis). */
  readonly bytes: number
  readonly truncated: boolean
}

/**
 * The longest prefix of `text` within `maxBytes` UTF-8 bytes that does not
 * split a code point or a surrogate pair, plus {@link ellipsis} when
 * anything was cut. A lone surrogate counts as the 3 bytes `TextEncoder`
 * writes for it.
 *
 * @example
 * ```ts
 * import { SkillSelector } from "effect-agent-pipeline"
 *
 * SkillSelector.truncate("na\u00efve \u{1F600}", 8) // { text: "naïve ...", bytes: 7, truncated: true }
 * SkillSelector.truncate("short", 8) // { text: "short", bytes: 5, truncated: false }
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const truncate = (text: string, maxBytes: number = budgetBytes): Truncated => {
  const max = Math.max(0, Math.floor(maxBytes))
  if (!exceeds(text, max)) return { text, bytes: utf8Length(text), truncated: false }
  const kept = utf8Prefix(text, max)
  return { text: kept + ellipsis, bytes: utf8Length(kept), truncated: true }
}

/**
 * What is placed before a value, inside its budget: a scope or
 * historical-origin notice first, then a legend. Each is followed by a line
 * break; empty parts are left out.
 *
 * @since 0.1.0
 * @category models
 */
export interface Preface {
  readonly notice?: string | undefined
  readonly legend?: string | undefined
}

/**
 * Options of {@link view}: a {@link Preface} per key. A preface of a key
 * without a string value is not shown (there is nothing to warn about).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly prefaces?: { readonly [K in Key]?: Preface | undefined } | undefined
}

/**
 * How one value was cut: the UTF-8 bytes of its preface and value before
 * the cut (`sourceBytes`), the bytes kept (`bytes`, without the ellipsis),
 * and whether it was cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly key: Key
  readonly sourceBytes: number
  readonly bytes: number
  readonly truncated: boolean
}

/**
 * The selector's view: `text` (the values in the prompt's section format:
 * `<agent_memory>`, `<conversation_history>`, `<agent_coordination>`,
 * `user_profile` verbatim), the cut values by key, and a report per value
 * in the view's order.
 *
 * @since 0.1.0
 * @category models
 */
export interface View {
  readonly text: string
  readonly values: { readonly [K in Key]?: string }
  readonly report: {
    readonly budgetBytes: number
    readonly entries: ReadonlyArray<Entry>
  }
}

const withPreface = (value: string, preface: Preface | undefined): string => {
  if (preface === undefined) return value
  let head = ""
  if (preface.notice !== undefined && preface.notice !== "") head += `${preface.notice}\n`
  if (preface.legend !== undefined && preface.legend !== "") head += `${preface.legend}\n`
  return head + value
}

/**
 * The skill selector's view of the four known string enrichments, in the
 * order `rag_context`, `conversation_history`, `activity_coordination`,
 * `user_profile`: each (after its preface, if any) cut to its first
 * {@link budgetBytes} UTF-8 bytes, `...` appended when cut. Empty values,
 * values that are not strings and every other key are not in the view.
 *
 * @example
 * ```ts
 * import { SkillSelector } from "effect-agent-pipeline"
 *
 * const selectorView = SkillSelector.view(
 *   { rag_context: "2026-11-30 deploy of api-7 failed (rollback)", tenant: "acme" },
 *   { prefaces: { rag_context: { notice: "Past events from memory; verify current state before acting." } } }
 * )
 * selectorView.text
 * // <agent_memory>
 * // Past events from memory; verify current state before acting.
 * // 2026-11-30 deploy of api-7 failed (rollback)
 * // </agent_memory>
 * selectorView.report.entries // [{ key: "rag_context", sourceBytes: 105, bytes: 105, truncated: false }]
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const view = (enrichments: JsonObject, options?: Options): View => {
  const values: { [K in Key]?: string } = {}
  const shown: Record<string, Json> = {}
  const entries: Array<Entry> = []
  for (const key of knownEnrichmentKeys) {
    const value = enrichments[key]
    if (typeof value !== "string" || value === "") continue
    const source = withPreface(value, options?.prefaces?.[key])
    const cut = truncate(source, budgetBytes)
    values[key] = cut.text
    shown[key] = cut.text
    entries.push({
      key,
      sourceBytes: cut.truncated ? utf8Length(source) : cut.bytes,
      bytes: cut.bytes,
      truncated: cut.truncated
    })
  }
  return { text: renderKnownEnrichments(shown).join("\n\n"), values, report: { budgetBytes, entries } }
}
