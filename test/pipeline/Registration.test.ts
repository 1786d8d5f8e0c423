import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import { AfterSynthesis, Hook, PipelineError } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, tracer } from "../support/Harness.js"
import { HookRegistration, PipelineHooks } from "../support/Internal.js"

const passThrough = (name: string) => Hook.make({ name, afterPlanning: (_ctx, p) => Effect.succeed(p) })

describe("registration", () => {
  it.effect("C1: registration order is execution order within every stage", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [tracer("a", calls), tracer("b", calls), tracer("c", calls)],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "quote ACME" })
      expect(calls).toEqual([
        "before_planning:a",
        "before_planning:b",
        "before_planning:c",
        "after_planning:a",
        "after_planning:b",
        "after_planning:c",
        "after_execution:a",
        "after_execution:b",
        "after_execution:c",
        "after_synthesis:a",
        "after_synthesis:b",
        "after_synthesis:c"
      ])
    }))

  it.effect("C1: an empty hook list is valid and the request completes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ hooks: [], script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "r-empty" })
      expect(result._tag).toBe("Completed")
      const record = yield* h.record("r-empty")
      expect(record.hookInvocations).toEqual([])
    }))

  it.effect("C1: partial hooks are skipped at stages they do not implement", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "only-synthesis", afterSynthesis: (_c, t) => Effect.sync(() => (calls.push("as"), t)) })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "quote", requestId: "r-partial" })
      expect(calls).toEqual(["as"])
      const record = yield* h.record("r-partial")
      expect(record.hookInvocations.map((i) => i.stage)).toEqual(["after_synthesis"])
    }))

  it("C2: a null or undefined entry fails construction with InvalidOrchestratorConfig naming its zero-based index", () => {
    const ok = Hook.make({ name: "ok", beforePlanning: () => Effect.void })
    for (
      const [hooks, index] of [
        [[null], 0],
        [[ok, undefined], 1],
        [[ok, ok, null, ok], 2]
      ] as const
    ) {
      const result = HookRegistration.validate(hooks)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left).toBeInstanceOf(PipelineError.InvalidOrchestratorConfig)
        expect(result.left._tag).toBe("InvalidOrchestratorConfig")
        expect(result.left._tag === "InvalidOrchestratorConfig" && result.left.index).toBe(index)
      }
    }
  })

  it("C2: a null entry is a general configuration error even when a required hook is present", () => {
    const required = Hook.required({ name: "gov", afterPlanning: (_c, p) => Effect.succeed(p) })
    const result = HookRegistration.validate([required, null])
    expect(Either.isLeft(result) && result.left._tag).toBe("InvalidOrchestratorConfig")
  })

  it.effect("C2: the registration Layer fails with the typed error (JavaScript callers too)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(PipelineHooks.layerUnknown([{ name: "a" }, undefined])))
      expect(error._tag).toBe("InvalidOrchestratorConfig")
      expect(error._tag === "InvalidOrchestratorConfig" && error.index).toBe(1)
      const notHook = yield* Effect.flip(
        Layer.build(PipelineHooks.layerUnknown([{ name: "x", afterSynthesis: "nope" }]))
      )
      expect(notHook._tag === "InvalidOrchestratorConfig" && notHook.detail).toMatch(/afterSynthesis/)
      const nameless = yield* Effect.flip(Layer.build(PipelineHooks.layerUnknown([{ beforePlanning: () => 1 }])))
      expect(nameless._tag === "InvalidOrchestratorConfig" && nameless.index).toBe(0)
      const notArray = yield* Effect.flip(Layer.build(PipelineHooks.layerUnknown("hooks")))
      expect(notArray._tag).toBe("InvalidOrchestratorConfig")
    }).pipe(Effect.scoped))

  it("C3: a required marker without an afterPlanning handler is stage_drift", () => {
    const drifted = { name: "drifted", required: true, beforePlanning: () => Effect.void }
    const result = HookRegistration.validate([drifted])
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left._tag).toBe("InvalidRequiredAfterPlanningHook")
      expect(result.left._tag === "InvalidRequiredAfterPlanningHook" && result.left.reason).toBe("stage_drift")
      expect(result.left._tag === "InvalidRequiredAfterPlanningHook" && result.left.hookName).toBe("drifted")
    }
  })

  it("C3: two required hooks are multiple_required", () => {
    const a = Hook.required({ name: "a", afterPlanning: (_c, p) => Effect.succeed(p) })
    const b = Hook.required({ name: "b", afterPlanning: (_c, p) => Effect.succeed(p) })
    const result = HookRegistration.validate([a, b])
    expect(Either.isLeft(result) && result.left._tag === "InvalidRequiredAfterPlanningHook" && result.left.reason)
      .toBe("multiple_required")
    expect(Either.isLeft(result) && result.left._tag === "InvalidRequiredAfterPlanningHook" && result.left.index)
      .toBe(1)
  })

  it("C3: an after-planning hook registered after the required one is required_not_terminal", () => {
    const gov = Hook.required({ name: "gov", afterPlanning: (_c, p) => Effect.succeed(p) })
    const result = HookRegistration.validate([passThrough("early"), gov, passThrough("late")])
    expect(Either.isLeft(result) && result.left._tag === "InvalidRequiredAfterPlanningHook" && result.left.reason)
      .toBe("required_not_terminal")
    expect(Either.isLeft(result) && result.left._tag === "InvalidRequiredAfterPlanningHook" && result.left.hookName)
      .toBe("late")
  })

  it("C3: hooks for other stages may follow the required hook", () => {
    const gov = Hook.required({ name: "gov", afterPlanning: (_c, p) => Effect.succeed(p) })
    const after = Hook.make({
      name: "other-stages",
      beforePlanning: () => Effect.void,
      afterExecution: () => Effect.void,
      afterSynthesis: (_c, t) => Effect.succeed(t)
    })
    const result = HookRegistration.validate([passThrough("early"), gov, after])
    expect(Either.isRight(result)).toBe(true)
  })

  it.effect("C3: the pipeline Layer refuses to build with an invalid required composition", () =>
    Effect.gen(function*() {
      const a = Hook.required({ name: "a", afterPlanning: (_c, p) => Effect.succeed(p) })
      const error = yield* Effect.flip(makeHarness({ hooks: [a, a] }))
      expect(error._tag).toBe("InvalidRequiredAfterPlanningHook")
    }).pipe(Effect.scoped))
})

