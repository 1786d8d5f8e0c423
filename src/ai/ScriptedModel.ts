/**
 * A scripted language model for tests and benchmarks: it answers from a
 * script instead of thinking, records every prompt it receives and costs
 * (almost) nothing per call.
 *
 * - Structured output (`generateObject`, i.e. the JSON response format)
 *   consumes the next entry of `script.plans`.
 * - Text (`generateText`) and streams (`streamText`) answer with
 *   `script.synthesis`; a stream sends `script.chunks` verbatim as its deltas
 *   when given, else the whole synthesis as one delta.
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel } from "@effect/ai"
import type { Prompt, Response } from "@effect/ai"
import { Effect, Layer, Stream } from "effect"
import { withIdentity } from "./internal/modelClient.js"
import * as ModelProvider from "./ModelProvider.js"

/**
 * What the scripted model answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Script {
  /**
   * One entry per `generateObject` call, in order. An entry is either a value
   * or a function of the prompt text returning one. The value is then:
   * - a `string`: returned verbatim as the model's text (so a test can return
   *   malformed JSON; `generateObject` then fails with `MalformedOutput`);
   * - an `Error`: the call fails with an `AiError` (the error itself when it
   *   already is one, else an `UnknownError` carrying its message);
   * - anything else: returned as its `JSON.stringify` text.
   *
   * When the entries run out, the call fails with an `AiError.UnknownError`
   * saying the script is exhausted.
   */
  readonly plans: ReadonlyArray<unknown | ((prompt: string) => unknown)>
  /** The text answer for `generateText` and `streamText`. */
  readonly synthesis: string | ((prompt: string) => string)
  /** Exact stream deltas (e.g. to split a multi-byte character); default: one delta. */
  readonly chunks?: ReadonlyArray<string>
}

/**
 * One prompt the model received: `plan` for structured output, `text` for
 * `generateText`, `stream` for `streamText`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedPrompt {
  readonly kind: "plan" | "text" | "stream"
  readonly prompt: string
}

/**
 * What {@link make} returns: the service and the prompts it has received so
 * far (a live view, appended to on every call).
 *
 * @since 0.1.0
 * @category models
 */
export interface Handle {
  readonly service: LanguageModel.Service
  /** The same model as `LanguageModel` and the pipeline's direct interface (see `ModelProvider`). */
  readonly layer: Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel>
  readonly prompts: ReadonlyArray<RecordedPrompt>
  /** How many plan entries have been consumed. */
  readonly plansUsed: () => number
}

const moduleName = "ScriptedModel"
const textId = "scripted-text"

