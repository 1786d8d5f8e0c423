/**
 * Builds the planning, continuation and synthesis prompts (seed 000
 * §5.2–5.3, C7). The default builder renders exactly four known enrichment
 * keys; a custom builder gets a copy of all enrichments.
 *
 * Every phase's prompt is built from the request-start enrichment snapshot,
 * its known string values prepared by the configured `PromptPreparation`
 * preparer (the identity by default).
 * Everything that enters a prompt from outside — enrichments, tool
 * descriptors, step results (tool outputs and errors), the request — is
 * escaped into its own section, so it can never close or forge a section tag
 * (`PromptSections`). The one verbatim value, `user_profile`, has reserved
 * tags neutralized; `UserProfile.render` builds it with everything escaped.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import type { StepResult } from "../domain/ExecutionRecord.js"
import type { Json, JsonObject } from "../domain/Json.js"
import {
  enrichmentActivityCoordination,
  enrichmentConversationHistory,
  enrichmentRagContext,
  enrichmentUserProfile
} from "../domain/PipelineContext.js"
import { neutralizeReservedTags, renderSection } from "../domain/PromptSections.js"
import type { ToolDescriptor } from "../domain/ToolDescriptor.js"

/**
 * Reading, writing and escaping the prompt's reserved sections (`domain/PromptSections.ts`).
 *
 * @since 0.1.0
 * @category utils
 */
export {
  escapeContent,
  neutralizeReservedTags,
  readSection,
  renderSection,
  type ReservedSection,
  reservedSections,
  unescapeContent
} from "../domain/PromptSections.js"
/**
 * A tool as a prompt describes it.
 *
 * @since 0.1.0
 * @category models
 */
export type { ToolDescriptor } from "../domain/ToolDescriptor.js"

/**
 * What a prompt builder receives. `enrichments` is a copy of the
 * request-start snapshot, its known string values passed through the
 * configured prompt-value preparation (`PromptPreparation`; the identity by
 * default): changing it changes nothing else.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptInput {
  readonly request: string
  readonly enrichments: JsonObject
  readonly tools: ReadonlyArray<ToolDescriptor>
  readonly phase: number
  /** Results of earlier phases (empty in phase 1). */
  readonly priorResults: ReadonlyArray<StepResult>
}

/**
 * What the synthesis prompt is built from.
 *
 * @since 0.1.0
 * @category models
 */
export interface SynthesisInput {
  readonly request: string
  readonly enrichments: JsonObject
  readonly steps: ReadonlyArray<StepResult>
}

/**
 * The prompt builder service. Replace it with a Layer to change prompts.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { PromptBuilder } from "effect-agent-pipeline"
 *
 * const custom = Layer.succeed(PromptBuilder.PromptBuilder, {
 *   ...PromptBuilder.defaultBuilder,
 *   buildPlanningPrompt: (input) =>
 *     PromptBuilder.defaultBuilder.buildPlanningPrompt(input) +
 *     "\n\n" +
 *     PromptBuilder.renderSection("tenant", String(input.enrichments.tenant ?? ""))
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class PromptBuilder extends Context.Tag("effect-agent-pipeline/PromptBuilder")<
  PromptBuilder,
  PromptBuilder.Service
>() {}

/**
 * The types of the {@link PromptBuilder} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace PromptBuilder {
  /**
   * The prompts a builder renders: planning, continuation and synthesis.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly buildPlanningPrompt: (input: PromptInput) => string
    readonly buildContinuationPrompt: (input: PromptInput) => string
    readonly buildSynthesisPrompt: (input: SynthesisInput) => string
  }
}

const asText = (value: Json | undefined): string | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value === "string") return value.length === 0 ? undefined : value
  return JSON.stringify(value)
}

const section = (tag: string, value: Json | undefined): string | undefined => {
  const text = asText(value)
  return text === undefined ? undefined : renderSection(tag, text)
}

/**
 * Renders the four known enrichments in a fixed order: `rag_context` as
 * `<agent_memory>`, `conversation_history` as `<conversation_history>`,
 * `activity_coordination` as `<agent_coordination>`, `user_profile`
 * verbatim (its writer supplies the block, see `UserProfile.render`; only
 * reserved section tags in it are neutralized). No other key is rendered.
 *
 * @since 0.1.0
 * @category utils
 */
