/**
 * The GenAI client metrics of OpenTelemetry's semantic conventions
 * (v1.41.1, `gen-ai-metrics.md`), as `PipelineMetrics` re-exports them:
 *
 * - `gen_ai.client.token.usage` (histogram, `{token}`): the tokens each
 *   model attempt used, one sample per token type;
 * - `gen_ai.client.operation.duration` (histogram, `s`, required by the
 *   conventions): how long each GenAI operation took — one ask of a model,
 *   its retries included (the unit of a `chat {model}` span), or one
 *   embeddings call — with `error.type` when it failed.
 *
 * Both carry `gen_ai.operation.name` and, when the model's Layer says
 * (`ModelIdentity`), `gen_ai.provider.name`, `gen_ai.request.model`,
 * `server.address` / `server.port`; `gen_ai.response.model` when the
 * server reported it. Tag sets are cached per series (metricParts.ts).
 */
import { Effect, Metric } from "effect"
import { cacheOf, labels, secondBounds, secondsUnit, tokenBounds, tokensUnit } from "./metricParts.js"

/**
 * Tokens a model call used (the GenAI semantic conventions'
 * `gen_ai.client.token.usage`): one sample per token type and call. Tags:
 * `gen_ai.operation.name` (default `chat`), `gen_ai.token.type` (`input`,
 * `output`), `pipeline.inference.purpose` (what the call was for: `plan`,
 * `synthesis`, …) and, when known, `gen_ai.provider.name`,
 * `gen_ai.request.model` (the model asked for), `gen_ai.response.model`
 * (the model the server said answered), `server.address` and `server.port`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const tokenUsage = Metric.histogram(
  "gen_ai.client.token.usage",
  tokenBounds,
  "Number of input and output tokens used by model calls"
)

/**
 * How long a GenAI operation took, in seconds (the GenAI semantic
 * conventions' `gen_ai.client.operation.duration`, with their advised
 * bucket boundaries, 0.01 s to 81.92 s): one sample per ask of a model —
 * its attempts and retries included, as its `chat {model}` span — and per
 * embeddings call. Tags: `gen_ai.operation.name` (`chat`, `embeddings`),
 * `pipeline.inference.purpose` (asks), `error.type` when the operation
 * failed (the value its span gets: `timeout`, the HTTP status, the
 * failure's tag, `_OTHER`) and, when known, `gen_ai.provider.name`,
 * `gen_ai.request.model`, `gen_ai.response.model`, `server.address` and
 * `server.port`. An interrupted operation is not recorded.
 *
 * @since 0.1.0
 * @category metrics
 */
export const operationDuration = Metric.histogram(
  "gen_ai.client.operation.duration",
  secondBounds,
  "GenAI operation duration"
)

/**
 * What the GenAI metrics say about the model a sample is of.
 *
 * @since 0.1.0
 * @category models
 */
export interface GenAiModel {
  /** The model asked for, as the request named it (`gen_ai.request.model`); omitted when unknown. */
  readonly model?: string | undefined
  /** The model the server said answered (`gen_ai.response.model`, e.g. `gpt-4.1-mini-2025-04-14`); omitted when unknown. */
  readonly responseModel?: string | undefined
  /** `openai`, `anthropic`, … (`gen_ai.provider.name`); omitted when unknown. */
  readonly provider?: string | undefined
  /** `gen_ai.operation.name`; default `chat`. */
  readonly operation?: string | undefined
  /** The API's host (`server.address`); omitted when unknown. */
  readonly serverAddress?: string | undefined
  /** The API's port (`server.port`, sent with `server.address`). */
  readonly serverPort?: number | undefined
}

/**
 * One model call's token usage.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenUsage extends GenAiModel {
  /** What the call was for: `plan`, `synthesis`, `embedding`, … (`pipeline.inference.purpose`). */
  readonly purpose: string
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
}

/**
 * One GenAI operation's duration.
 *
 * @since 0.1.0
 * @category models
 */
export interface OperationDuration extends GenAiModel {
  /** How long it took, in seconds. */
  readonly seconds: number
  /** What the ask was for (`pipeline.inference.purpose`); omitted for an embeddings call. */
  readonly purpose?: string | undefined
  /** `error.type` of an operation that failed; omitted when it succeeded. */
  readonly errorType?: string | undefined
}

type Tags = Array<readonly [string, string]>

