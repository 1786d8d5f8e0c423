/**
 * Telemetry (C17, seed 000 §9 "Telemetry", §6 metric): one span per hook
 * invocation named `pipeline.hook.<stage>.<name>`, nested in the request
 * span, covering result validation and carrying the decision; panicking and
 * interrupted invocations still close their spans; the short-circuit metric
 * is labelled by kind, reason and status only.
 *
 * Spans go to an in-memory exporter (see test/support/InMemoryTracing.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Metric, Stream } from "effect"
import { Approval, type ExecutionRecord, Hook, ShortCircuit } from "effect-agent-pipeline"
import { makeHarness, NAMESPACE, plan, quoteStep, tracer, weatherStep } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"
import type { ReadableSpan } from "../support/InMemoryTracing.js"

const { ancestorsOf, hookSpans, isError, named, parentIdOf, spanIdOf, traceIdOf } = InMemoryTracing

/** Runs `body` with a fresh in-memory tracer installed. */
const traced = <A, E>(
  body: (tracing: InMemoryTracing.InMemoryTracing) => Effect.Effect<A, E>
): Effect.Effect<A, E> => {
  const tracing = InMemoryTracing.make()
  return Effect.provide(body(tracing), tracing.layer)
}

const only = (spans: ReadonlyArray<ReadableSpan>, name: string): ReadableSpan => {
  const found = named(spans, name)
  expect(found.map((s) => s.name), `exactly one span named ${name}`).toEqual([name])
  return found[0]!
}

const decisionOf = (span: ReadableSpan) => {
  const policy = span.attributes["pipeline.hook.decision.policy"]
  const action = span.attributes["pipeline.hook.decision.action"]
  const reason = span.attributes["pipeline.hook.decision.reason"]
  return policy === undefined && action === undefined && reason === undefined
    ? undefined
    : { policy, action, reason }
}

/** The span and the recorded invocation describe the same boundary. */
const expectSpanMatchesInvocation = (span: ReadableSpan, invocation: ExecutionRecord.HookInvocation) => {
  expect(span.name).toBe(`pipeline.hook.${invocation.stage}.${invocation.name}`)
  expect(span.attributes["pipeline.hook.name"]).toBe(invocation.name)
  expect(span.attributes["pipeline.hook.stage"]).toBe(invocation.stage)
  expect(span.attributes["pipeline.hook.sequence"]).toBe(invocation.sequence)
  expect(span.attributes["pipeline.phase"]).toBe(invocation.phase)
  expect(span.attributes["pipeline.hook.outcome"]).toBe(invocation.outcome)
  expect(span.attributes["pipeline.hook.error"]).toBe(invocation.error)
  expect(decisionOf(span)).toEqual(invocation.decision)
}

const STAGES = ["before_planning", "after_planning", "after_execution", "after_synthesis"] as const

