import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import {
  AfterExecution,
  AfterSynthesis,
  Hook,
  PipelineContext,
  Policy,
  PromptBuilder,
  RequestScope,
  type Subscription
} from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, weatherStep } from "../support/Harness.js"
import { HookRuntime, PipelineHooks, RequestRecorder } from "../support/Internal.js"

const twoPhases = {
  plans: [plan([quoteStep("s1")], false), plan([weatherStep("s2")], true)],
  synthesis: "model draft"
}

const append = (name: string, suffix: string) =>
  Hook.make({ name, afterSynthesis: (_c, text) => Effect.succeed(`${text}${suffix}`) })

describe("AfterExecution", () => {
  it.effect("C11: runs once after all phases' tools and before synthesis, seeing every phase's results", () =>
    Effect.gen(function*() {
      const observed: Array<{ phases: number; steps: ReadonlyArray<string>; textPrompts: number }> = []
      let h: { readonly prompts: ReadonlyArray<{ readonly kind: string }> } | undefined
      const observer = Hook.make({
        name: "observer",
        afterExecution: (_c, results) =>
          Effect.sync(() =>
            void observed.push({
              phases: results.phases.length,
              steps: results.steps.map((s) => `${s.step_id}:${s.status}`),
              textPrompts: h?.prompts.filter((p) => p.kind !== "plan").length ?? -1
            })
          )
      })
      const harness = yield* makeHarness({ hooks: [observer], script: twoPhases })
      h = harness
      yield* harness.pipeline.process({ request: "q" })
      expect(observed).toEqual([{ phases: 2, steps: ["s1:succeeded", "s2:succeeded"], textPrompts: 0 }])
      expect(harness.prompts.filter((p) => p.kind === "text")).toHaveLength(1)
    }))

  it.effect("C11: observe-only — a hook cannot change the results synthesis sees", () =>
    Effect.gen(function*() {
      const tamper = Hook.make({
        name: "tamper",
        afterExecution: (_c, results) =>
          Effect.try(() => {
            const step = results.steps[0] as unknown as { output: unknown }
            step.output = { symbol: "FORGED" }
          })
      })
      const h = yield* makeHarness({ hooks: [tamper], script: { plans: [plan([quoteStep("s1")])], synthesis: "x" } })
      const result = yield* h.pipeline.process({ request: "q", requestId: "tamper" })
      const synthesisPrompt = h.prompts.find((p) => p.kind === "text")?.prompt ?? ""
      const results = PromptBuilder.readSection(synthesisPrompt, "step_results") ?? ""
      expect(results).toContain("\"symbol\":\"ACME\"")
      expect(results).not.toContain("FORGED")
      expect(result._tag === "Completed" && result.response.phases[0]?.steps[0]?.output).toMatchObject({
        symbol: "ACME"
      })
      const inv = (yield* h.record("tamper")).hookInvocations[0]
      expect(inv?.outcome).toBe("failed")
      expect(inv?.decision).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
    }))

  it.effect("C11: observe-only — every hook sees one deeply frozen copy; nested writes are refused and never reach synthesis, the response or the record", () =>
    Effect.gen(function*() {
      const views: Array<Hook.ExecutionResults> = []
      const writes: Array<boolean> = []
      const writer = Hook.make({
        name: "writer",
        afterExecution: (_c, results) =>
          Effect.sync(() => {
            views.push(results)
            // Reflect reports a refused write instead of throwing, so the hook completes.
            writes.push(
              Reflect.set(results.steps[0]!.output as object, "symbol", "FORGED"),
              Reflect.set(results.phases[0]!.plan.steps[0]!.parameters, "symbol", "FORGED"),
              Reflect.set(results.steps, "0", null),
              Reflect.deleteProperty(results.phases[0]!.steps[0]!, "output")
            )
          })
      })
      const reader = Hook.make({
        name: "reader",
        afterExecution: (_c, results) => Effect.sync(() => void views.push(results))
      })
      const h = yield* makeHarness({
        hooks: [writer, reader],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "x" }
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "frozen" })
      expect(writes).toEqual([false, false, false, false])
      const [view, again] = views
      expect(again).toBe(view)
      expect(Object.isFrozen(view?.steps[0]?.output)).toBe(true)
      expect(Object.isFrozen(view?.phases[0]?.plan.steps[0]?.parameters)).toBe(true)
      // One snapshot of the results: a step is the same object in its phase and in `steps`.
      expect(view?.steps[0]).toBe(view?.phases[0]?.steps[0])
      const synthesisPrompt = h.prompts.find((p) => p.kind === "text")?.prompt ?? ""
      expect(PromptBuilder.readSection(synthesisPrompt, "step_results")).not.toContain("FORGED")
      if (result._tag !== "Completed") return expect.unreachable(result._tag)
      const real = result.response.phases[0]?.steps[0]
      // The real results are neither shared with the hooks nor frozen.
      expect(real).not.toBe(view?.steps[0])
      expect(Object.isFrozen(real?.output)).toBe(false)
      expect(real?.output).toMatchObject({ symbol: "ACME" })
      expect(result.response.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "ACME" })
      const record = yield* h.record("frozen")
      expect(record.phases[0]?.steps[0]?.output).toMatchObject({ symbol: "ACME" })
      expect(record.hookInvocations.map((i) => [i.name, i.status])).toEqual([["writer", "completed"], [
        "reader",
        "completed"
      ]])
    }))

  it.effect("C11: the view is what a structured clone was, deeply frozen: shared steps, holes, own __proto__ keys and class instances as before", () =>
    Effect.gen(function*() {
      const participant = (
        id: string,
        handler: AfterExecution.Handler
      ): Subscription.Participant<AfterExecution.Handler> => ({
        id,
        index: 0,
        point: "after_execution",
        handler,
        spanName: `pipeline.hook.after_execution.${id}`,
        enabled: true,
        execution: Policy.blocking,
        failure: "fail_open",
        grant: "all",
        after: []
      })
      const nullProto: Record<string, unknown> = Object.create(null)
      nullProto.k = [1, 2]
      const output = JSON.parse("{\"__proto__\":{\"own\":true},\"list\":[1,{\"a\":null}],\"s\":\"x\"}")
      const step = {
        step_id: "s1",
        namespace: "n",
        agent: "a",
        capability: "c",
        status: "succeeded" as const,
        output,
        startedAt: 1,
        duration: 2
      }
      // Not JSON, but a structured clone kept them: the view must too.
      const odd = { ...step, step_id: "s2", holes: [1, , 3], nullProto, when: new Date(0), error: undefined }
      const phase = { phase: 1, plan: { steps: [], terminal: true }, steps: [step, odd] }
      const results = { phases: [phase], steps: [step, odd] }
      const expected = structuredClone(results)
      let view: Hook.ExecutionResults | undefined
      const stage = AfterExecution.make(
        [participant("observer", (_c, r) => Effect.sync(() => void (view = r)))],
        (_policy, run) => Effect.asVoid(Effect.forkDaemon(run))
      )
      // Outside any request: nothing is recorded.
      yield* stage.run({
        context: { requestId: PipelineContext.RequestId.make("view"), request: "q", metadata: {}, enrichments: {} }
      }, results)
      expect(view).toStrictEqual(expected)
      expect(view?.steps[1]).toBe(view?.phases[0]?.steps[1])
      expect(Object.keys(view?.steps[0]?.output ?? {})).toEqual(["__proto__", "list", "s"])
      expect(Object.getPrototypeOf(view?.steps[0]?.output)).toBe(Object.prototype)
      const frozen = (u: unknown): boolean =>
        typeof u !== "object" || u === null || (Object.isFrozen(u) && Object.values(u).every(frozen))
      expect(frozen(view)).toBe(true)
      // The results themselves are untouched.
      expect(frozen(results)).toBe(false)
      expect(Object.isFrozen(step)).toBe(false)
    }))

  it.effect("C11: failures fail open", () =>
    Effect.gen(function*() {
      const failing = Hook.make({ name: "analytics", afterExecution: () => Effect.fail("analytics down") })
      const h = yield* makeHarness({
        hooks: [failing, append("after", "!")],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "ok" }
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "ae" })
      expect(result._tag === "Completed" && result.response.response).toBe("ok!")
      const inv = (yield* h.record("ae")).hookInvocations[0]
      expect(inv?.error).toBe("analytics down")
    }))
})

