/**
 * The exported span tree of a request (C17, DESIGN §7), pinned as a golden
 * file: every span's name, its place in the tree, its kind when it is not
 * INTERNAL (`[client]`), and its attributes (values that change per run —
 * ids, times — are shown by key only).
 *
 * A model call is one GenAI client span, `chat {gen_ai.request.model}`
 * (issue 19, OpenTelemetry's GenAI conventions): `@effect/ai`'s own
 * `LanguageModel.*` span is merged into it, not nested under it.
 *
 * The hot path is tuned for speed (spans made without per-call fiber
 * context switches where possible); this test proves that a request with
 * stage hooks, guards, observers, transforms and a hook that opens its own
 * child span still exports exactly the same tree. A change to the tree is a
 * change to the telemetry contract: update the golden file deliberately
 * (`npx vitest run -u test/pipeline/TraceTree.test.ts`) and say why.
 */
import { describe, expect, it } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import { Effect, Stream } from "effect"
import { Hook } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, weatherStep } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"
import type { ReadableSpan } from "../support/InMemoryTracing.js"

const GOLDEN = "./__golden__/trace-tree.txt"

/** Attribute values that differ between runs: shown by key only. */
const VOLATILE = /(request_?id|requestId|call_?id|callId|duration|time|_ms$)/i

const renderAttributes = (span: ReadableSpan): string => {
  const keys = Object.keys(span.attributes).sort()
  return keys
    .map((key) => (VOLATILE.test(key) ? key : `${key}=${JSON.stringify(span.attributes[key])}`))
    .join(" ")
}

/**
 * The tree, depth-first; siblings sorted by name and attributes (start
 * times tie at the exporter's resolution, so they cannot order them). Events
 * are listed under their span by name.
 */
const renderTree = (spans: ReadonlyArray<ReadableSpan>): string => {
  const ids = new Set(spans.map(InMemoryTracing.spanIdOf))
  const children = new Map<string | undefined, Array<ReadableSpan>>()
  for (const span of spans) {
    const parent = InMemoryTracing.parentIdOf(span)
    const key = parent !== undefined && ids.has(parent) ? parent : undefined
    const list = children.get(key) ?? []
    list.push(span)
    children.set(key, list)
  }
  const lines: Array<string> = []
  const visit = (parent: string | undefined, depth: number) => {
    const list = (children.get(parent) ?? []).map((span) => {
      const kind = span.kind === SpanKind.INTERNAL ? "" : ` [${SpanKind[span.kind].toLowerCase()}]`
      const status = InMemoryTracing.isError(span) ? " [error]" : ""
      return { span, line: `${span.name}${kind}${status} ${renderAttributes(span)}`.trimEnd() }
    }).sort((a, b) => a.line.localeCompare(b.line))
    for (const { line, span } of list) {
      lines.push(`${"  ".repeat(depth)}${line}`)
      for (const event of span.events) lines.push(`${"  ".repeat(depth + 1)}@ ${event.name}`)
      visit(InMemoryTracing.spanIdOf(span), depth + 1)
    }
  }
  visit(undefined, 0)
  return lines.join("\n") + "\n"
}

const pass = <A>(_call: unknown, value: A) => Effect.succeed(value)

/** Every kind of hook a request can run, one each. */
const hooks: ReadonlyArray<Hook.Hook<never>> = [
  Hook.make({
    name: "stages",
    beforePlanning: () =>
      // A hook's own span nests under the hook's span.
      Effect.withSpan(Effect.logDebug("enriching"), "user.enrich").pipe(
        Effect.as({ enrichments: { rag_context: "- a fact" } })
      ),
    afterPlanning: (_ctx, p) => Effect.succeed(p),
    afterExecution: () => Effect.void,
    afterSynthesis: (_ctx, text) => Effect.succeed(`${text}!`)
  }),
  Hook.make({
    name: "operations",
    guard: { inference: (_call, proceed) => proceed, toolCall: (_call, proceed) => proceed },
    around: {
      request: () => Effect.succeed(() => Effect.void),
      inference: () => Effect.void,
      toolExecution: () => Effect.succeed(() => Effect.void)
    },
    beforeInference: pass,
    afterInference: pass,
    beforeTool: pass,
    afterTool: pass
  })
]

const traced = <A, E>(body: (tracing: InMemoryTracing.InMemoryTracing) => Effect.Effect<A, E>) => {
  const tracing = InMemoryTracing.make()
  return Effect.provide(body(tracing), tracing.layer)
}

describe("C17: the exported span tree", () => {
  it.effect("C17: a buffered request with every kind of hook exports the golden span tree", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks,
          script: { plans: [plan([quoteStep("s1"), weatherStep("s2")]), plan([quoteStep("s1")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "quote ACME and the weather", requestId: "tree-1" })
        expect(result._tag).toBe("Completed")
        const streamed = yield* Stream.runCollect(
          h.pipeline.stream({ request: "quote ACME", requestId: "tree-2" })
        )
        expect(streamed.length).toBeGreaterThan(0)
        const byTrace = new Map<string, Array<ReadableSpan>>()
        for (const span of tracing.spans()) {
          const list = byTrace.get(InMemoryTracing.traceIdOf(span)) ?? []
          list.push(span)
          byTrace.set(InMemoryTracing.traceIdOf(span), list)
        }
        const rendered = [...byTrace.values()].map(renderTree).join("\n")
        yield* Effect.promise(() => expect(rendered).toMatchFileSnapshot(GOLDEN))
      })
    ))

  it.effect("C17: with tracing disabled (Effect.withTracerEnabled(false)) no pipeline span is made, and the record still has every run", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks,
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "tree-off" }).pipe(
          Effect.withTracerEnabled(false)
        )
        expect(result._tag).toBe("Completed")
        expect(tracing.spans().map((s) => s.name)).toEqual([])
        const record = yield* h.record("tree-off")
        expect(record.hookInvocations.length).toBeGreaterThan(10)
      })
    ))
})
