/**
 * The model policy behind the inference seam (issue 9): every model call
 * bounded by `modelTimeout`, transient failures retried with backoff (a
 * `retry-after` honoured), a planning answer that is not a plan re-asked,
 * the fallback model asked once the primary gave up, every tool call
 * bounded by `toolTimeout` — and every attempt recorded as a `ModelCall`,
 * as much of it as the `modelCalls` option keeps.
 *
 * The model is scripted call by call (test/support/FlakyModel.ts); time is
 * the `TestClock`'s. The same behaviours over real HTTP, through the
 * OpenAI and Anthropic clients, are in test/ai/providers/.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, type Duration, Effect, Exit, Fiber, Layer, Option, Schema, Stream, TestClock } from "effect"
import {
  Agent,
  type AgentResponse,
  type ExecutionRecord,
  ExecutionStore,
  Hook,
  type Operation,
  Pipeline,
  type PipelineError,
  ToolRegistry
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import * as Flaky from "../support/FlakyModel.js"
import { plan, quoteStep } from "../support/Harness.js"

const PLAN = JSON.stringify(plan([quoteStep("q1")]))
const NO_STEPS = JSON.stringify(plan([]))

const Stuck = Tool.make("stuck", { description: "never answers", parameters: {}, success: Schema.String })
const stuck = (timeout?: Duration.DurationInput) =>
  ToolRegistry.entry({
    namespace: "test-tools",
    agent: "stuck-service",
    tool: Stuck,
    handler: () => Effect.never,
    ...(timeout === undefined ? {} : { timeout })
  })
const stuckStep = (stepId: string) => ({
  step_id: stepId,
  namespace: "test-tools",
  agent: "stuck-service",
  capability: "stuck",
  parameters: {}
})

interface Setup {
  readonly replies: ReadonlyArray<Flaky.Reply>
  readonly fallback?: ReadonlyArray<Flaky.Reply>
  readonly options?: Pipeline.PipelineOptions
  readonly tools?: ReadonlyArray<ToolRegistry.ToolEntry<never>>
  readonly hooks?: ReadonlyArray<Hook.Hook<never>>
}

const agent = (setup: Setup) =>
  Effect.gen(function*() {
    const primary = Flaky.make(setup.replies)
    const fallback = setup.fallback === undefined ? undefined : Flaky.make(setup.fallback)
    const context = yield* Layer.build(Agent.layer({
      model: primary.layer,
      fallbackModel: fallback?.layer,
      tools: [...allTools, ...(setup.tools ?? [])],
      hooks: setup.hooks ?? [],
      options: setup.options
    }))
    const pipeline = Context.get(context, Pipeline.Pipeline)
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    const record = (requestId: string) =>
      Effect.map(Effect.orDie(store.get(requestId)), (r) =>
        Option.getOrThrowWith(r, () => new Error(`no record ${requestId}`)))
    return { pipeline, record, primary, fallback }
  })

const callsOf = (record: ExecutionRecord.ExecutionRecord) =>
  (record.modelCalls ?? []).map((c) => [c.purpose, c.model, c.reask, c.attempt, c.outcome] as const)

const completed = (result: AgentResponse.PipelineResult) => {
  if (result._tag !== "Completed") throw new Error(`expected Completed, got ${result._tag}`)
  return result.response
}

/** Runs `effect` in a fiber and moves the TestClock on by `by` until it is done. */
const driven = <A, E>(effect: Effect.Effect<A, E>, by: Duration.DurationInput, steps = 40) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < steps; i++) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) break
      yield* TestClock.adjust(by)
    }
    return yield* Fiber.await(fiber)
  })

const failure = <A>(exit: Exit.Exit<A, PipelineError.PipelineError>): PipelineError.PipelineError => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  return Option.getOrThrow(
    Exit.causeOption(exit).pipe(
      Option.flatMap((cause) => Option.fromNullable(cause._tag === "Fail" ? cause.error : undefined))
    )
  )
}