describe("telemetry: hook spans (C17)", () => {
  it.effect("C17: one span per hook invocation named pipeline.hook.<stage>.<name> — 2 hooks × 4 stages = 8 spans", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [tracer("alpha", calls), tracer("beta", calls)],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "t-8" })
        expect(result._tag).toBe("Completed")

        const spans = hookSpans(tracing.spans())
        expect(spans.map((s) => s.name)).toEqual(
          STAGES.flatMap((stage) => [`pipeline.hook.${stage}.alpha`, `pipeline.hook.${stage}.beta`])
        )
        // One span per recorded invocation, describing the same boundary.
        const record = yield* h.record("t-8")
        expect(record.hookInvocations).toHaveLength(8)
        record.hookInvocations.forEach((invocation, i) => expectSpanMatchesInvocation(spans[i]!, invocation))
        for (const span of spans) expect(span.ended).toBe(true)
      })
    ))

  it.effect("C17: a hook is spanned once per phase in a multi-phase request (span carries pipeline.phase)", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [tracer("gov", calls)],
          script: { plans: [plan([quoteStep("s1")], false), plan([weatherStep("s2")])], synthesis: "done" }
        })
        yield* h.pipeline.process({ request: "quote then weather", requestId: "t-phases" })
        const spans = tracing.spans()
        const afterPlanning = named(spans, "pipeline.hook.after_planning.gov")
        expect(afterPlanning.map((s) => s.attributes["pipeline.phase"])).toEqual([1, 2])
        expect(afterPlanning.map((s) => s.attributes["pipeline.hook.sequence"])).toEqual([0, 0])
        // Stages that run once per request are spanned once.
        expect(named(spans, "pipeline.hook.before_planning.gov")).toHaveLength(1)
        expect(named(spans, "pipeline.hook.after_execution.gov")).toHaveLength(1)
        expect(named(spans, "pipeline.hook.after_synthesis.gov")).toHaveLength(1)
        const record = yield* h.record("t-phases")
        expect(hookSpans(spans)).toHaveLength(record.hookInvocations.length)
      })
    ))

  it.effect("C17: hook spans are descendants of the request span pipeline.request, in its trace", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [tracer("alpha", calls), tracer("beta", calls)],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        yield* h.pipeline.process({ request: "quote ACME", requestId: "t-tree" })
        const spans = tracing.spans()
        const request = only(spans, "pipeline.request")
        expect(request.attributes["pipeline.request.id"]).toBe("t-tree")
        expect(request.attributes["pipeline.mode"]).toBe("pipeline")
        expect(parentIdOf(request)).toBeUndefined()
        const hooks = hookSpans(spans)
        expect(hooks).toHaveLength(8)
        for (const span of hooks) {
          expect(traceIdOf(span)).toBe(traceIdOf(request))
          expect(ancestorsOf(spans, span).map(spanIdOf), span.name).toContain(spanIdOf(request))
        }
        // BeforePlanning hooks run inside the stage span.
        const stage = only(spans, "pipeline.before_planning")
        for (const span of named(spans, "pipeline.hook.before_planning.alpha")) {
          expect(parentIdOf(span)).toBe(spanIdOf(stage))
        }
      })
    ))

  it.effect("C17: two concurrent requests keep their hook spans in their own traces", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [tracer("alpha", calls)],
          script: { plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")])], synthesis: "done" }
        })
        yield* Effect.all([
          h.pipeline.process({ request: "one", requestId: "t-c1" }),
          h.pipeline.process({ request: "two", requestId: "t-c2" })
        ], { concurrency: "unbounded" })
        const spans = tracing.spans()
        const requests = named(spans, "pipeline.request")
        expect(requests).toHaveLength(2)
        expect(new Set(requests.map(traceIdOf)).size).toBe(2)
        const hooks = hookSpans(spans)
        expect(hooks).toHaveLength(8)
        for (const request of requests) {
          const mine = hooks.filter((s) => ancestorsOf(spans, s).some((a) => spanIdOf(a) === spanIdOf(request)))
          expect(mine).toHaveLength(4)
          for (const s of mine) expect(traceIdOf(s)).toBe(traceIdOf(request))
        }
      })
    ))

  it.effect("C17: one pipeline.phase span per phase under the request span, covering planning, AfterPlanning and execution", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [Hook.make({ name: "ap", afterPlanning: (_c, p) => Effect.succeed(p) })],
          script: { plans: [plan([quoteStep("s1")], false), plan([weatherStep("s2")])], synthesis: "done" }
        })
        yield* h.pipeline.process({ request: "two phases", requestId: "t-exec" })
        const spans = tracing.spans()
        const request = only(spans, "pipeline.request")
        const phases = named(spans, "pipeline.phase")
        expect(phases.map((s) => s.attributes["pipeline.phase"])).toEqual([1, 2])
        for (const span of phases) {
          expect(span.ended).toBe(true)
          expect(parentIdOf(span)).toBe(spanIdOf(request))
        }
        const executions = named(spans, "pipeline.execution")
        expect(executions.map((s) => s.attributes["pipeline.phase"])).toEqual([1, 2])
        executions.forEach((span, i) => {
          expect(span.ended).toBe(true)
          expect(parentIdOf(span)).toBe(spanIdOf(phases[i]!))
        })
        const apSpans = named(spans, "pipeline.hook.after_planning.ap")
        expect(apSpans.map((span) => parentIdOf(span))).toEqual(phases.map((span) => spanIdOf(span)))
        const planning = named(spans, "Planner.plan")
        expect(planning.map((span) => parentIdOf(span))).toEqual(phases.map((span) => spanIdOf(span)))
        expect(named(spans, "pipeline.synthesis")).toHaveLength(1)
        expect(parentIdOf(only(spans, "pipeline.synthesis"))).toBe(spanIdOf(request))
      })
    ))
})