const noUsage = { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
const finishPart: Response.FinishPartEncoded = { type: "finish", reason: "stop", usage: noUsage }

/** The prompt as text: every system text and text part, joined by blank lines. */
const promptText = (prompt: Prompt.Prompt): string => {
  const texts: Array<string> = []
  for (const message of prompt.content) {
    if (message.role === "system") {
      texts.push(message.content)
    } else if (message.role === "user" || message.role === "assistant") {
      for (const part of message.content) if (part.type === "text") texts.push(part.text)
    }
  }
  return texts.length === 1 ? texts[0]! : texts.join("\n\n")
}

const isPlanFunction = (u: unknown): u is (prompt: string) => unknown => typeof u === "function"

const failure = (method: string, description: string, cause?: unknown): AiError.AiError =>
  new AiError.UnknownError({ module: moduleName, method, description, ...(cause === undefined ? {} : { cause }) })

const describe = (u: unknown): string => (u instanceof Error ? u.message : String(u))

/** Turns a plan entry's value into the model's text, or the error to fail with. */
const planText = (value: unknown): string | AiError.AiError => {
  if (typeof value === "string") return value
  if (AiError.isAiError(value)) return value
  if (value instanceof Error) return failure("generateObject", `scripted failure: ${value.message}`, value)
  try {
    const text = JSON.stringify(value)
    return text === undefined ? failure("generateObject", "scripted plan is not JSON-serializable") : text
  } catch (cause) {
    return failure("generateObject", `scripted plan is not JSON-serializable: ${describe(cause)}`, cause)
  }
}

const textParts = (text: string): Array<Response.PartEncoded> => [{ type: "text", text }, finishPart]

/**
 * Builds a scripted model.
 *
 * @example
 * ```ts
 * import { LanguageModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { RoutingPlan, ScriptedModel } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const model = yield* ScriptedModel.make({
 *     plans: [{ steps: [], terminal: true }],
 *     synthesis: "Nothing to do."
 *   })
 *   const plan = yield* LanguageModel.generateObject({ prompt: "plan", schema: RoutingPlan.RoutingPlan }).pipe(
 *     Effect.provideService(LanguageModel.LanguageModel, model.service)
 *   )
 *   return [plan.value, model.prompts] // [{ steps: [], terminal: true }, [{ kind: "plan", prompt: "plan" }]]
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (script: Script): Effect.Effect<Handle> =>
  Effect.gen(function*() {
    const prompts: Array<RecordedPrompt> = []
    let next = 0

    const synthesis = (prompt: string, method: string): Effect.Effect<string, AiError.AiError> => {
      if (typeof script.synthesis === "string") return Effect.succeed(script.synthesis)
      const answer = script.synthesis
      return Effect.try({
        try: () => answer(prompt),
        catch: (e) => failure(method, `scripted synthesis function threw: ${describe(e)}`, e)
      })
    }

    const plan = (prompt: string): Effect.Effect<string, AiError.AiError> => {
      if (next >= script.plans.length) {
        return Effect.fail(
          failure("generateObject", `script exhausted: all ${script.plans.length} scripted plan(s) were used`)
        )
      }
      const entry = script.plans[next]
      next += 1
      let value: unknown = entry
      if (isPlanFunction(entry)) {
        try {
          value = entry(prompt)
        } catch (cause) {
          return Effect.fail(failure("generateObject", `scripted plan function threw: ${describe(cause)}`, cause))
        }
      }
      const text = planText(value)
      return typeof text === "string" ? Effect.succeed(text) : Effect.fail(text)
    }

    const generate = (
      options: LanguageModel.ProviderOptions
    ): Effect.Effect<Array<Response.PartEncoded>, AiError.AiError> => {
      const prompt = promptText(options.prompt)
      const isPlan = options.responseFormat.type === "json"
      prompts.push({ kind: isPlan ? "plan" : "text", prompt })
      return Effect.map(isPlan ? plan(prompt) : synthesis(prompt, "generateText"), textParts)
    }

    const provider = yield* ModelProvider.make({
      generateText: (options) => Effect.suspend(() => generate(options)),
      streamText: (options) =>
        Stream.unwrap(Effect.suspend(() => {
          const prompt = promptText(options.prompt)
          prompts.push({ kind: "stream", prompt })
          const deltas = script.chunks === undefined
            ? Effect.map(synthesis(prompt, "streamText"), (text) => [text])
            : Effect.succeed(script.chunks)
          return Effect.map(deltas, (chunks) =>
            Stream.fromIterable<Response.StreamPartEncoded>([
              { type: "text-start", id: textId },
              ...chunks.map((delta): Response.StreamPartEncoded => ({ type: "text-delta", id: textId, delta })),
              { type: "text-end", id: textId },
              finishPart
            ]))
        }))
    })

    return {
      service: provider.languageModel,
      // Telemetry: this library's own in-process model (spans `chat scripted`).
      layer: withIdentity(ModelProvider.layer(Effect.succeed(provider)), {
        provider: "effect_agent_pipeline",
        model: "scripted"
      }),
      prompts,
      plansUsed: () => next
    }
  })

/**
 * The scripted model as the `LanguageModel` service (and the pipeline's
 * direct interface). Use {@link make} and `handle.layer` when the test needs
 * the recorded prompts.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (script: Script): Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel> =>
  Layer.unwrapEffect(Effect.map(make(script), (handle) => handle.layer))