describe("AfterSynthesis", () => {
  it.effect("C12: hooks chain strings; the final response and the raw draft are both kept", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [append("a", " [a]"), append("b", " [b]")],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "chain" })
      expect(result._tag === "Completed" && result.response.response).toBe("draft [a] [b]")
      expect(result._tag === "Completed" && result.response.rawDraft).toBe("draft")
      const record = yield* h.record("chain")
      expect(record.rawDraft).toBe("draft")
      expect(record.finalResponse).toBe("draft [a] [b]")
    }))

  it.effect("C12: a failing hook (or one returning a non-string) keeps the previous string", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          append("a", " [a]"),
          Hook.make({ name: "fails", afterSynthesis: () => Effect.fail(new Error("guardrail service down")) }),
          Hook.make({ name: "wrong", afterSynthesis: () => Effect.succeed(42 as unknown as string) }),
          append("c", " [c]")
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "keep" })
      expect(result._tag === "Completed" && result.response.response).toBe("draft [a] [c]")
      const record = yield* h.record("keep")
      expect(record.hookInvocations.map((i) => [i.name, i.outcome])).toEqual([
        ["a", "succeeded"],
        ["fails", "failed"],
        ["wrong", "failed"],
        ["c", "succeeded"]
      ])
      expect(record.hookInvocations[1]?.error).toBe("guardrail service down")
      expect(record.hookInvocations[2]?.error).toMatch(/must return a string, got number/)
    }))

  it.scoped("a stage's runs are recorded on the request the fiber works for (RequestScope.currentRequest), not on an argument; outside any request, or with recording off, on nothing", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(PipelineHooks.layer<never>([append("a", " [a]")]))
      const stage = Context.get(context, AfterSynthesis.AfterSynthesis)
      const operations = Context.get(context, HookRuntime.HookRuntime).operations
      const scope = yield* Effect.scope
      const initial = {
        schemaVersion: 1,
        requestId: "in",
        recordRevision: 0,
        mode: "pipeline",
        request: "q",
        metadata: {},
        phases: [],
        hookInvocations: [],
        diagnostics: []
      } as const
      const request: Hook.StageRequest = {
        context: { requestId: PipelineContext.RequestId.make("in"), request: "q", metadata: {}, enrichments: {} }
      }
      const inRequest = (recorder: RequestRecorder.RequestRecorder) =>
        Effect.locally(stage.run(request, "draft"), RequestScope.currentRequest, {
          scope,
          requestId: "in",
          recorder,
          operations
        })

      const recorder = RequestRecorder.make(() => Effect.void, initial)
      expect(yield* inRequest(recorder)).toBe("draft [a]")
      expect(recorder.current().hookInvocations.map((i) => [i.stage, i.name, i.outcome])).toEqual([
        ["after_synthesis", "a", "succeeded"]
      ])
      // Recording off: the request's disabled recorder, and the stage still runs.
      const off = RequestRecorder.disabled(initial)
      expect(yield* inRequest(off)).toBe("draft [a]")
      expect(off.current().hookInvocations).toEqual([])
      // Outside any request: nothing is recorded, and the request's recorder is untouched.
      expect(yield* stage.run(request, "draft")).toBe("draft [a]")
      expect(recorder.current().hookInvocations).toHaveLength(1)
    }))
})