describe("telemetry: decisions on spans (C17, C14)", () => {
  it.effect("C17: the required hook's span carries fail_closed/continue/accepted; a failing fail-open hook's span carries fail_open/continue/hook_error", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({ name: "flaky", afterPlanning: () => Effect.fail(new Error("flaky backend down")) }),
            Hook.required({ name: "gov", afterPlanning: (_c, p) => Effect.succeed(p) })
          ],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "quote", requestId: "t-dec" })
        expect(result._tag).toBe("Completed")
        const spans = tracing.spans()

        const gov = only(spans, "pipeline.hook.after_planning.gov")
        expect(decisionOf(gov)).toEqual({ policy: "fail_closed", action: "continue", reason: "accepted" })
        expect(gov.attributes["pipeline.hook.outcome"]).toBe("succeeded")
        expect(gov.attributes["pipeline.hook.error"]).toBeUndefined()

        const flaky = only(spans, "pipeline.hook.after_planning.flaky")
        expect(decisionOf(flaky)).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
        expect(flaky.attributes["pipeline.hook.outcome"]).toBe("failed")
        expect(flaky.attributes["pipeline.hook.error"]).toBe("flaky backend down")

        const record = yield* h.record("t-dec")
        expectSpanMatchesInvocation(flaky, record.hookInvocations.find((i) => i.name === "flaky")!)
        expectSpanMatchesInvocation(gov, record.hookInvocations.find((i) => i.name === "gov")!)
      })
    ))

  it.effect("C17: a failing required hook's span carries fail_closed/terminate/hook_error and the request span is an error", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [Hook.required({ name: "gov", afterPlanning: () => Effect.fail(new Error("trade not allowed")) })],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const error = yield* Effect.flip(h.pipeline.process({ request: "trade", requestId: "t-req-fail" }))
        expect(error._tag).toBe("RequiredAfterPlanningError")
        const spans = tracing.spans()
        const gov = only(spans, "pipeline.hook.after_planning.gov")
        expect(decisionOf(gov)).toEqual({ policy: "fail_closed", action: "terminate", reason: "hook_error" })
        expect(gov.attributes["pipeline.hook.error"]).toBe("trade not allowed")
        const request = only(spans, "pipeline.request")
        expect(request.ended).toBe(true)
        expect(isError(request)).toBe(true)
        expect(named(spans, "pipeline.execution")).toHaveLength(0)
      })
    ))

  it.effect("C17: the span covers result validation — an invalid plan from afterPlanning puts hook_error and the validation text on the hook's span", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({
              name: "rewriter",
              // Structurally a plan, but it names a tool that is not registered:
              // only the pipeline's validation can reject it.
              afterPlanning: () =>
                Effect.succeed({
                  steps: [{ step_id: "x1", namespace: NAMESPACE, agent: "ghost-service", capability: "haunt" }],
                  terminal: true
                })
            })
          ],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "quote", requestId: "t-valid" })
        expect(result._tag).toBe("Completed")
        const record = yield* h.record("t-valid")
        const invocation = record.hookInvocations.find((i) => i.name === "rewriter")!
        expect(invocation.outcome).toBe("failed")
        expect(invocation.error).toEqual(expect.stringContaining("ghost-service"))
        // The last valid plan was kept.
        expect(record.phases[0]!.plan.steps.map((s) => s.step_id)).toEqual(["s1"])

        const span = only(tracing.spans(), "pipeline.hook.after_planning.rewriter")
        expect(decisionOf(span)).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
        expect(span.attributes["pipeline.hook.outcome"]).toBe("failed")
        expect(span.attributes["pipeline.hook.error"]).toBe(invocation.error)
      })
    ))

  it.effect("C17: the required hook's invalid plan is rejected inside its span (fail_closed/terminate/hook_error)", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.required({
              name: "gov",
              afterPlanning: () => Effect.succeed({ steps: [quoteStep("dup"), quoteStep("dup")], terminal: true })
            })
          ],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "t-valid-req" }))
        expect(error._tag).toBe("RequiredAfterPlanningError")
        const span = only(tracing.spans(), "pipeline.hook.after_planning.gov")
        expect(decisionOf(span)).toEqual({ policy: "fail_closed", action: "terminate", reason: "hook_error" })
        expect(span.attributes["pipeline.hook.outcome"]).toBe("failed")
        const record = yield* h.record("t-valid-req")
        expect(span.attributes["pipeline.hook.error"]).toBe(record.hookInvocations[0]!.error)
        expect(typeof span.attributes["pipeline.hook.error"]).toBe("string")
      })
    ))

  it.effect("C17: short-circuit decisions are on the BeforePlanning hook's span (authoritative; cache mismatch)", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({
              name: "cache",
              beforePlanning: () =>
                Effect.succeed({
                  decision: {
                    kind: "cache" as const,
                    shortCircuit: { response: "stale", source: "semantic_cache" },
                    cachedAgainst: { model: "m0" }
                  }
                })
            }),
            Hook.make({
              name: "deny",
              beforePlanning: (ctx) =>
                Effect.succeed(
                  ctx.request === "deny me"
                    ? { decision: { kind: "authoritative" as const, shortCircuit: { response: "denied" } } }
                    : {}
                )
            })
          ],
          gate: { cacheReadEnabled: true, cacheVary: { model: "m1" } },
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        yield* h.pipeline.process({ request: "deny me", requestId: "t-sc" })
        const spans = tracing.spans()
        expect(decisionOf(only(spans, "pipeline.hook.before_planning.cache"))).toEqual({
          policy: "fail_closed",
          action: "continue",
          reason: "cache_dimension_mismatch"
        })
        expect(decisionOf(only(spans, "pipeline.hook.before_planning.deny"))).toEqual({
          policy: "fail_closed",
          action: "short_circuit",
          reason: "authoritative"
        })
        // Nothing after the short-circuit was spanned.
        expect(named(spans, "pipeline.execution")).toHaveLength(0)
        expect(named(spans, "pipeline.synthesis")).toHaveLength(0)
      })
    ))

  it.effect("C17: decisions are on the span even with execution recording off", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({ name: "flaky", afterSynthesis: () => Effect.fail("synthesis guard offline") }),
            Hook.required({ name: "gov", afterPlanning: (_c, p) => Effect.succeed(p) })
          ],
          options: { recording: false },
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "quote", requestId: "t-norec" })
        expect(result._tag).toBe("Completed")
        expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
        const spans = tracing.spans()
        expect(decisionOf(only(spans, "pipeline.hook.after_planning.gov"))).toEqual({
          policy: "fail_closed",
          action: "continue",
          reason: "accepted"
        })
        const flaky = only(spans, "pipeline.hook.after_synthesis.flaky")
        expect(decisionOf(flaky)).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
        expect(flaky.attributes["pipeline.hook.error"]).toBe("synthesis guard offline")
      })
    ))
})

