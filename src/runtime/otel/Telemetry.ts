/**
 * OTLP/HTTP export of the pipeline's spans and metrics (seed 000 §9
 * "Telemetry", DESIGN §7), through `@effect/opentelemetry`'s OTLP exporters
 * — JSON over `@effect/platform`'s fetch client, no OpenTelemetry SDK.
 * Import it from `effect-agent-pipeline/otel` (it needs
 * `@effect/opentelemetry` and `@effect/platform` installed).
 *
 * {@link layerConfig} reads the standard variables:
 *
 * | variable | meaning | default |
 * | --- | --- | --- |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL; `/v1/traces` and `/v1/metrics` are appended | unset: nothing is exported |
 * | `OTEL_SERVICE_NAME` | the resource's `service.name` | `effect-agent-pipeline` |
 * | `OTEL_EXPORTER_OTLP_HEADERS` | `key=value,…` sent with every export (URL-encoded values) | none |
 * | `OTEL_SDK_DISABLED` | `true` turns export off | `false` |
 * | `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_VERSION` | more resource attributes | none |
 *
 * With no endpoint it is `Layer.empty`: no tracer is installed, so the
 * pipeline makes no spans and records no hook-run metrics (see
 * `PipelineMetrics`), and nothing is sent. With one, it installs a tracer
 * that batches spans (sent every 5 seconds) and exports the whole metric
 * registry (every 10 seconds); closing the Layer's scope sends what is left
 * (bounded by `shutdownTimeout`, 3 seconds by default). An unreachable
 * collector never fails the program: the exporters retry in the
 * background, then pause for a minute; only the last export, at shutdown,
 * is waited for (up to `shutdownTimeout`).
 *
 * A metric's unit is sent in OTLP's `unit` field only: Effect carries it as
 * a `unit` (or `time_unit`) tag, which the exporter would also send as an
 * attribute of every data point; here it is not (`server.port` tags go as
 * integers, as the semantic conventions type them).
 *
 * @since 0.1.0
 */
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpBody from "@effect/platform/HttpBody"
import { Config, ConfigError, type Duration, Effect, Either, Layer, Option, Redacted } from "effect"

/**
 * The `service.name` when `OTEL_SERVICE_NAME` is unset.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultServiceName = "effect-agent-pipeline"

/**
 * Where and how to export.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExportOptions {
  /** The collector's base URL (`http://localhost:4318`); the signal paths are appended. */
  readonly endpoint: string
  /** The resource's `service.name` (default `effect-agent-pipeline`). */
  readonly serviceName?: string | undefined
  /** Headers sent with every export (an API key: keep it `Redacted`). */
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted>> | undefined
  /** How often batched spans are sent (default 5 seconds). */
  readonly tracesInterval?: Duration.DurationInput | undefined
  /** How often the metric registry is sent (default 10 seconds). */
  readonly metricsInterval?: Duration.DurationInput | undefined
  /** How long closing the Layer waits for the last export (default 3 seconds). */
  readonly shutdownTimeout?: Duration.DurationInput | undefined
}

/** Tags that are how Effect carries a metric's unit: sent as the unit, not as attributes. */
const unitTags: ReadonlySet<string> = new Set(["unit", "time_unit"])

/** Tags the semantic conventions type as integers (Effect's tags are strings). */
const intTags: ReadonlySet<string> = new Set(["server.port"])

type Json = Readonly<Record<string, unknown>>

const isJson = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const arrayAt = (json: Json, key: string): ReadonlyArray<unknown> => {
  const value = json[key]
  return Array.isArray(value) ? value : []
}

/** A data point's attributes without the unit tags, integer tags as integers. */
const conventionalAttribute = (attribute: unknown): ReadonlyArray<unknown> => {
  if (!isJson(attribute) || typeof attribute.key !== "string") return [attribute]
  if (unitTags.has(attribute.key)) return []
  const value = isJson(attribute.value) ? attribute.value.stringValue : undefined
  if (intTags.has(attribute.key) && typeof value === "string" && /^\d+$/.test(value)) {
    return [{ key: attribute.key, value: { intValue: Number(value) } }]
  }
  return [attribute]
}

const pointKinds = ["sum", "gauge", "histogram", "exponentialHistogram", "summary"] as const

const conventionalMetric = (metric: unknown): unknown => {
  if (!isJson(metric)) return metric
  const out: Record<string, unknown> = { ...metric }
  for (const kind of pointKinds) {
    const data = metric[kind]
    if (!isJson(data)) continue
    out[kind] = {
      ...data,
      dataPoints: arrayAt(data, "dataPoints").map((point) =>
        isJson(point) ? { ...point, attributes: arrayAt(point, "attributes").flatMap(conventionalAttribute) } : point
      )
    }
  }
  return out
}

/**
 * An OTLP metrics export body as the conventions want it: no `unit` /
 * `time_unit` attribute on any data point (the metric's `unit` field,
 * which `@effect/opentelemetry` fills from that tag, keeps it), and
 * `server.port` as an integer.
 */
const conventionalMetrics = (body: unknown): unknown => {
  if (!isJson(body)) return body
  return {
    ...body,
    resourceMetrics: arrayAt(body, "resourceMetrics").map((rm) =>
      isJson(rm)
        ? {
          ...rm,
          scopeMetrics: arrayAt(rm, "scopeMetrics").map((sm) =>
            isJson(sm) ? { ...sm, metrics: arrayAt(sm, "metrics").map(conventionalMetric) } : sm
          )
        }
        : rm
    )
  }
}

