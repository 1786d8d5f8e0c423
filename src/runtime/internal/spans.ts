/**
 * Spans that cost nothing when nobody collects them (C17, DESIGN §7).
 *
 * Effect's built-in tracer keeps spans in memory and exports them nowhere;
 * when it is the installed tracer (no `@effect/opentelemetry` or other
 * tracer provided), a span is an allocation plus a fiber-context switch
 * that nothing observes — about 6–8 µs each, on a path that opens one per
 * hook invocation. So the pipeline materializes its spans only when another
 * tracer is installed and tracing is enabled; then it makes exactly the
 * spans, parents and attributes it always made (the golden span tree test
 * pins this). Timings are in the execution record either way.
 */
import { Context, Effect, FiberRef, Option, Tracer } from "effect"
import type { RuntimeFiber } from "effect/Fiber"

let builtIn: Tracer.Tracer | undefined

/** Effect's built-in tracer: the one a fresh runtime has. */
const builtInTracer = (): Tracer.Tracer => (builtIn ??= Effect.runSync(Effect.tracer))

/** Whether spans made on this fiber reach a tracer that collects them. */
export const collects = (fiber: RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== builtInTracer() && fiber.getFiberRef(FiberRef.currentTracerEnabled)

/**
 * `Effect.withSpan(effect, name, options)` when spans are collected, else
 * `effect` itself (no span, no context switch).
 */
export const withSpan = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: string,
  options?: Tracer.SpanOptions
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => collects(fiber) ? Effect.withSpan(effect, name, options) : effect)

/**
 * A span-returning scope for code that needs the span object (a provider's
 * `ProviderOptions.span`): a real span under the current one when spans are
 * collected, else a shared inert span.
 */
export const useSpan = <A, E, R>(
  name: string,
  options: Tracer.SpanOptions,
  f: (span: Tracer.Span) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    collects(fiber)
      ? Effect.useSpan(name, options, (span) => Effect.withParentSpan(f(span), span))
      : f(inertSpan)
  )

/** A span that records nothing (its methods do nothing). */
export const inertSpan: Tracer.Span = {
  _tag: "Span",
  name: "inert",
  spanId: "inert",
  traceId: "inert",
  parent: Option.none(),
  context: Context.empty(),
  status: { _tag: "Started", startTime: BigInt(0) },
  attributes: new Map(),
  links: [],
  sampled: false,
  kind: "internal",
  end: () => {},
  attribute: () => {},
  event: () => {},
  addLinks: () => {}
}

/** {@link withSpan}, data-last (for `pipe`). */
export const spanned = (name: string, options?: Tracer.SpanOptions) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  withSpan(effect, name, options)

/**
 * What a span made under {@link adaptingSpans} becomes: `make()` makes
 * the span the tracer would have made; return it, a view of it, or a view
 * of another span that stands for it.
 */
export type SpanAdapter = (
  name: string,
  kind: Tracer.SpanKind,
  parent: Option.Option<Tracer.AnySpan>,
  make: () => Tracer.Span
) => Tracer.Span

/**
 * A function running effects with every span made under them — by any
 * code, a library's included — passed through `adapt`: how a library's own
 * spans are fixed up or merged into ours (model calls, HTTP attempts). Use
 * it only where spans are collected ({@link collects}); the tracer in place
 * makes everything `adapt` hands on. The adapting tracer is built once per
 * tracer it wraps, not per run.
 */
export const adaptingSpans = (adapt: SpanAdapter) => {
  let last: { readonly inner: Tracer.Tracer; readonly adapting: Tracer.Tracer } | undefined
  const adaptingOf = (inner: Tracer.Tracer): Tracer.Tracer => {
    if (last?.inner === inner || last?.adapting === inner) return last.adapting
    const adapting = Tracer.make({
      span: (name, parent, context, links, startTime, kind, options) =>
        adapt(name, kind, parent, () => inner.span(name, parent, context, links, startTime, kind, options)),
      context: (execution, fiber) => inner.context(execution, fiber)
    })
    last = { inner, adapting }
    return adapting
  }
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) => Effect.withTracer(effect, adaptingOf(fiber.currentTracer)))
}

/**
 * A view of `span` that is `span` (its ids, name, kind, and its status,
 * attributes and links as they are now) but for the members `overrides`
 * replaces: what a wrapper changes about a span, and nothing else.
 */
export const delegating = (
  span: Tracer.Span,
  overrides: Partial<Pick<Tracer.Span, "attribute" | "end" | "event" | "addLinks">>
): Tracer.Span => ({
  _tag: "Span",
  name: span.name,
  spanId: span.spanId,
  traceId: span.traceId,
  parent: span.parent,
  context: span.context,
  get status() {
    return span.status
  },
  get attributes() {
    return span.attributes
  },
  get links() {
    return span.links
  },
  sampled: span.sampled,
  kind: span.kind,
  attribute: overrides.attribute ?? ((key, value) => span.attribute(key, value)),
  end: overrides.end ?? ((endTime, exit) => span.end(endTime, exit)),
  event: overrides.event ?? ((name, startTime, attributes) => span.event(name, startTime, attributes)),
  addLinks: overrides.addLinks ?? ((links) => span.addLinks(links))
})

/**
 * A view of `span` standing for a span merged into it: the same ids (a
 * child of the view is a child of `span`), its attributes (but those in
 * `omit`), events and links go to `span`, and ending it does nothing
 * (`span` ends when its owner ends it).
 */
export const mergedInto = (span: Tracer.Span, omit: ReadonlySet<string>): Tracer.Span =>
  delegating(span, {
    end: () => {},
    attribute: (key, value) => {
      if (!omit.has(key)) span.attribute(key, value)
    }
  })