/** The model's tags, as `[key, value]` pairs (undefined values left out; `server.port` only with `server.address`). */
const modelTags = (model: GenAiModel): Tags => {
  const tags: Tags = []
  const add = (key: string, value: string | number | undefined) => {
    if (value !== undefined) tags.push([key, String(value)])
  }
  add("gen_ai.provider.name", model.provider)
  add("gen_ai.request.model", model.model)
  add("gen_ai.response.model", model.responseModel)
  add("server.address", model.serverAddress)
  if (model.serverAddress !== undefined) add("server.port", model.serverPort)
  return tags
}

const keyOf = (tags: Tags): string => tags.map(([k, v]) => `${k}=${v}`).join("\u0000")

const tokenLabels = cacheOf(1_024)

const recordTokens = (usage: TokenUsage, type: "input" | "output", count: number | undefined): void => {
  if (count === undefined || !Number.isFinite(count) || count < 0) return
  const tags: Tags = [
    ["gen_ai.operation.name", usage.operation ?? "chat"],
    ["gen_ai.token.type", type],
    ["pipeline.inference.purpose", usage.purpose],
    ...modelTags(usage)
  ]
  tokenUsage.unsafeUpdate(count, tokenLabels(keyOf(tags), () => labels(tokensUnit, tags)))
}

/**
 * Records one model call's token usage now (synchronously): one sample of
 * {@link tokenUsage} per token type given. A missing, negative or
 * non-finite count is not recorded (a provider that reports no usage).
 *
 * @example
 * ```ts
 * import { PipelineMetrics } from "effect-agent-pipeline"
 *
 * // The model asked for, and the one the server said answered.
 * const usage = { provider: "openai", model: "gpt-4o-mini", responseModel: "gpt-4o-mini-2024-07-18" }
 * PipelineMetrics.unsafeRecordTokenUsage({ ...usage, purpose: "plan", inputTokens: 812, outputTokens: 64 })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const unsafeRecordTokenUsage = (usage: TokenUsage): void => {
  recordTokens(usage, "input", usage.inputTokens)
  recordTokens(usage, "output", usage.outputTokens)
}

/**
 * {@link unsafeRecordTokenUsage} as an Effect.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PipelineMetrics } from "effect-agent-pipeline"
 *
 * const afterCall = Effect.zipRight(
 *   Effect.log("model answered"),
 *   PipelineMetrics.recordTokenUsage({ model: "claude-sonnet-4", provider: "anthropic", purpose: "synthesis", inputTokens: 1200, outputTokens: 300 })
 * )
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const recordTokenUsage = (usage: TokenUsage): Effect.Effect<void> =>
  Effect.sync(() => unsafeRecordTokenUsage(usage))

const durationLabels = cacheOf(1_024)

/**
 * Records one GenAI operation's duration now (synchronously): one sample
 * of {@link operationDuration}. A negative or non-finite duration is not
 * recorded. The pipeline records every ask of a model and every
 * embeddings call itself; a model path of your own may too.
 *
 * @example
 * ```ts
 * import { PipelineMetrics } from "effect-agent-pipeline"
 *
 * const model = { provider: "openai", model: "gpt-4o-mini", serverAddress: "api.openai.com", serverPort: 443 }
 * PipelineMetrics.unsafeRecordOperationDuration({ ...model, purpose: "plan", seconds: 1.42 })
 * // An ask that failed: its `error.type`.
 * PipelineMetrics.unsafeRecordOperationDuration({ ...model, purpose: "plan", seconds: 0.31, errorType: "429" })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const unsafeRecordOperationDuration = (duration: OperationDuration): void => {
  if (!Number.isFinite(duration.seconds) || duration.seconds < 0) return
  const tags: Tags = [["gen_ai.operation.name", duration.operation ?? "chat"]]
  if (duration.purpose !== undefined) tags.push(["pipeline.inference.purpose", duration.purpose])
  tags.push(...modelTags(duration))
  if (duration.errorType !== undefined) tags.push(["error.type", duration.errorType])
  operationDuration.unsafeUpdate(duration.seconds, durationLabels(keyOf(tags), () => labels(secondsUnit, tags)))
}

/**
 * {@link unsafeRecordOperationDuration} as an Effect.
 *
 * @since 0.1.0
 * @category utils
 */
export const recordOperationDuration = (duration: OperationDuration): Effect.Effect<void> =>
  Effect.sync(() => unsafeRecordOperationDuration(duration))
