/**
 * One audit event: what one model call (one attempt) was, as the execution
 * record, the log line and the metrics say it — never its prompt or output
 * text, never a key — and what it cost by the price table.
 *
 * The price of a call is looked up by the model id the provider reported
 * (`gpt-4.1-mini-2025-04-14`), then by the model asked for
 * (`ModelIdentity`: `gpt-4.1-mini`), then by the longest table key the
 * reported id extends with a `-` suffix (a dated snapshot of a priced model).
 */
import { Schema } from "effect"
import type { SeenAttempt } from "../../ai/internal/modelRecord.js"
import type { Json, JsonObject } from "../../domain/Json.js"
import { ModelCallOutcome } from "../../domain/ModelCall.js"
import type { AuditConfig, Price } from "./auditOptions.js"

/**
 * Why an event has no cost: no price for its model (`unknown_model`), or no
 * token counts from its provider (`no_usage`: a failed call, a provider
 * that reports none).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CostUnavailable = Schema.Literal("unknown_model", "no_usage")
/**
 * One of the {@link CostUnavailable} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type CostUnavailable = typeof CostUnavailable.Type

/**
 * One model call's audit event. `attempt` counts the attempts of one model
 * within one ask (a retry is the next; the fallback model starts at 1);
 * `sequence` counts the calls of the inference run (the ask and its
 * fallback). Either `cost` (with `currency` and the `price` key it was
 * computed with) or `costUnavailable` is present.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuditEvent = Schema.Struct({
  requestId: Schema.String,
  purpose: Schema.Literal("planning", "synthesis"),
  phase: Schema.optional(Schema.Int),
  /** 0 for the first ask; n for the n-th re-ask after output that was not a plan. */
  reask: Schema.Int,
  sequence: Schema.Int,
  attempt: Schema.Int,
  /** `primary`, or `fallback` when the fallback model was asked. */
  model: Schema.Literal("primary", "fallback"),
  /** The model id the provider reported. */
  modelId: Schema.optional(Schema.String),
  /** The model asked for, when the model's Layer says (`ModelIdentity`). */
  requestedModel: Schema.optional(Schema.String),
  /** `openai`, `anthropic`, … when the model's Layer says. */
  provider: Schema.optional(Schema.String),
  streamed: Schema.Boolean,
  outcome: ModelCallOutcome,
  /** The kind of failure: `timeout`, an HTTP status, the failure's tag. */
  errorType: Schema.optional(Schema.String),
  inputTokens: Schema.optional(Schema.Int),
  outputTokens: Schema.optional(Schema.Int),
  totalTokens: Schema.optional(Schema.Int),
  startedAt: Schema.Finite,
  latencyMs: Schema.Finite,
  cost: Schema.optional(Schema.NonNegative),
  currency: Schema.optional(Schema.String),
  price: Schema.optional(Schema.String),
  costUnavailable: Schema.optional(CostUnavailable)
}).annotations({ identifier: "AuditEvent" })
/**
 * A decoded {@link AuditEvent}.
 *
 * @since 0.1.0
 * @category models
 */
export type AuditEvent = typeof AuditEvent.Type

/** The price table's entry for a call, with its key. */
export const priceOf = (
  config: AuditConfig,
  modelId: string | undefined,
  requestedModel: string | undefined
): readonly [string, Price] | undefined => {
  const { priceKeys, prices } = config
  if (modelId !== undefined && Object.hasOwn(prices, modelId)) return [modelId, prices[modelId]!]
  if (requestedModel !== undefined && Object.hasOwn(prices, requestedModel)) {
    return [requestedModel, prices[requestedModel]!]
  }
  if (modelId === undefined) return undefined
  const key = priceKeys.find((k) => modelId.startsWith(`${k}-`))
  return key === undefined ? undefined : [key, prices[key]!]
}

/** A price per million tokens in millionths of the currency: a whole number for prices of up to 6 decimals. */
const micros = (perMillion: number): number => Math.round(perMillion * 1_000_000)

/**
 * What `input` and `output` tokens cost at `price`, in whole numbers until
 * one last division — so `0.4` and `1.6` per million give `0.0012` for
 * 1,000 + 500 tokens, not `0.0012000000000000001`. Prices count to 6
 * decimals (a millionth of the currency per million tokens).
 */
export const costOf = (price: Price, input: number, output: number): number =>
  (input * micros(price.inputPerMillion) + output * micros(price.outputPerMillion)) / 1e12

/** The audit event of an attempt, the `sequence`-th call of its run. */
export const eventOf = (
  config: AuditConfig,
  requestId: string,
  sequence: number,
  seen: SeenAttempt
): AuditEvent => {
  const requestedModel = seen.identity?.model
  const input = seen.usage?.inputTokens
  const output = seen.usage?.outputTokens
  const total = seen.usage?.totalTokens ?? (input !== undefined && output !== undefined ? input + output : undefined)
  const price = priceOf(config, seen.modelId, requestedModel)
  const cost = price === undefined
    ? { costUnavailable: "unknown_model" as const }
    : input === undefined || output === undefined
    ? { costUnavailable: "no_usage" as const }
    : { cost: costOf(price[1], input, output), currency: config.currency, price: price[0] }
  return {
    requestId,
    purpose: seen.purpose,
    ...(seen.phase === undefined ? {} : { phase: seen.phase }),
    reask: seen.reask,
    sequence,
    attempt: seen.attempt,
    model: seen.model,
    ...(seen.modelId === undefined ? {} : { modelId: seen.modelId }),
    ...(requestedModel === undefined ? {} : { requestedModel }),
    ...(seen.identity === undefined ? {} : { provider: seen.identity.provider }),
    streamed: seen.streamed,
    outcome: seen.outcome,
    ...(seen.errorType === undefined ? {} : { errorType: seen.errorType }),
    ...(input === undefined ? {} : { inputTokens: input }),
    ...(output === undefined ? {} : { outputTokens: output }),
    ...(total === undefined ? {} : { totalTokens: total }),
    startedAt: seen.startedAt,
    latencyMs: seen.durationMs,
    ...cost
  }
}

/** The event as JSON: the effect's data and the log line's annotations (its fields are JSON already). */
export const fieldsOf = (event: AuditEvent): JsonObject => {
  const fields: Record<string, Json> = {}
  for (const [key, value] of Object.entries(event)) {
    if (value !== undefined) fields[key] = value
  }
  return fields
}

/** A one-line summary for the record's effect. */
export const summaryOf = (event: AuditEvent): string => {
  const who = event.modelId ?? event.requestedModel ?? "unknown model"
  const tokens = event.inputTokens === undefined && event.outputTokens === undefined
    ? "no usage"
    : `${event.inputTokens ?? "?"} in / ${event.outputTokens ?? "?"} out tokens`
  const cost = event.cost === undefined
    ? `no cost (${event.costUnavailable ?? "unknown_model"})`
    : `${event.cost} ${event.currency ?? ""}`.trim()
  return `${event.purpose} call ${event.sequence} (${event.model} ${who}): ${event.outcome}, ${tokens}, ${cost}`
}