/** OTLP/JSON, metrics made conventional ({@link conventionalMetrics}). */
const serialization = Layer.succeed(OtlpSerialization.OtlpSerialization, {
  traces: (data) => HttpBody.unsafeJson(data),
  metrics: (data) => HttpBody.unsafeJson(conventionalMetrics(data)),
  logs: (data) => HttpBody.unsafeJson(data)
})

/** `base` + `path`, whether or not `base` ends with a slash. */
const signalUrl = (base: string, path: "/v1/traces" | "/v1/metrics"): string => `${base.replace(/\/+$/, "")}${path}`

/**
 * Exports spans and metrics to `options.endpoint`. The tracer it installs
 * applies to everything the Layer is provided to: provide it around the
 * program (outside the agent's Layer, so the agent's own finalizers are
 * traced and the last export happens after them).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Pipeline } from "effect-agent-pipeline"
 * import * as Telemetry from "effect-agent-pipeline/otel"
 *
 * const program = Effect.flatMap(Pipeline.Pipeline, (pipeline) => pipeline.process({ request: "weather in Paris" }))
 * const traced = program.pipe(
 *   Effect.provide(Agent.layerOffline({ tools: [] })),
 *   Effect.provide(Telemetry.layer({ endpoint: "http://localhost:4318", serviceName: "desk-agent" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ExportOptions): Layer.Layer<never> => {
  const resource = { serviceName: options.serviceName ?? defaultServiceName }
  const headers = options.headers === undefined
    ? undefined
    : Object.fromEntries(
      Object.entries(options.headers).map((
        [key, value]
      ) => [key, Redacted.isRedacted(value) ? Redacted.value(value) : value])
    )
  return Layer.mergeAll(
    OtlpTracer.layer({
      url: signalUrl(options.endpoint, "/v1/traces"),
      resource,
      headers,
      exportInterval: options.tracesInterval,
      shutdownTimeout: options.shutdownTimeout
    }),
    OtlpMetrics.layer({
      url: signalUrl(options.endpoint, "/v1/metrics"),
      resource,
      headers,
      exportInterval: options.metricsInterval,
      shutdownTimeout: options.shutdownTimeout
    })
  ).pipe(Layer.provide(Layer.merge(serialization, FetchHttpClient.layer)))
}

/** An http(s) URL, or why not. */
const httpUrl = (text: string): Either.Either<string, string> => {
  try {
    const url = new URL(text)
    return url.protocol === "http:" || url.protocol === "https:"
      ? Either.right(text)
      : Either.left(`expected an http(s) URL, got protocol ${url.protocol}`)
  } catch {
    return Either.left("expected an http(s) URL")
  }
}

/** `key=value,key2=value2` (values URL-encoded), as OpenTelemetry's SDKs read it. */
const parseHeaders = (text: string): Either.Either<Record<string, Redacted.Redacted>, string> => {
  const headers: Record<string, Redacted.Redacted> = {}
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue
    const at = pair.indexOf("=")
    if (at <= 0) return Either.left("expected key=value pairs separated by commas")
    try {
      headers[pair.slice(0, at).trim()] = Redacted.make(decodeURIComponent(pair.slice(at + 1).trim()))
    } catch {
      return Either.left(`header ${pair.slice(0, at).trim()} has a malformed URL-encoded value`)
    }
  }
  return Either.right(headers)
}

/**
 * The export settings from configuration: `None` when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is unset or empty, or `OTEL_SDK_DISABLED`
 * is `true`.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import * as Telemetry from "effect-agent-pipeline/otel"
 *
 * const where = Effect.map(Telemetry.settings, Option.match({
 *   onNone: () => "telemetry off",
 *   onSome: (options) => `exporting to ${options.endpoint} as ${options.serviceName}`
 * }))
 * ```
 *
 * @since 0.1.0
 * @category config
 */
export const settings: Config.Config<Option.Option<ExportOptions>> = Config.all({
  endpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault(defaultServiceName)),
  headers: Config.option(Config.redacted("OTEL_EXPORTER_OTLP_HEADERS")),
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false))
}).pipe(
  Config.mapOrFail(({ disabled, endpoint, headers, serviceName }) => {
    const base = Option.filter(Option.map(endpoint, (e) => e.trim()), (e) => e.length > 0)
    if (disabled || Option.isNone(base)) return Either.right(Option.none())
    const url = httpUrl(base.value)
    if (Either.isLeft(url)) return Either.left(ConfigError.InvalidData(["OTEL_EXPORTER_OTLP_ENDPOINT"], url.left))
    const parsed = Option.isSome(headers) ? parseHeaders(Redacted.value(headers.value)) : Either.right(undefined)
    if (Either.isLeft(parsed)) return Either.left(ConfigError.InvalidData(["OTEL_EXPORTER_OTLP_HEADERS"], parsed.left))
    const options: ExportOptions = { endpoint: url.right, serviceName, headers: parsed.right }
    return Either.right(Option.some(options))
  })
)

/**
 * {@link layer} when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else
 * `Layer.empty` (see {@link settings}). Fails with a `ConfigError` when the
 * endpoint or the headers are malformed.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { Agent, Pipeline } from "effect-agent-pipeline"
 * import * as Telemetry from "effect-agent-pipeline/otel"
 *
 * // OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 node main.js
 * const program = Effect.flatMap(Pipeline.Pipeline, (pipeline) => pipeline.process({ request: "weather in Paris" }))
 * program.pipe(
 *   Effect.provide(Agent.layerOffline({ tools: [] })),
 *   Effect.provide(Telemetry.layerConfig),
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(settings, Option.match({ onNone: () => Layer.empty, onSome: layer }))
)