describe("telemetry: spans close on panic and interruption (C13, C17)", () => {
  it.effect("C13/C17: a panicking hook's span is ended with error status and propagate_panic; the request span is ended with error", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [Hook.make({ name: "boom", afterExecution: () => Effect.die(new Error("kaboom")) })],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const exit = yield* Effect.exit(h.pipeline.process({ request: "quote", requestId: "t-panic" }))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        const spans = tracing.spans()
        const boom = only(spans, "pipeline.hook.after_execution.boom")
        expect(boom.ended).toBe(true)
        expect(isError(boom)).toBe(true)
        expect(boom.status.message).toEqual(expect.stringContaining("kaboom"))
        expect(decisionOf(boom)).toEqual({ policy: "fail_open", action: "propagate_panic", reason: "panic" })
        expect(boom.attributes["pipeline.hook.error"]).toBe("panic: kaboom")
        const request = only(spans, "pipeline.request")
        expect(request.ended).toBe(true)
        expect(isError(request)).toBe(true)
        expect(ancestorsOf(spans, boom).map(spanIdOf)).toContain(spanIdOf(request))
        // The completed phase span was closed normally before the panic.
        expect(isError(only(spans, "pipeline.execution"))).toBe(false)
        expect(named(spans, "pipeline.synthesis")).toHaveLength(0)
      })
    ))

  it.effect("C13/C17: a hook that throws synchronously has its span ended with error status", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({
              name: "thrower",
              beforePlanning: () => {
                throw new Error("thrown in handler")
              }
            })
          ],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const exit = yield* Effect.exit(h.pipeline.process({ request: "quote", requestId: "t-throw" }))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        const spans = tracing.spans()
        const span = only(spans, "pipeline.hook.before_planning.thrower")
        expect(span.ended).toBe(true)
        expect(isError(span)).toBe(true)
        expect(decisionOf(span)).toEqual({ policy: "fail_open", action: "propagate_panic", reason: "panic" })
        expect(only(spans, "pipeline.before_planning").ended).toBe(true)
        expect(isError(only(spans, "pipeline.request"))).toBe(true)
      })
    ))

  it.effect("C13/C17: a panicking AfterSynthesis hook on the stream closes its span, the synthesis span and the request span", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [Hook.make({ name: "boom", afterSynthesis: () => Effect.die(new Error("stream kaboom")) })],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "streamed draft", chunks: ["streamed", " draft"] }
        })
        const exit = yield* Effect.exit(Stream.runCollect(h.pipeline.stream({ request: "q", requestId: "t-spanic" })))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        const spans = tracing.spans()
        const boom = only(spans, "pipeline.hook.after_synthesis.boom")
        expect(isError(boom)).toBe(true)
        expect(decisionOf(boom)).toEqual({ policy: "fail_open", action: "propagate_panic", reason: "panic" })
        expect(only(spans, "pipeline.synthesis").ended).toBe(true)
        const request = only(spans, "pipeline.request")
        expect(request.attributes["pipeline.mode"]).toBe("stream")
        expect(isError(request)).toBe(true)
        expect(traceIdOf(boom)).toBe(traceIdOf(request))
        expect(ancestorsOf(spans, boom).map(spanIdOf)).toContain(spanIdOf(request))
      })
    ))

  it.effect("C14/C17: an interrupted hook invocation is recorded (failed, \"interrupted\") on its span and in the record; its span and the request span are ended", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const entered = yield* Deferred.make<void>()
        const h = yield* makeHarness({
          hooks: [
            Hook.make({
              name: "slow",
              beforePlanning: () => Effect.zipRight(Deferred.succeed(entered, undefined), Effect.never)
            })
          ],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote", requestId: "t-int" }))
        yield* Deferred.await(entered)
        yield* Fiber.interrupt(fiber)
        const spans = tracing.spans()
        const slow = only(spans, "pipeline.hook.before_planning.slow")
        expect(slow.ended).toBe(true)
        expect(only(spans, "pipeline.before_planning").ended).toBe(true)
        expect(only(spans, "pipeline.request").ended).toBe(true)
        const record = yield* h.record("t-int")
        expect(record.lifecycle?.status).toBe("interrupted")
        // invokeHook.ts means to record an interrupted invocation (outcome failed, error "interrupted").
        expect(slow.attributes["pipeline.hook.outcome"]).toBe("failed")
        expect(slow.attributes["pipeline.hook.error"]).toBe("interrupted")
        expect(record.hookInvocations.map((i) => [i.name, i.stage, i.outcome, i.error])).toEqual([
          ["slow", "before_planning", "failed", "interrupted"]
        ])
      })
    ))

  it.effect("C17: hook spans on the streaming path are descendants of the stream's request span", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [tracer("alpha", calls)],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "ab", chunks: ["a", "b"] }
        })
        yield* Stream.runDrain(h.pipeline.stream({ request: "q", requestId: "t-stree" }))
        const spans = tracing.spans()
        const request = only(spans, "pipeline.request")
        const hooks = hookSpans(spans)
        expect(hooks.map((s) => s.name)).toEqual(STAGES.map((stage) => `pipeline.hook.${stage}.alpha`))
        for (const span of hooks) {
          expect(ancestorsOf(spans, span).map(spanIdOf), span.name).toContain(spanIdOf(request))
        }
      })
    ))

  it.effect("C17: a HITL suspension still closes the request span (no open spans after suspend)", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [tracer("alpha", calls)],
          approval: { evaluate: () => Effect.succeed(Approval.suspend("needs a human")) },
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "quote", requestId: "t-hitl" })
        expect(result._tag).toBe("Suspended")
        const spans = tracing.spans()
        expect(isError(only(spans, "pipeline.request"))).toBe(false)
        expect(hookSpans(spans).map((s) => s.name)).toEqual([
          "pipeline.hook.before_planning.alpha",
          "pipeline.hook.after_planning.alpha"
        ])
      })
    ))
})

