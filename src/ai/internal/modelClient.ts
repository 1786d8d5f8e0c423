/**
 * One model's calls, resolved once when the inference seam is built: the
 * provider's narrow interface (`DirectModel`) when it offers one, else
 * `@effect/ai`'s `LanguageModel`. A model's failure is translated once, as
 * it leaves the client: a safe `AiError` (no request headers, no foreign
 * cause; see safeAiError.ts).
 *
 * A client also knows which model it asks, when the model's Layer says so
 * ({@link ModelIdentity}): the provider, the model asked for and the server,
 * as the GenAI semantic conventions name them on spans and metrics (see
 * genAiSpans.ts).
 */
import { type AiError, IdGenerator, type LanguageModel, type Response } from "@effect/ai"
import { Context, Effect, Layer, ParseResult, Stream } from "effect"
import type { ModelCall } from "../../domain/ModelCall.js"
import { type DirectModel, type ModelResponse, PlanRequest, responseOfText } from "../ModelProvider.js"
import { safeAiError } from "./safeAiError.js"
import { unprovidedOf } from "./unprovided.js"

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
  /** Which model this is, when its Layer said ({@link ModelIdentity}). */
  readonly identity: ModelIdentity.Service | undefined
  /** A buffered call: run it with {@link services} in its context. */
  readonly generate: (
    prompt: string,
    format: Format
  ) => Effect.Effect<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>
  /** What {@link generate}'s calls need (the model call's fiber starts with them). */
  readonly services: Context.Context<IdGenerator.IdGenerator>
  readonly stream: (prompt: string) => Stream.Stream<Response.StreamPart<{}>, AiError.AiError>
}

/** The raw text of `generateObject`'s output that was not JSON. */
const unparsedOutput = (error: AiError.AiError): string | undefined => {
  if (error._tag !== "MalformedOutput" || error.module !== "LanguageModel") return undefined
  const cause = error.cause
  return ParseResult.isParseError(cause) && typeof cause.issue.actual === "string" ? cause.issue.actual : undefined
}

/**
 * A buffered call through `LanguageModel`: a plan's text is read even when it is not JSON (the pipeline re-asks).
 *
 * @since 0.1.0
 * @category utils
 */
export const generateWith = (model: LanguageModel.Service) => (prompt: string, format: Format) =>
  format === "text"
    ? Effect.map(model.generateText({ prompt }), responseOfText)
    : model.generateObject({ prompt, schema: PlanRequest, objectName: "routing_plan" }).pipe(
      Effect.map(responseOfText),
      Effect.catchIf(
        (error) => unparsedOutput(error) !== undefined,
        (error) => Effect.succeed<ModelResponse>({ text: unparsedOutput(error) ?? "" })
      )
    )

/** The services of a client whose calls provide their own (or need none). */
const defaultServices = Context.make(IdGenerator.IdGenerator, IdGenerator.defaultIdGenerator)

/**
 * A model's calls: the provider's narrow interface when it offers one, else `LanguageModel`.
 *
 * @since 0.1.0
 * @category utils
 */
export const clientOf = (
  label: ModelCall["model"],
  model: LanguageModel.Service,
  direct: DirectModel.Service | undefined,
  identity?: ModelIdentity.Service | undefined
): ModelClient => {
  const unprovided = direct === undefined ? undefined : unprovidedOf(direct)
  const generate: ModelClient["generate"] = unprovided !== undefined
    ? (prompt, format) => format === "plan" ? unprovided.generatePlan(prompt) : unprovided.generateText(prompt)
    : direct === undefined
    ? generateWith(model)
    : (prompt, format) => format === "plan" ? direct.generatePlan(prompt) : direct.generateText(prompt)
  return {
    label,
    identity,
    services: unprovided?.services ?? defaultServices,
    generate: (prompt, format) => Effect.mapError(generate(prompt, format), (error) => safeAiError(error)),
    stream: (prompt) =>
      Stream.mapError(
        direct?.streamText === undefined ? model.streamText({ prompt }) : direct.streamText(prompt),
        (error) => safeAiError(error)
      )
  }
}

/**
 * Which model a `LanguageModel` Layer serves, for telemetry: a provider
 * Layer adds it beside its `LanguageModel` (`OpenAi.layer`, `Anthropic.layer`,
 * `OpenAiCompat.layer`, the offline and scripted models do). A Layer without
 * one is still served; its calls' spans and metrics then name no provider
 * and no requested model (the GenAI conventions: "if available").
 *
 * @since 0.1.0
 * @category services
 */
export class ModelIdentity extends Context.Tag("effect-agent-pipeline/ModelIdentity")<
  ModelIdentity,
  ModelIdentity.Service
>() {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace ModelIdentity {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** `gen_ai.provider.name`: `openai` (any server speaking OpenAI's APIs), `anthropic`, … */
    readonly provider: string
    /** `gen_ai.request.model`: the model asked for, as the request names it. */
    readonly model: string
    /** `server.address`: the API's host, when it is reached over the network. */
    readonly serverAddress?: string | undefined
    /** `server.port`: the API's port (the scheme's default when the URL names none). */
    readonly serverPort?: number | undefined
  }
}

/**
 * The identity of `model` at `provider`, served from `apiUrl` (its host
 * and port become `server.address` / `server.port`; a URL that does not
 * parse adds neither).
 *
 * @since 0.1.0
 * @category constructors
 */
export const identityOf = (provider: string, model: string, apiUrl?: string | undefined): ModelIdentity.Service => {
  if (apiUrl === undefined) return { provider, model }
  try {
    const url = new URL(apiUrl)
    const port = url.port !== ""
      ? Number(url.port)
      : url.protocol === "https:"
      ? 443
      : url.protocol === "http:"
      ? 80
      : undefined
    // `URL.hostname` keeps an IPv6 address's brackets; the attribute is the bare address.
    const serverAddress = url.hostname.replace(/^\[(.*)\]$/, "$1")
    return port === undefined
      ? { provider, model, serverAddress }
      : { provider, model, serverAddress, serverPort: port }
  } catch {
    return { provider, model }
  }
}

/**
 * `layer` with `identity` beside what it provides (its declared output
 * type unchanged: the identity is read with `Effect.serviceOption`).
 *
 * @since 0.1.0
 * @category layers
 */
export const withIdentity = <ROut, E, RIn>(
  layer: Layer.Layer<ROut, E, RIn>,
  identity: ModelIdentity.Service
): Layer.Layer<ROut | ModelIdentity, E, RIn> => Layer.merge(layer, Layer.succeed(ModelIdentity, identity))
