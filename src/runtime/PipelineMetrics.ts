/**
 * The pipeline's metrics (seed 000 §9 "Telemetry"), with OpenTelemetry-style
 * names, in Effect's global metric registry — where any metrics exporter
 * reads them (`effect-agent-pipeline/otel` exports them over OTLP):
 *
 * | metric | kind | unit | tags |
 * | --- | --- | --- | --- |
 * | `pipeline.request.duration` | histogram | `ms` | `pipeline.mode`, `pipeline.request.outcome` |
 * | `pipeline.hook.duration` | histogram | `ms` | `pipeline.hook.name`, `pipeline.hook.stage`, `pipeline.operation` (operation hooks), `pipeline.hook.outcome` |
 * | `pipeline.tool.calls` | counter | `{call}` | `pipeline.tool.name`, `pipeline.tool.outcome` |
 * | `pipeline.tool.duration` | histogram | `ms` | `pipeline.tool.name`, `pipeline.tool.outcome` |
 * | `gen_ai.client.token.usage` | histogram | `{token}` | `gen_ai.operation.name`, `gen_ai.token.type`, `pipeline.inference.purpose`; when known `gen_ai.provider.name`, `gen_ai.request.model` (asked for), `gen_ai.response.model` (answered), `server.address`, `server.port` |
 * | `gen_ai.client.operation.duration` | histogram | `s` | `gen_ai.operation.name`, `pipeline.inference.purpose` (asks), `error.type` (failed); when known `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`, `server.address`, `server.port` |
 *
 * The two `gen_ai.*` metrics (the GenAI semantic conventions') are defined
 * in `internal/genAiMetrics.ts` and re-exported here.
 *
 * In Effect's registry every series also carries a `unit` tag: Effect's
 * metric keys have no unit of their own, and `@effect/opentelemetry`'s
 * exporters read a metric's unit from that tag. `effect-agent-pipeline/otel`
 * sends it as the metric's unit only, not as a data point attribute. The
 * short-circuit counter, `orchestration.pipeline.short_circuit.decision`,
 * stays in `ShortCircuit` (C17).
 *
 * Cost: tag sets are built once (per subscription, per tool, per mode and
 * outcome) and metrics are updated synchronously — no Effect step on the
 * hot path. A hook run's duration is recorded only while its span is made
 * (a tracer collects spans — see `internal/spans.ts`), so with no exporter
 * the per-hook path does no metric work at all; request, tool and GenAI
 * metrics are per request and always recorded.
 *
 * @since 0.1.0
 */
import { Metric } from "effect"
import { type HookPoint, transformOperation, TransformPoint } from "../domain/HookPoint.js"
import { type Operation, operations } from "../domain/Operation.js"
import { cacheOf, callsUnit, type Labels, labels, millisecondBounds, millisecondsUnit } from "./internal/metricParts.js"

/**
 * How long a request took, from its start to its finalized record, in
 * milliseconds. Tags: `pipeline.mode` (`pipeline`, `stream`, `resume`,
 * `workflow`) and `pipeline.request.outcome` (`succeeded`, `suspended`,
 * `rejected`, `failed`, `interrupted`).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { PipelineMetrics } from "effect-agent-pipeline"
 *
 * // The state of one series: its tags, the unit tag included (Effect's registry keeps the unit as a tag).
 * const succeeded = Metric.value(
 *   PipelineMetrics.requestDuration.pipe(
 *     Metric.tagged("pipeline.mode", "pipeline"),
 *     Metric.tagged("pipeline.request.outcome", "succeeded"),
 *     Metric.tagged("unit", "ms")
 *   )
 * )
 * const report = Effect.map(succeeded, (state) => `${state.count} requests, ${state.sum.toFixed(1)} ms in all`)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const requestDuration = Metric.histogram(
  "pipeline.request.duration",
  millisecondBounds,
  "Duration of pipeline requests, by mode and outcome"
)

/**
 * How long a hook run took, in milliseconds (the duration its record entry
 * carries). Tags: `pipeline.hook.name`, `pipeline.hook.stage` (the point:
 * `before_planning`, `guard_tool_call`, …), `pipeline.operation` (operation
 * hooks only) and `pipeline.hook.outcome` (`succeeded`, `failed`,
 * `pending`). Recorded for runs that are spanned (see the module header).
 *
 * @since 0.1.0
 * @category metrics
 */
export const hookDuration = Metric.histogram(
  "pipeline.hook.duration",
  millisecondBounds,
  "Duration of hook runs, by hook, point, operation and outcome"
)

/**
 * Tool calls of plan steps. Tags: `pipeline.tool.name`
 * (`namespace/agent/capability`) and `pipeline.tool.outcome` (`succeeded`,
 * `failed`, `denied`). A step skipped because a dependency did not succeed
 * calls no tool and is not counted.
 *
 * @since 0.1.0
 * @category metrics
 */