describe("model calls: retries", () => {
  it.scoped("issue 9: a 429 with retry-after is retried after that wait (not before); the record shows both attempts", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.fail(Flaky.httpStatus(429, { "retry-after": "2" })), Flaky.text(NO_STEPS), Flaky.text("answer")]
      })
      const fiber = yield* Effect.fork(a.pipeline.process({ request: "q", requestId: "r429" }))
      yield* TestClock.adjust("1999 millis")
      expect(a.primary.calls).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const response = completed(yield* Fiber.join(fiber))
      expect(response.response).toBe("answer")
      const record = yield* a.record("r429")
      expect(callsOf(record)).toEqual([
        ["planning", "primary", 0, 1, "failed"],
        ["planning", "primary", 0, 2, "succeeded"],
        ["synthesis", "primary", 0, 1, "succeeded"]
      ])
      expect(record.modelCalls?.[0]?.error).toContain("429")
    }))

  it.scoped("issue 9: 5xx and resets are retried with doubling delays, then PlanningError model_failed; every attempt is recorded", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.fail(Flaky.httpStatus(500)), Flaky.fail(Flaky.reset()), Flaky.fail(Flaky.httpStatus(503))],
        options: { modelRetries: 2, modelRetryDelay: "100 millis" }
      })
      const fiber = yield* Effect.fork(a.pipeline.process({ request: "q", requestId: "r500" }))
      yield* TestClock.adjust("99 millis")
      expect(a.primary.calls).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      expect(a.primary.calls).toHaveLength(2)
      yield* TestClock.adjust("199 millis")
      expect(a.primary.calls).toHaveLength(2)
      yield* TestClock.adjust("1 millis")
      const error = failure(yield* Fiber.await(fiber))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "model_failed", phase: 1 })
      expect(a.primary.calls).toHaveLength(3)
      const record = yield* a.record("r500")
      expect(callsOf(record)).toEqual([1, 2, 3].map((n) => ["planning", "primary", 0, n, "failed"]))
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "PlanningError" })
    }))

  it.scoped("issue 9: a 400 is not retried; a retry-after above modelMaxRetryDelay is not waited for", () =>
    Effect.gen(function*() {
      const bad = yield* agent({ replies: [Flaky.fail(Flaky.httpStatus(400))] })
      const error = failure(yield* Effect.exit(bad.pipeline.process({ request: "q", requestId: "r400" })))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
      expect(bad.primary.calls).toHaveLength(1)

      const slow = yield* agent({
        replies: [Flaky.fail(Flaky.httpStatus(429, { "retry-after": "120" }))],
        options: { modelMaxRetryDelay: "1 minute" }
      })
      const refused = failure(yield* Effect.exit(slow.pipeline.process({ request: "q", requestId: "r429-long" })))
      expect(refused).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
      expect(slow.primary.calls).toHaveLength(1)
    }))
})

describe("model calls: timeouts", () => {
  it.scoped("issue 9: a model that never answers times out per attempt, is retried, then PlanningError timed_out; attempts recorded as timed_out", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.hang, Flaky.hang],
        options: { modelTimeout: "5 seconds", modelRetries: 1, modelRetryDelay: "1 second" }
      })
      const exit = yield* driven(a.pipeline.process({ request: "q", requestId: "hung-model" }), "1 second")
      expect(failure(exit)).toMatchObject({ _tag: "PlanningError", reason: "timed_out" })
      const record = yield* a.record("hung-model")
      expect(callsOf(record)).toEqual([
        ["planning", "primary", 0, 1, "timed_out"],
        ["planning", "primary", 0, 2, "timed_out"]
      ])
      expect(record.modelCalls?.map((c) => c.durationMs)).toEqual([5000, 5000])
    }))

  it.scoped("issue 9: a hung synthesis call is SynthesisError timed_out", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.text(NO_STEPS), Flaky.hang],
        options: { modelTimeout: "3 seconds", modelRetries: 0 }
      })
      const exit = yield* driven(a.pipeline.process({ request: "q", requestId: "hung-synth" }), "1 second")
      expect(failure(exit)).toMatchObject({ _tag: "SynthesisError", reason: "timed_out" })
    }))

  it.scoped("issue 9: a hung tool is interrupted at toolTimeout: its step fails timed_out, the request goes on to its answer", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.text(JSON.stringify(plan([stuckStep("s1"), quoteStep("q1")]))), Flaky.text("partial answer")],
        tools: [stuck()],
        options: { toolTimeout: "2 seconds" }
      })
      const exit = yield* driven(a.pipeline.process({ request: "q", requestId: "hung-tool" }), "1 second")
      if (Exit.isFailure(exit)) throw new Error("expected an answer")
      const response = completed(exit.value)
      expect(response.response).toBe("partial answer")
      const steps = response.phases[0]!.steps
      expect(steps.map((s) => [s.step_id, s.status])).toEqual([["s1", "failed"], ["q1", "succeeded"]])
      expect(steps[0]!.error).toContain("timed_out: no result within 2s")
    }))

  it.scoped("issue 9: a tool entry's own timeout overrides toolTimeout", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.text(JSON.stringify(plan([stuckStep("s1")]))), Flaky.text("done")],
        tools: [stuck("10 seconds")],
        options: { toolTimeout: "1 second" }
      })
      const fiber = yield* Effect.fork(a.pipeline.process({ request: "q", requestId: "tool-own" }))
      yield* TestClock.adjust("5 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("5 seconds")
      const response = completed(yield* Fiber.join(fiber))
      expect(response.phases[0]!.steps[0]!.error).toContain("no result within 10s")
    }))
})