describe("panics", () => {
  it.effect("C13: a panic in a fail-open hook propagates, is recorded as propagate_panic, and later hooks do not run", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "boom", beforePlanning: () => Effect.die(new Error("kaboom")) }),
          Hook.make({ name: "later", beforePlanning: () => Effect.sync(() => void calls.push("later")) })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "x" }
      })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "q", requestId: "panic" }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      if (Exit.isFailure(exit)) {
        const defect = Cause.dieOption(exit.cause)
        expect(Option.isSome(defect) && defect.value instanceof Error && defect.value.message).toBe("kaboom")
      }
      expect(calls).toEqual([])
      expect(h.plansUsed()).toBe(0)
      const record = yield* h.record("panic")
      expect(record.lifecycle?.status).toBe("failed")
      expect(record.lifecycle?.errorTag).toBe("Defect")
      expect(record.hookInvocations).toHaveLength(1)
      expect(record.hookInvocations[0]?.outcome).toBe("failed")
      expect(record.hookInvocations[0]?.error).toBe("panic: kaboom")
      expect(record.hookInvocations[0]?.decision).toEqual({
        policy: "fail_open",
        action: "propagate_panic",
        reason: "panic"
      })
    }))

  it.effect("C13: a synchronous throw inside a handler is a panic too", () =>
    Effect.gen(function*() {
      const thrower = Hook.make({
        name: "thrower",
        afterSynthesis: () => {
          throw new TypeError("undefined is not a function")
        }
      })
      const h = yield* makeHarness({ hooks: [thrower], script: { plans: [plan([quoteStep("s1")])], synthesis: "raw" } })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "q", requestId: "throw" }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      const record = yield* h.record("throw")
      // The model's draft was saved before AfterSynthesis; no final response exists.
      expect(record.rawDraft).toBe("raw")
      expect(record.finalResponse).toBeUndefined()
      expect(record.hookInvocations[0]?.decision?.action).toBe("propagate_panic")
    }))

  it.effect("C13: a panic in a later phase keeps completed earlier phases in the failed record", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "phase2-bomb",
            afterPlanning: (_c, p, info) => (info.phase === 2 ? Effect.die("phase 2 panic") : Effect.succeed(p))
          })
        ],
        script: twoPhases
      })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "q", requestId: "p2" }))
      expect(Exit.isFailure(exit)).toBe(true)
      const record = yield* h.record("p2")
      expect(record.lifecycle?.status).toBe("failed")
      expect(record.phases.map((p) => p.phase)).toEqual([1])
      expect(record.phases[0]?.steps[0]?.status).toBe("succeeded")
      expect(record.hookInvocations.map((i) => [i.phase, i.outcome, i.decision?.action])).toEqual([
        [1, "succeeded", undefined],
        [2, "failed", "propagate_panic"]
      ])
    }))

  it.effect("C13: a panic in the required hook propagates as a panic, not as RequiredAfterPlanningError", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.required({ name: "gov", afterPlanning: () => Effect.die("gov panic") })],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "x" }
      })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "q", requestId: "gov" }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      const inv = (yield* h.record("gov")).hookInvocations[0]
      expect(inv?.decision).toEqual({ policy: "fail_closed", action: "propagate_panic", reason: "panic" })
    }))
})