// ---------------------------------------------------------------------------
// Metric
// ---------------------------------------------------------------------------

const METRIC = "orchestration.pipeline.short_circuit.decision"

const counterFor = (kind: string, reason: string, status: string) =>
  ShortCircuit.decisionCounter.pipe(
    Metric.tagged("kind", kind),
    Metric.tagged("reason", reason),
    Metric.tagged("status", status)
  )

const countOf = (kind: string, reason: string, status: string) =>
  Effect.map(Metric.value(counterFor(kind, reason, status)), (state) => state.count)

const COMBOS = [
  ["authoritative", "authoritative", "accepted"],
  ["cache", "cache_match", "accepted"],
  ["cache", "cache_dimension_mismatch", "rejected"],
  ["cache", "cache_read_disabled", "rejected"],
  ["cache", "cache_match", "rejected"],
  ["authoritative", "authoritative", "rejected"]
] as const

const readAll = Effect.forEach(COMBOS, ([k, r, s]) => countOf(k, r, s))

describe("telemetry: short-circuit decision metric (C17, seed §6)", () => {
  it.effect("C17: counts per (kind, reason, status) for an accepted authoritative and a rejected cache decision", () =>
    Effect.gen(function*() {
      const before = yield* readAll
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "cache-hook-name",
            beforePlanning: (ctx) =>
              Effect.succeed(
                ctx.request === "cached"
                  ? {
                    decision: {
                      kind: "cache" as const,
                      shortCircuit: { response: "from cache", source: "semantic_cache_source" },
                      cachedAgainst: { model: "m0" }
                    }
                  }
                  : {}
              )
          }),
          Hook.make({
            name: "policy-hook-name",
            beforePlanning: (ctx) =>
              Effect.succeed(
                ctx.request === "forbidden"
                  ? {
                    decision: {
                      kind: "authoritative" as const,
                      shortCircuit: { response: "no", source: "policy_source" }
                    }
                  }
                  : {}
              )
          })
        ],
        gate: { cacheReadEnabled: true, cacheVary: { model: "m1" } },
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      const denied = yield* h.pipeline.process({ request: "forbidden", requestId: "m-auth" })
      expect(denied._tag === "Completed" && denied.response.response).toBe("no")
      const continued = yield* h.pipeline.process({ request: "cached", requestId: "m-cache" })
      expect(continued._tag === "Completed" && continued.response.response).toBe("done")

      const after = yield* readAll
      const delta = after.map((n, i) => n - before[i]!)
      expect(delta).toEqual([1, 0, 1, 0, 0, 0])
    }))

  it.effect("C17: an accepted cache match and a cache-read-disabled rejection are counted under their own reasons", () =>
    Effect.gen(function*() {
      const before = yield* readAll
      const cacheHook = Hook.make({
        name: "cache",
        beforePlanning: () =>
          Effect.succeed({
            decision: { kind: "cache" as const, shortCircuit: { response: "hit" }, cachedAgainst: { model: "m1" } }
          })
      })
      const matching = yield* makeHarness({
        hooks: [cacheHook],
        gate: { cacheReadEnabled: true, cacheVary: { model: "m1" } }
      })
      yield* matching.pipeline.process({ request: "q" })
      const disabled = yield* makeHarness({
        hooks: [cacheHook],
        gate: { cacheReadEnabled: false, cacheVary: { model: "m1" } },
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* disabled.pipeline.process({ request: "q" })
      const after = yield* readAll
      expect(after.map((n, i) => n - before[i]!)).toEqual([0, 1, 0, 1, 0, 0])
    }))

  it.effect("C17: the metric is labelled only by kind, reason and status — no hook name, no source", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "label-leak-hook",
            beforePlanning: () =>
              Effect.succeed({
                decision: {
                  kind: "authoritative" as const,
                  shortCircuit: { response: "no", source: "label-leak-source" }
                }
              })
          })
        ]
      })
      yield* h.pipeline.process({ request: "anything" })
      const pairs = (yield* Metric.snapshot).filter((p) => p.metricKey.name === METRIC)
      expect(pairs.length).toBeGreaterThan(0)
      expect(
        pairs.some((p) =>
          p.metricKey.tags.some((t) => t.key === "kind" && t.value === "authoritative") &&
          p.metricKey.tags.some((t) => t.key === "status" && t.value === "accepted")
        )
      ).toBe(true)
      for (const pair of pairs) {
        expect(pair.metricKey.tags.map((t) => t.key).sort()).toEqual(["kind", "reason", "status"])
        for (const tag of pair.metricKey.tags) {
          expect(tag.value).not.toContain("label-leak")
          expect(["kind", "reason", "status"]).toContain(tag.key)
        }
      }
      // The accepted decision stays identifiable through the record, not the metric.
      const [record] = (yield* Effect.orDie(h.store.list())).records
      expect(record?.shortCircuit).toEqual({
        hookName: "label-leak-hook",
        kind: "authoritative",
        reason: "authoritative",
        source: "label-leak-source"
      })
    }))
})

