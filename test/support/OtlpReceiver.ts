/**
 * A local OTLP/HTTP receiver for tests: an HTTP server on 127.0.0.1 (port 0)
 * accepting `POST /v1/traces` and `POST /v1/metrics` with JSON bodies (the
 * OTLP JSON encoding, as `@effect/opentelemetry`'s exporters send it),
 * keeping every decoded export. Anything else gets a 404 and is counted, so
 * a test can also assert that nothing was sent at all. A body that does not
 * decode gets a 400 and is kept as a rejection.
 *
 * The server runs with tracing disabled: it never adds spans of its own to
 * what it receives.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { ServeError } from "@effect/platform/HttpServerError"
import { Effect, Option, Schema, type Scope } from "effect"
import { createServer } from "node:http"

/** An OTLP attribute value (the scalar kinds the exporters send). */
const AnyValue = Schema.Struct({
  stringValue: Schema.optional(Schema.NullOr(Schema.String)),
  boolValue: Schema.optional(Schema.NullOr(Schema.Boolean)),
  intValue: Schema.optional(Schema.NullOr(Schema.Union(Schema.Number, Schema.String))),
  doubleValue: Schema.optional(Schema.NullOr(Schema.Number))
})

const KeyValue = Schema.Struct({ key: Schema.String, value: AnyValue })
const Attributes = Schema.Array(KeyValue)

const Resource = Schema.Struct({ attributes: Attributes })

const SpanEvent = Schema.Struct({
  name: Schema.String,
  attributes: Schema.optionalWith(Attributes, { default: () => [] })
})

const Span = Schema.Struct({
  traceId: Schema.String,
  spanId: Schema.String,
  parentSpanId: Schema.optional(Schema.String),
  name: Schema.String,
  kind: Schema.optional(Schema.Number),
  startTimeUnixNano: Schema.String,
  endTimeUnixNano: Schema.String,
  attributes: Attributes,
  events: Schema.optionalWith(Schema.Array(SpanEvent), { default: () => [] }),
  status: Schema.Struct({ code: Schema.Number, message: Schema.optional(Schema.String) })
})

/** The body of `POST /v1/traces`. */
export const TraceExport = Schema.Struct({
  resourceSpans: Schema.Array(Schema.Struct({
    resource: Resource,
    scopeSpans: Schema.Array(Schema.Struct({ spans: Schema.Array(Span) }))
  }))
})

const NumberPoint = Schema.Struct({
  attributes: Attributes,
  asInt: Schema.optional(Schema.Number),
  asDouble: Schema.optional(Schema.NullOr(Schema.Number))
})

const HistogramPoint = Schema.Struct({
  attributes: Attributes,
  count: Schema.Number,
  sum: Schema.Number,
  explicitBounds: Schema.optional(Schema.Array(Schema.Number))
})

const MetricData = Schema.Struct({
  name: Schema.String,
  unit: Schema.optional(Schema.String),
  sum: Schema.optional(Schema.Struct({ dataPoints: Schema.Array(NumberPoint), isMonotonic: Schema.Boolean })),
  gauge: Schema.optional(Schema.Struct({ dataPoints: Schema.Array(NumberPoint) })),
  histogram: Schema.optional(Schema.Struct({ dataPoints: Schema.Array(HistogramPoint) }))
})

/** The body of `POST /v1/metrics`. */
export const MetricsExport = Schema.Struct({
  resourceMetrics: Schema.Array(Schema.Struct({
    resource: Resource,
    scopeMetrics: Schema.Array(Schema.Struct({ metrics: Schema.Array(MetricData) }))
  }))
})

/** A received span, flattened: its attributes and events' attributes as plain records. */
export interface ReceivedSpan {
  readonly serviceName: string | undefined
  readonly traceId: string
  readonly spanId: string
  /** `undefined` for a root span (an absent or empty parent id). */
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  readonly events: ReadonlyArray<
    { readonly name: string; readonly attributes: Readonly<Record<string, string | number | boolean>> }
  >
  readonly statusCode: number
  /** OTLP's span kind: 1 internal, 2 server, 3 client (0 when unspecified). */
  readonly kind: number
  /** The start time, in Unix nanoseconds. */
  readonly startNanos: bigint
}

/** OTLP span kinds. */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const

/** OTLP status codes: 0 unset, 1 ok, 2 error. */
export const StatusCode = { unset: 0, ok: 1, error: 2 } as const

/** A received metric data point, flattened. */
export interface ReceivedPoint {
  readonly serviceName: string | undefined
  readonly metric: string
  readonly unit: string | undefined
  readonly kind: "sum" | "gauge" | "histogram"
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** A sum's or gauge's value; a histogram's sample count. */
  readonly value: number
  /** A histogram's sum of samples. */
  readonly sum?: number | undefined
  /** A histogram's explicit bucket bounds. */
  readonly bounds?: ReadonlyArray<number> | undefined
}

