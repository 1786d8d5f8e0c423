/**
 * One model's calls, resolved once when the inference seam is built: the
 * provider's narrow interface (`DirectModel`) when it offers one, else
 * `@effect/ai`'s `LanguageModel`. A model's failure is translated once, as
 * it leaves the client: a safe `AiError` (no request headers, no foreign
 * cause; see safeAiError.ts).
 */
import type { AiError, LanguageModel, Response } from "@effect/ai"
import { Effect, ParseResult, Stream } from "effect"
import type { ModelCall } from "../../domain/ModelCall.js"
import { type DirectModel, type ModelResponse, PlanRequest, responseOfText } from "../ModelProvider.js"
import { safeAiError } from "./safeAiError.js"

/**
 * What a buffered call asks for: text, or a plan as structured output.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "text" | "plan"

/**
 * One model's calls.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelClient {
  readonly label: ModelCall["model"]
  readonly generate: (prompt: string, format: Format) => Effect.Effect<ModelResponse, AiError.AiError>
  readonly stream: (prompt: string) => Stream.Stream<Response.StreamPart<{}>, AiError.AiError>
}

/** The raw text of `generateObject`'s output that was not JSON. */
const unparsedOutput = (error: AiError.AiError): string | undefined => {
  if (error._tag !== "MalformedOutput" || error.module !== "LanguageModel") return undefined
  const cause = error.cause
  return ParseResult.isParseError(cause) && typeof cause.issue.actual === "string" ? cause.issue.actual : undefined
}

/** A buffered call through `LanguageModel`: a plan's text is read even when it is not JSON (the pipeline re-asks). */
const generateWith = (model: LanguageModel.Service) => (prompt: string, format: Format) =>
  format === "text"
    ? Effect.map(model.generateText({ prompt }), responseOfText)
    : model.generateObject({ prompt, schema: PlanRequest, objectName: "routing_plan" }).pipe(
      Effect.map(responseOfText),
      Effect.catchIf(
        (error) => unparsedOutput(error) !== undefined,
        (error) => Effect.succeed<ModelResponse>({ text: unparsedOutput(error) ?? "" })
      )
    )

/**
 * A model's calls: the provider's narrow interface when it offers one, else `LanguageModel`.
 *
 * @since 0.1.0
 * @category utils
 */
export const clientOf = (
  label: ModelCall["model"],
  model: LanguageModel.Service,
  direct: DirectModel.Service | undefined
): ModelClient => {
  const generate = direct === undefined
    ? generateWith(model)
    : (prompt: string, format: Format) => format === "plan" ? direct.generatePlan(prompt) : direct.generateText(prompt)
  return {
    label,
    generate: (prompt, format) => Effect.mapError(generate(prompt, format), (error) => safeAiError(error)),
    stream: (prompt) => Stream.mapError(model.streamText({ prompt }), (error) => safeAiError(error))
  }
}