export const toolCalls = Metric.counter("pipeline.tool.calls", {
  description: "Tool calls of plan steps, by tool and outcome",
  incremental: true
})

/**
 * How long a step's tool call took, in milliseconds; the tags of
 * {@link toolCalls}.
 *
 * @since 0.1.0
 * @category metrics
 */
export const toolDuration = Metric.histogram(
  "pipeline.tool.duration",
  millisecondBounds,
  "Duration of tool calls of plan steps, by tool and outcome"
)

/**
 * The outcome of a request as {@link requestDuration} tags it.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestOutcome = "succeeded" | "suspended" | "rejected" | "failed" | "interrupted"

const requestLabels = cacheOf(64)

/**
 * Records one request's duration now (synchronously: call it from inside a
 * running effect). The pipeline calls it when a request's record is
 * finalized; a custom request path may too.
 *
 * @since 0.1.0
 * @category utils
 */
export const unsafeRecordRequest = (mode: string, outcome: RequestOutcome, durationMillis: number): void =>
  requestDuration.unsafeUpdate(
    durationMillis,
    requestLabels(
      `${mode}\u0000${outcome}`,
      () => labels(millisecondsUnit, [["pipeline.mode", mode], ["pipeline.request.outcome", outcome]])
    )
  )

/**
 * The outcome of a hook run as {@link hookDuration} tags it (its record
 * entry's `outcome`).
 *
 * @since 0.1.0
 * @category models
 */
export type HookOutcome = "succeeded" | "failed" | "pending" | "skipped"

/**
 * One subscription's tag sets, one per outcome: built once, when the
 * subscription is (see `Subscription.build`).
 *
 * @since 0.1.0
 * @category models
 */
export type HookRunLabels = Readonly<Record<HookOutcome, Labels>>

/** The operation of every operation point (the four stages have none). */
const pointOperation: ReadonlyMap<string, Operation> = new Map([
  ...operations.flatMap((operation) =>
    [[`around_${operation}`, operation], [`guard_${operation}`, operation]] as const
  ),
  ...TransformPoint.literals.map((point) => [point, transformOperation[point]] as const)
])

/**
 * The tag sets of a hook's runs at a point.
 *
 * @since 0.1.0
 * @category constructors
 */
export const hookRunLabels = (hookName: string, point: HookPoint): HookRunLabels => {
  const operation = pointOperation.get(point)
  const base: Array<readonly [string, string]> = [["pipeline.hook.name", hookName], ["pipeline.hook.stage", point]]
  if (operation !== undefined) base.push(["pipeline.operation", operation])
  const of = (outcome: HookOutcome) => labels(millisecondsUnit, [...base, ["pipeline.hook.outcome", outcome]])
  return Object.freeze({
    succeeded: of("succeeded"),
    failed: of("failed"),
    pending: of("pending"),
    skipped: of("skipped")
  })
}

/**
 * Records one hook run's duration now (synchronously).
 *
 * @since 0.1.0
 * @category utils
 */
export const unsafeRecordHookRun = (runLabels: HookRunLabels, outcome: HookOutcome, durationMillis: number): void =>
  hookDuration.unsafeUpdate(durationMillis, runLabels[outcome])

/**
 * How a step's tool call ended, as {@link toolCalls} tags it.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolOutcome = "succeeded" | "failed" | "denied"

const toolLabels = cacheOf(4_096)

/**
 * Records one tool call (its count and its duration) now (synchronously).
 * `tool` is `namespace/agent/capability`.
 *
 * @since 0.1.0
 * @category utils
 */
export const unsafeRecordToolCall = (tool: string, outcome: ToolOutcome, durationMillis: number): void => {
  const tags = toolLabels(
    `${tool}\u0000${outcome}`,
    () => labels(callsUnit, [["pipeline.tool.name", tool], ["pipeline.tool.outcome", outcome]])
  )
  toolCalls.unsafeUpdate(1, tags)
  // The same series with its own unit.
  toolDuration.unsafeUpdate(
    durationMillis,
    toolLabels(`${tool}\u0000${outcome}\u0000ms`, () => [...tags.slice(0, -1), millisecondsUnit])
  )
}

/**
 * The GenAI client metrics of the semantic conventions:
 * `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`.
 *
 * @since 0.1.0
 * @category metrics
 */
export { operationDuration, tokenUsage } from "./internal/genAiMetrics.js"

/**
 * What a GenAI sample says: the model (`GenAiModel`), and a call's token
 * usage or an operation's duration.
 *
 * @since 0.1.0
 * @category models
 */
export type { GenAiModel, OperationDuration, TokenUsage } from "./internal/genAiMetrics.js"

/**
 * Recording GenAI samples: token usage (a model Layer of your own may
 * report it) and operation durations.
 *
 * @since 0.1.0
 * @category utils
 */
export {
  recordOperationDuration,
  recordTokenUsage,
  unsafeRecordOperationDuration,
  unsafeRecordTokenUsage
} from "./internal/genAiMetrics.js"
