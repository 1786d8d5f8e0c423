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
import { Context, Effect, FiberRef, Option, type Tracer } from "effect"
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
