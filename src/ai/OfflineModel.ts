/**
 * The embedded default language model: deterministic, offline, no network.
 *
 * What it is: a small rule-based stand-in for a `LanguageModel` so that the
 * pipeline runs end to end (demos, tests, benchmarks) without a provider. It
 * reads the sections written by the default `PromptBuilder` and
 *
 * - plans (structured output, `generateObject`) by lexical matching of the
 *   request's words against each tool's capability, agent, namespace and
 *   description (a capability word counts 3, an agent / namespace word 2, a
 *   description word 1; a tool needs a capability match or two description
 *   matches), at most 4 steps, best first;
 * - fills parameters from the tool's JSON Schema with the table-driven
 *   `FILL_RULES` of `internal/offlinePlanning.ts` (enum value mentioned, first
 *   number, all-caps ticker, capitalized place after "in"/"to"/"for"/"at",
 *   else the request text).
 *   Optional properties are filled only when the request obviously contains
 *   a value; a required one with no candidate is left out, so the tool
 *   reports invalid parameters rather than receiving a made-up value;
 * - synthesizes (text, `generateText` / `streamText`) by listing the step
 *   results, one line per step;
 * - answers from memory: when the `<agent_memory>` section holds the view the
 *   built-in memory hooks write (`MemoryHooks`, recognized by its "Memory of
 *   earlier requests" notice), the view's lines that share a word stem with
 *   the request — the most shared words first, ties newest first, each event
 *   once, at most 3 — are quoted verbatim under "From earlier requests
 *   (recorded before this one, possibly outdated):", after the step results,
 *   or alone when no step ran.
 *
 * What it is NOT: it is not an LLM. It does not understand language, does no
 * reasoning, never chains steps (every plan is one terminal phase without
 * dependencies), never asks for a continuation phase, and answers only from
 * the step results and the memory hooks' lines in the prompt: it quotes a
 * memory line, it does not read what the line means (a request that shares
 * a word with an unrelated event gets that event quoted), and it ignores any
 * other text in `<agent_memory>` (other RAG context) as well as the
 * conversation history and the user profile. Same prompt, same output,
 * always. Prompts that were not built by the default builder get an empty
 * plan and a "no tool" answer.
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel } from "@effect/ai"
import type { Response } from "@effect/ai"
import { Effect, Layer, Stream } from "effect"
import type { RoutingPlanInput } from "../domain/RoutingPlan.js"
import { withIdentity } from "./internal/modelClient.js"
import * as planning from "./internal/offlinePlanning.js"
import { lastUserText } from "./internal/offlinePrompt.js"
import * as synthesis from "./internal/offlineSynthesis.js"
import * as ModelProvider from "./ModelProvider.js"

/**
 * The plan the offline model returns for a planning or continuation prompt
 * (the text of the last user message).
 *
 * @since 0.1.0
 * @category utils
 */
export const planFromPrompt: (prompt: string) => RoutingPlanInput = planning.planFromPrompt

/**
 * The answer the offline model gives to a synthesis prompt (the text of the
 * last user message).
 *
 * @since 0.1.0
 * @category utils
 */
export const synthesisFromPrompt: (prompt: string) => string = synthesis.synthesisFromPrompt

// =============================================================================
// Provider
// =============================================================================

const textId = "offline-text"

/** Rough token estimate (4 characters a token); the model counts nothing. */
const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

const finishPart = (prompt: string, output: string): Response.FinishPartEncoded => {
  const inputTokens = estimateTokens(prompt)
  const outputTokens = estimateTokens(output)
  return {
    type: "finish",
    reason: "stop",
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
  }
}

/** Word-sized chunks that keep their whitespace, so they concatenate back to `text`. */
const wordChunks = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? []

interface Reply {
  readonly prompt: string
  readonly text: string
}

const reply = (options: LanguageModel.ProviderOptions, method: string): Effect.Effect<Reply, AiError.MalformedInput> =>
  Effect.suspend(() => {
    const prompt = lastUserText(options.prompt)
    if (prompt === undefined) {
      return Effect.fail(
        new AiError.MalformedInput({
          module: "OfflineModel",
          method,
          description: "The prompt has no user message to answer"
        })
      )
    }
    const text = options.responseFormat.type === "json"
      ? JSON.stringify(planFromPrompt(prompt))
      : synthesisFromPrompt(prompt)
    return Effect.succeed({ prompt, text })
  })

/**
 * The offline model as a provider: its `LanguageModel` service and the
 * pipeline's direct interface (see `ModelProvider`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const provider: Effect.Effect<ModelProvider.Provider> = ModelProvider.make({
  generateText: (options) =>
    Effect.map(reply(options, "generateText"), ({ prompt, text }): Array<Response.PartEncoded> => [
      { type: "text", text },
      finishPart(prompt, text)
    ]),
  streamText: (options) =>
    Stream.unwrap(
      Effect.map(reply(options, "streamText"), ({ prompt, text }) =>
        Stream.fromIterable<Response.StreamPartEncoded>([
          { type: "text-start", id: textId },
          ...wordChunks(text).map((delta): Response.StreamPartEncoded => ({ type: "text-delta", id: textId, delta })),
          { type: "text-end", id: textId },
          finishPart(prompt, text)
        ]))
    )
})

/**
 * Builds the offline model service.
 *
 * - `generateObject` (JSON response format): a routing plan for a planning
 *   prompt, `{"steps":[],"terminal":true}` for a continuation prompt (one with
 *   `<step_results>`) or when no tool matches.
 * - `generateText` / `streamText` (text): the synthesis answer; the stream
 *   sends it as word-sized `text-delta` parts.
 * - A prompt without a user message fails with `AiError.MalformedInput`.
 *
 * @example
 * ```ts
 * import { LanguageModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { OfflineModel, PromptBuilder, RoutingPlan } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const prompt = PromptBuilder.defaultBuilder.buildPlanningPrompt({
 *     request: "What is the stock quote for ACME?",
 *     enrichments: {},
 *     tools: registry.descriptors,
 *     phase: 1,
 *     priorResults: []
 *   })
 *   const { value } = yield* LanguageModel.generateObject({ prompt, schema: RoutingPlan.RoutingPlan })
 *   return value // { steps: [{ capability: "stock_quote", parameters: { symbol: "ACME" }, ... }], terminal: true }
 * }).pipe(Effect.provide(OfflineModel.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<LanguageModel.Service> = Effect.map(provider, (p) => p.languageModel)

/**
 * The offline model as the `LanguageModel` service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OfflineModel } from "effect-agent-pipeline"
 *
 * program.pipe(Effect.provide(OfflineModel.layer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel> = withIdentity(
  ModelProvider.layer(provider),
  // Telemetry: this library's own in-process model (spans `chat offline`).
  { provider: "effect_agent_pipeline", model: "offline" }
)
