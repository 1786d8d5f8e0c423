/**
 * The audit hook's metrics, in Effect's global registry beside the
 * pipeline's (`PipelineMetrics`): model calls by model and outcome, their
 * latency, and their estimated cost. Token counts are not repeated here:
 * every attempt's tokens are already in `gen_ai.client.token.usage`
 * (`PipelineMetrics.tokenUsage`), audit hook or not.
 *
 * Tags, on all three: `pipeline.inference.purpose` (`planning`,
 * `synthesis`), `pipeline.model.role` (`primary`, `fallback`) and, when
 * known, `gen_ai.provider.name`, `gen_ai.request.model`,
 * `gen_ai.response.model`; calls and latency also `pipeline.model.outcome`
 * (`succeeded`, `failed`, `timed_out`, `interrupted`). Plus the `unit` tag
 * (metricParts.ts): `{call}`, `ms`, and the currency (`{USD}`). Tag sets
 * are cached per series; updates are synchronous.
 */
import { Metric, MetricLabel } from "effect"
import {
  cacheOf,
  callsUnit,
  type Labels,
  labels,
  millisecondBounds,
  millisecondsUnit
} from "../../runtime/internal/metricParts.js"
import type { AuditEvent } from "./auditEvent.js"

/**
 * Model calls (each attempt: retries, re-asks and the fallback count), by
 * purpose, model and outcome (`pipeline.model.calls`, `{call}`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const calls = Metric.counter("pipeline.model.calls", {
  description: "Model calls (attempts), by purpose, model and outcome",
  incremental: true
})

/**
 * How long each model call took, in milliseconds (`pipeline.model.call.duration`);
 * the tags of {@link calls}.
 *
 * @since 0.1.0
 * @category metrics
 */
export const callDuration = Metric.histogram(
  "pipeline.model.call.duration",
  millisecondBounds,
  "Duration of model calls (attempts), by purpose, model and outcome"
)

/**
 * The estimated cost of model calls by the audit's price table, in its
 * currency (`pipeline.model.cost`; unit tag `{USD}` by default). Calls
 * without a cost (unpriced model, no usage) add nothing.
 *
 * @since 0.1.0
 * @category metrics
 */
export const cost = Metric.counter("pipeline.model.cost", {
  description: "Estimated cost of model calls by the audit price table",
  incremental: true
})

type Tags = Array<readonly [string, string]>

/** The tags of an event's series, without its outcome. */
export const modelTags = (event: AuditEvent): Tags => {
  const tags: Tags = [["pipeline.inference.purpose", event.purpose], ["pipeline.model.role", event.model]]
  if (event.provider !== undefined) tags.push(["gen_ai.provider.name", event.provider])
  if (event.requestedModel !== undefined) tags.push(["gen_ai.request.model", event.requestedModel])
  if (event.modelId !== undefined) tags.push(["gen_ai.response.model", event.modelId])
  return tags
}

const keyOf = (tags: Tags): string => tags.map(([k, v]) => `${k}=${v}`).join("\u0000")
const callLabels = cacheOf(1_024)
const durationLabels = cacheOf(1_024)
const costLabels = cacheOf(1_024)

/** Records one event now (synchronously). */
export const unsafeRecord = (event: AuditEvent): void => {
  const model = modelTags(event)
  const tags: Tags = [...model, ["pipeline.model.outcome", event.outcome]]
  const key = keyOf(tags)
  calls.unsafeUpdate(1, callLabels(key, () => labels(callsUnit, tags)))
  if (Number.isFinite(event.latencyMs) && event.latencyMs >= 0) {
    callDuration.unsafeUpdate(event.latencyMs, durationLabels(key, () => labels(millisecondsUnit, tags)))
  }
  if (event.cost !== undefined && event.currency !== undefined) {
    const unit = event.currency
    const costKey = `${keyOf(model)}\u0000${unit}`
    const costTags: Labels = costLabels(costKey, () => labels(MetricLabel.make("unit", `{${unit}}`), model))
    cost.unsafeUpdate(event.cost, costTags)
  }
}