describe("model calls: re-asks", () => {
  it.scoped("issue 9: an answer that is not a plan is asked again with the rejected output and the decode error; each ask is an inference run hooks see", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const watcher = Hook.make({
        name: "watcher",
        around: {
          inference: (call: Operation.Call<"inference">) =>
            Effect.sync(() => (result: Operation.Result) =>
              Effect.sync(() => void runs.push(`${call.payload.purpose}:${result.outcome}`))
            )
        }
      })
      const a = yield* agent({
        replies: [Flaky.text("{\"steps\": \"nope\"}"), Flaky.text(PLAN), Flaky.text("answer")],
        hooks: [watcher]
      })
      const response = completed(yield* a.pipeline.process({ request: "quote ACME", requestId: "reask" }))
      expect(response.phases[0]!.steps.map((s) => s.step_id)).toEqual(["q1"])
      // The first run failed (its answer was not a plan); the re-ask is a run of its own.
      expect(runs).toEqual(["planning:failed", "planning:completed", "synthesis:completed"])
      const reask = a.primary.calls[1]!.prompt
      expect(reask).toContain("<rejected_output>\n{\"steps\": \"nope\"}\n</rejected_output>")
      // The decode error, escaped like any content of a section.
      expect(reask).toMatch(/<output_error>\n[^<]*Expected ReadonlyArray&lt;RoutingStep&gt;/)
      const record = yield* a.record("reask")
      expect(callsOf(record)).toEqual([
        ["planning", "primary", 0, 1, "succeeded"],
        ["planning", "primary", 1, 1, "succeeded"],
        ["synthesis", "primary", 0, 1, "succeeded"]
      ])
    }))

  it.scoped("issue 9: when the re-asks are spent, PlanningError invalid_plan keeps the raw output (whole, not an excerpt); planReasks 0 asks once", () =>
    Effect.gen(function*() {
      const long = `not a plan ${"x".repeat(5000)}`
      const a = yield* agent({ replies: [Flaky.text(long)], options: { planReasks: 0 } })
      const error = failure(yield* Effect.exit(a.pipeline.process({ request: "q", requestId: "no-reask" })))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "invalid_plan", output: long })
      expect(a.primary.calls).toHaveLength(1)
      const record = yield* a.record("no-reask")
      expect(record.modelCalls?.[0]?.output).toBe(long)
    }))
})

describe("model calls: fallback", () => {
  it.scoped("issue 9: once the primary gave up, the fallback model answers (planning and synthesis); the record names which model answered", () =>
    Effect.gen(function*() {
      const down = Flaky.fail(Flaky.httpStatus(503))
      const a = yield* agent({
        replies: [down, down],
        fallback: [Flaky.text(NO_STEPS), Flaky.text("from the fallback")],
        options: { modelRetries: 0 }
      })
      const response = completed(yield* a.pipeline.process({ request: "q", requestId: "fallback" }))
      expect(response.response).toBe("from the fallback")
      expect(callsOf(yield* a.record("fallback"))).toEqual([
        ["planning", "primary", 0, 1, "failed"],
        ["planning", "fallback", 0, 1, "succeeded"],
        ["synthesis", "primary", 0, 1, "failed"],
        ["synthesis", "fallback", 0, 1, "succeeded"]
      ])
    }))

  it.scoped("issue 9: a stream falls back before it delivered text, never after", () =>
    Effect.gen(function*() {
      const before = yield* agent({
        replies: [Flaky.text(NO_STEPS), Flaky.fail(Flaky.httpStatus(500))],
        fallback: [Flaky.stream(["fall", "back"])],
        options: { modelRetries: 0 }
      })
      const events = yield* Stream.runCollect(before.pipeline.stream({ request: "q", requestId: "fb-stream" }))
      const tokens = [...events].flatMap((e) => (e._tag === "Token" ? [e.text] : []))
      expect(tokens).toEqual(["fall", "back"])

      const after = yield* agent({
        replies: [Flaky.text(NO_STEPS), Flaky.stream(["half "], "cut")],
        fallback: [Flaky.stream(["never"])],
        options: { modelRetries: 2 }
      })
      const exit = yield* Effect.exit(Stream.runCollect(after.pipeline.stream({ request: "q", requestId: "fb-cut" })))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(after.fallback?.calls).toEqual([])
      expect(after.primary.calls.filter((c) => c.kind === "stream")).toHaveLength(1)
      const record = yield* after.record("fb-cut")
      expect(record.deliveredText).toBe("half ")
      const streamed = record.modelCalls?.find((c) => c.streamed)
      expect(streamed).toMatchObject({ outcome: "failed", output: "half ", model: "primary" })
    }))
})

