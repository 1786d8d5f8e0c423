/**
 * In-memory OpenTelemetry tracing for tests.
 *
 * Wiring: `@effect/opentelemetry`'s `Tracer.layer` (which installs an Effect
 * tracer backed by an OTel `Tracer`) over a `BasicTracerProvider` from
 * `@opentelemetry/sdk-trace-base` whose only span processor is a
 * `SimpleSpanProcessor` exporting to an `InMemorySpanExporter`. The provider
 * is handed to `Tracer.layer` through the `OtelTracerProvider` tag, so the
 * Node SDK (`NodeSdk.layer`, which imports `@opentelemetry/sdk-trace-node`,
 * a package this project does not declare) is not needed. Parentage comes
 * from Effect's own span tree, so no OTel context manager is required.
 *
 * A `SimpleSpanProcessor` exports a span synchronously when it ends, so the
 * exporter holds exactly the spans that were ended: a span missing from it
 * was never closed.
 */
import { Resource, Tracer } from "@effect/opentelemetry"
import { SpanStatusCode } from "@opentelemetry/api"
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from "@opentelemetry/sdk-trace-base"
import { Layer } from "effect"

export type { ReadableSpan }

/** A fresh exporter and the Layer that sends every Effect span to it. */
export interface InMemoryTracing {
  /** Provide this to the program under test (it sets the Effect tracer). */
  readonly layer: Layer.Layer<Tracer.OtelTracer>
  /** Every span ended so far, in end order. */
  readonly spans: () => ReadonlyArray<ReadableSpan>
  readonly reset: () => void
}

/** Builds an isolated tracer (one per test: no shared state between tests). */
export const make = (serviceName = "effect-agent-pipeline-test"): InMemoryTracing => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const layer = Tracer.layer.pipe(
    Layer.provide(Layer.succeed(Tracer.OtelTracerProvider, provider)),
    Layer.provide(Resource.layer({ serviceName }))
  )
  return {
    layer,
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset()
  }
}

/** The span's own id. */
export const spanIdOf = (span: ReadableSpan): string => span.spanContext().spanId

/** The span's trace id. */
export const traceIdOf = (span: ReadableSpan): string => span.spanContext().traceId

/** The parent's span id, if any. */
export const parentIdOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId

/** Spans with exactly this name. */
export const named = (spans: ReadonlyArray<ReadableSpan>, name: string): ReadonlyArray<ReadableSpan> =>
  spans.filter((s) => s.name === name)

/** Hook invocation spans (`pipeline.hook.<stage>.<name>`). */
export const hookSpans = (spans: ReadonlyArray<ReadableSpan>): ReadonlyArray<ReadableSpan> =>
  spans.filter((s) => s.name.startsWith("pipeline.hook."))

/**
 * The names of a span's ancestors, nearest first, following parent ids
 * through the exported spans (stops at a parent that was not exported).
 */
export const ancestorsOf = (spans: ReadonlyArray<ReadableSpan>, span: ReadableSpan): ReadonlyArray<ReadableSpan> => {
  const byId = new Map(spans.map((s) => [spanIdOf(s), s] as const))
  const out: Array<ReadableSpan> = []
  let parent = parentIdOf(span)
  const seen = new Set<string>()
  while (parent !== undefined && !seen.has(parent)) {
    seen.add(parent)
    const next = byId.get(parent)
    if (next === undefined) break
    out.push(next)
    parent = parentIdOf(next)
  }
  return out
}

/** Whether the span's status is ERROR. */
export const isError = (span: ReadableSpan): boolean => span.status.code === SpanStatusCode.ERROR

export { SpanStatusCode }

/**
 * The model-call spans (`chat …`, and `LanguageModel.*` should one not be
 * merged) in a form two runs can be compared by: name, kind, status, the
 * attributes (the server's `port` and the time to first chunk, which differ
 * between runs, replaced by placeholders), the names of their ancestors and
 * their children (name, kind, HTTP method).
 */
export const comparableModelSpans = (spans: ReadonlyArray<ReadableSpan>, port: number) =>
  spans
    .filter((s) => s.name.startsWith("chat ") || s.name.startsWith("LanguageModel."))
    .map((s) => ({
      name: s.name,
      kind: s.kind,
      status: s.status.code,
      attributes: Object.fromEntries(
        Object.entries(s.attributes).map(([k, v]) =>
          k === "gen_ai.response.time_to_first_chunk" ? [k, typeof v] : [k, v === port ? "(port)" : v]
        )
      ),
      ancestors: ancestorsOf(spans, s).map((a) => a.name),
      children: spans
        .filter((c) => parentIdOf(c) === spanIdOf(s))
        .map((c) => [c.name, c.kind, c.attributes["http.request.method"]])
    }))