describe("request ids", () => {
  it.effect("a reused requestId is refused as InvalidRequest and the first record is kept intact", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: { plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "first", requestId: "dup" })
      const before = yield* h.record("dup")
      const error = yield* Effect.flip(h.pipeline.process({ request: "second", requestId: "dup" }))
      expect(error._tag).toBe("InvalidRequest")
      expect(error).toMatchObject({ reason: "request_id_in_use", path: "requestId" })
      expect(error.message).toBe("invalid request at requestId: \"dup\" already names a stored execution record")
      expect(yield* h.record("dup")).toEqual(before)
      // Generated ids never collide.
      const a = yield* h.pipeline.process({ request: "third" })
      expect(a._tag).toBe("Completed")
    }))
})

describe("hooks that need construction", () => {
  it.effect("C1: PipelineHooks.layerEffect builds hooks with an Effect, then validates and registers them in order", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const built = PipelineHooks.layerEffect(
        Effect.sync(() => [tracer("built-a", calls), tracer("built-b", calls)])
      )
      const context = yield* Layer.build(built)
      const afterSynthesis = Context.get(context, AfterSynthesis.AfterSynthesis)
      expect(afterSynthesis.hookCount).toBe(2)
      const notTerminal = [tracer("a", calls), { ...tracer("gov", calls), required: true }, tracer("late", calls)]
      const invalid = yield* Effect.flip(Layer.build(PipelineHooks.layerEffect(Effect.succeed(notTerminal))))
      expect(invalid._tag).toBe("InvalidRequiredAfterPlanningHook")
      const failing = yield* Effect.flip(
        Layer.build(PipelineHooks.layerEffect<never, "config missing", never>(Effect.fail("config missing")))
      )
      expect(failing).toBe("config missing")
    }).pipe(Effect.scoped))
})