describe("model calls: streams", () => {
  it.scoped("issue 9: a stream that failed before its first token is retried; one that stalls mid-way times out (SynthesisError timed_out), keeping what was delivered", () =>
    Effect.gen(function*() {
      const retried = yield* agent({
        replies: [Flaky.text(NO_STEPS), Flaky.fail(Flaky.reset()), Flaky.stream(["a", "b"])],
        options: { modelRetryDelay: "1 millis" }
      })
      const events = yield* driven(
        Stream.runCollect(retried.pipeline.stream({ request: "q", requestId: "s-retry" })),
        "1 millis"
      )
      if (Exit.isFailure(events)) throw new Error("expected the retried stream to succeed")
      expect([...events.value].flatMap((e) => (e._tag === "Token" ? [e.text] : []))).toEqual(["a", "b"])

      const stalled = yield* agent({
        replies: [Flaky.text(NO_STEPS), Flaky.stream(["first "], "stall")],
        options: { modelTimeout: "2 seconds" }
      })
      const exit = yield* driven(
        Stream.runCollect(stalled.pipeline.stream({ request: "q", requestId: "s-stall" })),
        "1 second"
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const record = yield* stalled.record("s-stall")
      expect(record.deliveredText).toBe("first ")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "SynthesisError" })
      expect(record.lifecycle?.errorMessage).toContain("did not answer within 2s")
      expect(record.modelCalls?.find((c) => c.streamed)).toMatchObject({ outcome: "timed_out", output: "first " })
    }))
})

describe("model calls: what the record keeps", () => {
  const run = (modelCalls: "full" | "metadata" | "off") =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [
          Flaky.text(NO_STEPS, { inputTokens: 120, outputTokens: 8 }),
          Flaky.text("the answer", { inputTokens: 90, outputTokens: 3 })
        ],
        options: { modelCalls }
      })
      completed(yield* a.pipeline.process({ request: "secret question", requestId: `keep-${modelCalls}` }))
      return yield* a.record(`keep-${modelCalls}`)
    })

  it.scoped("issue 9 / seed 000 §9: full keeps prompt, raw output, tokens, model id, timing — apart from the final response", () =>
    Effect.gen(function*() {
      const record = yield* run("full")
      const [planning, synthesis] = record.modelCalls ?? []
      expect(planning).toMatchObject({
        purpose: "planning",
        phase: 1,
        output: NO_STEPS,
        modelId: "flaky-1",
        usage: { inputTokens: 120, outputTokens: 8 }
      })
      expect(planning?.prompt).toContain("secret question")
      expect(synthesis).toMatchObject({
        purpose: "synthesis",
        output: "the answer",
        usage: { inputTokens: 90, outputTokens: 3 },
        streamed: false
      })
      expect(typeof synthesis?.startedAt).toBe("number")
      expect(record.finalResponse).toBe("the answer")
    }))

  it.scoped("issue 9: metadata keeps no prompt and no output (prompts are sensitive), but tokens, timing and outcome; off keeps no calls", () =>
    Effect.gen(function*() {
      const record = yield* run("metadata")
      expect(record.modelCalls).toHaveLength(2)
      for (const call of record.modelCalls ?? []) {
        expect(call).not.toHaveProperty("prompt")
        expect(call).not.toHaveProperty("output")
        expect(call.outcome).toBe("succeeded")
        expect(call.usage?.inputTokens).toBeGreaterThan(0)
      }
      expect(JSON.stringify(record.modelCalls)).not.toContain("secret question")
      const off = yield* run("off")
      expect(off.modelCalls).toBeUndefined()
    }))
})
