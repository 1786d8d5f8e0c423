/**
 * The built-in audit of model calls (issue 23, seed 004 "Audit Logging"):
 * one audit event per model call — each attempt: retries, re-asks and the
 * fallback model count as calls — on every model path (offline, scripted,
 * OpenAI, Anthropic, buffered or streamed). An event says which model
 * (`primary` / `fallback`, the id the provider reported, the model asked
 * for and the provider when the model's Layer says), what for (`planning`
 * with its phase, `synthesis`), the tokens, the latency, a cost estimate
 * from a price table (a model the table does not price has no cost, and
 * the event says so) and the outcome (`succeeded`, `failed`, `timed_out`,
 * `interrupted`) — never the prompt or the output, never a key.
 *
 * Each event is delivered three ways:
 * 1. an effect of the hook's run in the execution record
 *    (`model_call_1`, `model_call_2`, … per inference run);
 * 2. one log line through Effect's `Logger` (`model call`, the event's
 *    fields as annotations);
 * 3. the metrics {@link calls}, {@link callDuration} and {@link cost}
 *    (tokens: `PipelineMetrics.tokenUsage`, recorded for every call).
 *
 * With recording off (`recording: false`) the log line and the metrics
 * remain. Without the hook, model calls pay nothing for it.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { Hook } from "../pipeline/Hook.js"
import { make } from "./internal/auditHook.js"
import { configOf, type InvalidAuditOptions, type Options } from "./internal/auditOptions.js"

/**
 * The options, the price table and their Schemas, and the error of options that do not decode.
 *
 * @since 0.1.0
 * @category schemas
 */
export { InvalidAuditOptions, Options, Price, PriceTable, PriceTableFromJson } from "./internal/auditOptions.js"

/**
 * One audit event, and why one may have no cost.
 *
 * @since 0.1.0
 * @category schemas
 */
export { AuditEvent, CostUnavailable } from "./internal/auditEvent.js"

/**
 * The audit metrics: calls by model and outcome, their latency, their cost.
 *
 * @since 0.1.0
 * @category metrics
 */
export { callDuration, calls, cost } from "./internal/auditMetrics.js"

/**
 * The message of the audit log line, and the effect id of the n-th call of an inference run.
 *
 * @since 0.1.0
 * @category constants
 */
export { effectIdOf, logMessage } from "./internal/auditHook.js"

/**
 * The audit hook (an Around observer of `inference`), its options decoded
 * — from values or from JSON — or `InvalidAuditOptions` naming the one
 * that is not valid.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Agent, Audit } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   hooks: Effect.map(
 *     Audit.hook({ prices: { "gpt-4.1-mini": { inputPerMillion: 0.4, outputPerMillion: 1.6 } } }),
 *     (audit) => [audit]
 *   )
 * })
 *
 * // The price table from configuration, as JSON text.
 * const fromConfig = Effect.flatMap(
 *   Schema.Config("MODEL_PRICES", Audit.PriceTableFromJson),
 *   (prices) => Audit.hook({ prices })
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const hook: (options?: Options) => Effect.Effect<Hook, InvalidAuditOptions> = Effect.fn("Audit.hook")(
  function*(options?: Options) {
    return make(yield* configOf(options))
  }
)