/** A request as it arrived. */
export interface ReceivedRequest {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/** The receiver, while its scope is open. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  readonly traceExports: () => ReadonlyArray<typeof TraceExport.Type>
  readonly metricsExports: () => ReadonlyArray<typeof MetricsExport.Type>
  /** Every span received, in arrival order. */
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** The data points of the latest metrics export (metrics are cumulative: the latest holds them all). */
  readonly latestPoints: () => ReadonlyArray<ReceivedPoint>
  /** Every request that arrived, on any path, with its headers. */
  readonly requests: () => ReadonlyArray<ReceivedRequest>
  /** Bodies that did not decode, with the decode error. */
  readonly rejected: () => ReadonlyArray<string>
}

const valueOf = (value: typeof AnyValue.Type): string | number | boolean => {
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue
  if (value.intValue !== undefined && value.intValue !== null) return Number(value.intValue)
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue
  return ""
}

/** Attributes as a record. */
export const attributesOf = (attributes: typeof Attributes.Type): Readonly<Record<string, string | number | boolean>> =>
  Object.fromEntries(attributes.map((kv) => [kv.key, valueOf(kv.value)]))

const serviceNameOf = (resource: typeof Resource.Type): string | undefined => {
  const name = attributesOf(resource.attributes)["service.name"]
  return typeof name === "string" ? name : undefined
}

/** Starts the receiver on 127.0.0.1 (a free port); it stops when the scope closes. */
export const make: Effect.Effect<OtlpReceiver, ServeError, Scope.Scope> = Effect.gen(function*() {
  const traceExports: Array<typeof TraceExport.Type> = []
  const metricsExports: Array<typeof MetricsExport.Type> = []
  const requests: Array<ReceivedRequest> = []
  const rejected: Array<string> = []

  const accept = <A, I>(schema: Schema.Schema<A, I>, into: Array<A>) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      request.json.pipe(
        Effect.flatMap(Schema.decodeUnknown(schema)),
        Effect.match({
          onFailure: (error) => {
            rejected.push(`${request.url}: ${String(error)}`)
            return HttpServerResponse.text("malformed OTLP JSON", { status: 400 })
          },
          onSuccess: (body) => {
            into.push(body)
            return HttpServerResponse.unsafeJson({})
          }
        })
      ))

  const router = HttpRouter.empty.pipe(
    HttpRouter.post("/v1/traces", accept(TraceExport, traceExports)),
    HttpRouter.post("/v1/metrics", accept(MetricsExport, metricsExports))
  )
  const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    requests.push({ method: request.method, url: request.url, headers: { ...request.headers } })
    return router
  })

  const server = yield* NodeHttpServer.make(() => createServer(), { host: "127.0.0.1", port: 0 })
  // Request fibers inherit the fiber refs of this call: no spans of their own.
  yield* server.serve(app).pipe(Effect.withTracerEnabled(false))
  const address = server.address
  if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("the OTLP receiver is not on TCP")

  return {
    url: `http://127.0.0.1:${address.port}`,
    traceExports: () => traceExports,
    metricsExports: () => metricsExports,
    spans: () =>
      traceExports.flatMap((body) =>
        body.resourceSpans.flatMap((rs) =>
          rs.scopeSpans.flatMap((ss) =>
            ss.spans.map((span): ReceivedSpan => ({
              serviceName: serviceNameOf(rs.resource),
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
              name: span.name,
              attributes: attributesOf(span.attributes),
              events: span.events.map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
              statusCode: span.status.code,
              kind: span.kind ?? 0,
              startNanos: BigInt(span.startTimeUnixNano)
            }))
          )
        )
      ),
    latestPoints: () =>
      Option.match(Option.fromNullable(metricsExports.at(-1)), {
        onNone: () => [],
        onSome: (body) =>
          body.resourceMetrics.flatMap((rm) =>
            rm.scopeMetrics.flatMap((sm) =>
              sm.metrics.flatMap((metric): ReadonlyArray<ReceivedPoint> => {
                const base = { serviceName: serviceNameOf(rm.resource), metric: metric.name, unit: metric.unit }
                const numbers = (kind: "sum" | "gauge", points: ReadonlyArray<typeof NumberPoint.Type>) =>
                  points.map((point): ReceivedPoint => ({
                    ...base,
                    kind,
                    attributes: attributesOf(point.attributes),
                    value: point.asInt ?? point.asDouble ?? 0
                  }))
                return [
                  ...numbers("sum", metric.sum?.dataPoints ?? []),
                  ...numbers("gauge", metric.gauge?.dataPoints ?? []),
                  ...(metric.histogram?.dataPoints ?? []).map((point): ReceivedPoint => ({
                    ...base,
                    kind: "histogram",
                    attributes: attributesOf(point.attributes),
                    value: point.count,
                    sum: point.sum,
                    bounds: point.explicitBounds
                  }))
                ]
              })
            )
          )
      }),
    requests: () => requests,
    rejected: () => rejected
  } satisfies OtlpReceiver
})