const untypedDecision: unknown = { kind: "maybe", shortCircuit: { response: "x" } }

describe("telemetry: the short-circuit decision trace event (seed 000 §6)", () => {
  const EVENT = "pipeline.short_circuit.decision"
  const eventsOf = (span: ReadableSpan) => span.events.filter((e) => e.name === EVENT).map((e) => e.attributes)

  it.effect("seed 000 §6: an accepted decision is identifiable through a pipeline.short_circuit.decision event on the deciding hook's span", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({
              name: "stale-cache",
              beforePlanning: () =>
                Effect.succeed({
                  decision: {
                    kind: "cache" as const,
                    shortCircuit: { response: "old" },
                    cachedAgainst: { model: "m0" }
                  }
                })
            }),
            Hook.make({
              name: "policy",
              beforePlanning: () =>
                Effect.succeed({
                  decision: {
                    kind: "authoritative" as const,
                    shortCircuit: { response: "no", source: "policy_engine" }
                  }
                })
            })
          ],
          gate: { cacheReadEnabled: true, cacheVary: { model: "m1" } }
        })
        yield* h.pipeline.process({ request: "anything", requestId: "event" })
        const spans = tracing.spans()
        expect(eventsOf(only(spans, "pipeline.hook.before_planning.policy"))).toEqual([{
          "pipeline.short_circuit.hook": "policy",
          "pipeline.short_circuit.kind": "authoritative",
          "pipeline.short_circuit.reason": "authoritative",
          "pipeline.short_circuit.status": "accepted",
          "pipeline.short_circuit.source": "policy_engine"
        }])
        // A rejected cache decision is an event too, with its status.
        expect(eventsOf(only(spans, "pipeline.hook.before_planning.stale-cache"))).toEqual([{
          "pipeline.short_circuit.hook": "stale-cache",
          "pipeline.short_circuit.kind": "cache",
          "pipeline.short_circuit.reason": "cache_dimension_mismatch",
          "pipeline.short_circuit.status": "rejected"
        }])
        // The event and the record name the same decision: they correlate.
        const [record] = (yield* Effect.orDie(h.store.list())).records
        expect(record?.shortCircuit).toMatchObject({ hookName: "policy", source: "policy_engine" })
        const request = only(spans, "pipeline.request")
        expect(traceIdOf(only(spans, "pipeline.hook.before_planning.policy"))).toBe(traceIdOf(request))
      })
    ))

  it.effect("seed 000 §6: a broken decision contract is an event with status invalid; a hook that decides nothing adds none", () =>
    traced((tracing) =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({ name: "quiet", beforePlanning: () => Effect.succeed({}) }),
            Hook.make({
              name: "broken",
              // A JavaScript hook may return anything; the runner checks the contract.
              beforePlanning: () => Effect.succeed({ decision: untypedDecision } as Hook.BeforePlanningResult)
            })
          ]
        })
        const error = yield* Effect.flip(h.pipeline.process({ request: "anything" }))
        expect(error._tag).toBe("HookContractError")
        const spans = tracing.spans()
        expect(eventsOf(only(spans, "pipeline.hook.before_planning.quiet"))).toEqual([])
        expect(eventsOf(only(spans, "pipeline.hook.before_planning.broken"))).toEqual([{
          "pipeline.short_circuit.hook": "broken",
          "pipeline.short_circuit.kind": "invalid",
          "pipeline.short_circuit.reason": "unknown_kind",
          "pipeline.short_circuit.status": "invalid"
        }])
      })
    ))
})