export const renderKnownEnrichments = (enrichments: JsonObject): ReadonlyArray<string> => {
  const out: Array<string> = []
  const memory = section("agent_memory", enrichments[enrichmentRagContext])
  if (memory) out.push(memory)
  const history = section("conversation_history", enrichments[enrichmentConversationHistory])
  if (history) out.push(history)
  const coordination = section("agent_coordination", enrichments[enrichmentActivityCoordination])
  if (coordination) out.push(coordination)
  const profile = asText(enrichments[enrichmentUserProfile])
  if (profile !== undefined) out.push(neutralizeReservedTags(profile))
  return out
}

// One JSON value per line (JSON.stringify escapes line breaks inside
// strings), escaped with the section: the offline model reads them back.
const renderTools = (tools: ReadonlyArray<ToolDescriptor>): string =>
  renderSection("tools", tools.map((t) => JSON.stringify(t)).join("\n"))

// What a step did, without when or how long: timings would make the same
// request's prompt (and its token count, and any cache keyed on it) differ
// from run to run. The record keeps them.
const renderResults = (steps: ReadonlyArray<StepResult>): string =>
  renderSection(
    "step_results",
    steps.map(({ duration: _duration, startedAt: _startedAt, ...step }) => JSON.stringify(step)).join("\n")
  )

const renderRequest = (request: string): string => renderSection("user_request", request)

// ASCII only: one character outside Latin-1 makes every prompt built from
// this text a two-byte string (twice the memory, where a record keeps it).
// The example is the plan's wire form (`PlanOutput`, the schema a provider's
// structured output enforces), so a server without structured output is
// asked for the same object; a plain plan (`parameters` as an object) is
// read too.
const planningInstructions = `<instructions>
Plan the tool calls that answer the user request. Reply with one JSON object:
{"reasoning":"...","steps":[{"step_id":"s1","namespace":"...","agent":"...","capability":"...","parameters_json":"{\\"city\\":\\"Paris\\"}","depends_on":[],"implicit_deps":[],"metadata_json":null}],"terminal":true}
parameters_json is the text of one JSON object holding the tool's arguments ("{}" when it takes none).
Use only tools from the tools section. A parameter may reference another step's output as "{{steps.<step_id>.output}}";
a same-phase reference needs depends_on, a reference to an earlier phase's step needs implicit_deps.
Set "terminal": false only when you need to see these results before planning more steps.
</instructions>`

const synthesisInstructions = `<instructions>
Answer the user request from the step results. Be concise; do not invent results.
</instructions>`

/**
 * The default builder.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBuilder: PromptBuilder.Service = {
  buildPlanningPrompt: (input) =>
    [
      planningInstructions,
      ...renderKnownEnrichments(input.enrichments),
      renderTools(input.tools),
      renderRequest(input.request)
    ].join("\n\n"),
  buildContinuationPrompt: (input) =>
    [
      planningInstructions,
      ...renderKnownEnrichments(input.enrichments),
      renderTools(input.tools),
      renderResults(input.priorResults),
      renderRequest(input.request)
    ].join("\n\n"),
  buildSynthesisPrompt: (input) =>
    [
      synthesisInstructions,
      ...renderKnownEnrichments(input.enrichments),
      renderResults(input.steps),
      renderRequest(input.request)
    ].join("\n\n")
}

/**
 * The default builder as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDefault: Layer.Layer<PromptBuilder> = Layer.succeed(PromptBuilder, defaultBuilder)

/**
 * The builder in context, or the default one.
 *
 * @since 0.1.0
 * @category accessors
 */
export const current: Effect.Effect<PromptBuilder.Service> = Effect.map(
  Effect.serviceOption(PromptBuilder),
  (o) => (o._tag === "Some" ? o.value : defaultBuilder)
)
