/**
 * Seed 001 subscriptions at the four pipeline stages (before_planning,
 * after_planning, after_execution, after_synthesis): unique ids, priority
 * and dependency ordering (C1 as the default), construction errors
 * (`InvalidHookSubscription`), C3 under priorities and dependencies,
 * disabled hooks and dependency-failed skips, contribution hashes, the
 * fields of hook-run records and their spans.
 *
 * Execution, failure and capability policies are in `Policies.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { ExecutionRecord, Hook } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, tracer } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"
import { HookRegistration } from "../support/Internal.js"
import { expectAccepted, expectRefused, runOf, runsAt, statusesAt, untypedHook } from "./SubscriptionsSupport.js"

const STAGES = ["before_planning", "after_planning", "after_execution", "after_synthesis"] as const

const script = { plans: [plan([quoteStep("s1")])], synthesis: "draft" }

type Extra = Partial<Omit<Hook.Hook<never>, "name">>

/** A hook at all four stages that records its calls, with subscription options. */
const traced = (name: string, calls: Array<string>, extra: Extra = {}): Hook.Hook<never> =>
  Hook.make({ ...tracer(name, calls), ...extra })

const bp = (name: string, extra: Extra = {}) => Hook.make({ name, beforePlanning: () => Effect.void, ...extra })
const ap = (name: string, extra: Extra = {}) =>
  Hook.make({ name, afterPlanning: (_c, p) => Effect.succeed(p), ...extra })
const ae = (name: string, extra: Extra = {}) => Hook.make({ name, afterExecution: () => Effect.void, ...extra })
const as = (name: string, extra: Extra = {}) =>
  Hook.make({ name, afterSynthesis: (_c, t) => Effect.succeed(t), ...extra })
const required = (name: string, extra: Omit<Extra, "afterPlanning" | "required"> = {}) =>
  Hook.required({ name, afterPlanning: (_c, p) => Effect.succeed(p), ...extra })

/** The calls at one stage, as hook names. */
const callsAt = (calls: ReadonlyArray<string>, stage: (typeof STAGES)[number]) =>
  calls.filter((c) => c.startsWith(`${stage}:`)).map((c) => c.slice(stage.length + 1))

// ---------------------------------------------------------------------------
// Ordering
// ---------------------------------------------------------------------------

describe("seed 001 ordering", () => {
  it.effect("seed 001 ordering: without priorities or dependencies, registration order is execution order at every stage, and sequence is the position (C1 default)", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [traced("c", calls), traced("a", calls), traced("b", calls)],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "c1" })
      const record = yield* h.record("c1")
      for (const stage of STAGES) {
        expect(callsAt(calls, stage), stage).toEqual(["c", "a", "b"])
        expect(runsAt(record, stage).map((i) => [i.name, i.sequence]), stage).toEqual([["c", 0], ["a", 1], ["b", 2]])
      }
    }))

  it.effect("seed 001 ordering: higher priority runs first; equal priority keeps registration order; default priority is 0 (C1) — at all four stages", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          traced("low", calls, { priority: -5 }),
          traced("plain", calls),
          traced("high", calls, { priority: 10 }),
          traced("mid-1", calls, { priority: 5 }),
          traced("zero", calls, { priority: 0 }),
          traced("mid-2", calls, { priority: 5 })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "prio" })
      const expected = ["high", "mid-1", "mid-2", "plain", "zero", "low"]
      const record = yield* h.record("prio")
      for (const stage of STAGES) {
        expect(callsAt(calls, stage), stage).toEqual(expected)
        // The record's sequence is the position in the point's order.
        expect(runsAt(record, stage).map((i) => [i.name, i.sequence]), stage).toEqual(expected.map((n, i) => [n, i]))
      }
    }))

  it.effect("seed 001 ordering: fractional and negative priorities order like numbers (higher first)", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          traced("minus-half", calls, { priority: -0.5 }),
          traced("one-and-half", calls, { priority: 1.5 }),
          traced("minus-ten", calls, { priority: -10 }),
          traced("one", calls, { priority: 1 })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME" })
      for (const stage of STAGES) {
        expect(callsAt(calls, stage), stage).toEqual(["one-and-half", "one", "minus-half", "minus-ten"])
      }
    }))

  it.effect("seed 001 ordering: a dependency runs before its dependent even when the dependent has the higher priority (dependencies first)", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          traced("dependent", calls, { priority: 10, dependsOn: ["base"] }),
          traced("base", calls),
          traced("tail", calls, { priority: -1 })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "deps" })
      const record = yield* h.record("deps")
      for (const stage of STAGES) {
        expect(callsAt(calls, stage), stage).toEqual(["base", "dependent", "tail"])
        expect(statusesAt(record, stage), stage).toEqual([
          ["base", "completed"],
          ["dependent", "completed"],
          ["tail", "completed"]
        ])
      }
    }))

  it.effect("seed 001 ordering: dependencies are transitive — registered [c→b, b→a, a], the hooks run a, b, c at every stage", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          traced("c", calls, { dependsOn: ["b"], priority: 3 }),
          traced("b", calls, { dependsOn: ["a"], priority: 2 }),
          traced("a", calls)
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME" })
      for (const stage of STAGES) expect(callsAt(calls, stage), stage).toEqual(["a", "b", "c"])
    }))

  it.effect("seed 001 ordering: a hook may depend on several hooks; it runs after all of them", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          traced("joiner", calls, { dependsOn: ["left", "right"], priority: 100 }),
          traced("left", calls),
          traced("right", calls, { priority: -3 })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME" })
      for (const stage of STAGES) expect(callsAt(calls, stage), stage).toEqual(["left", "right", "joiner"])
    }))

  it.effect("seed 001 ordering: a dependency orders only the points both hooks handle; elsewhere the dependent is ordered by priority and is not skipped", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const push = (entry: string) => Effect.sync(() => void calls.push(entry))
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "dependent",
            priority: 5,
            dependsOn: ["base"],
            beforePlanning: () => push("before_planning:dependent"),
            afterSynthesis: (_c, t) => Effect.as(push("after_synthesis:dependent"), t)
          }),
          Hook.make({ name: "base", beforePlanning: () => push("before_planning:base") }),
          Hook.make({
            name: "other",
            priority: 1,
            afterSynthesis: (_c, t) => Effect.as(push("after_synthesis:other"), t)
          })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "partial-deps" })
      expect(calls).toEqual([
        "before_planning:base",
        "before_planning:dependent",
        // base does not handle after_synthesis: priority decides there.
        "after_synthesis:dependent",
        "after_synthesis:other"
      ])
      const record = yield* h.record("partial-deps")
      expect(statusesAt(record, "after_synthesis")).toEqual([["dependent", "completed"], ["other", "completed"]])
    }))
})

// ---------------------------------------------------------------------------
// Construction errors
// ---------------------------------------------------------------------------

describe("seed 001 construction: InvalidHookSubscription", () => {
  it.effect("seed 001 unique ids: two hooks with the same name are duplicate_id, even at different points", () =>
    expectRefused([bp("same"), as("same")], "duplicate_id", "same", /hooks 0 and 1/))

  it.effect("seed 001 unique ids: a disabled hook still claims its name (duplicate_id)", () =>
    expectRefused([ae("dup", { enabled: false }), bp("ok"), ae("dup")], "duplicate_id", "dup", /hooks 0 and 2/))

  it.effect("seed 001 unique ids: a required hook and an ordinary hook sharing a name are duplicate_id", () =>
    expectRefused([bp("gov"), required("gov")], "duplicate_id", "gov"))

  it("C3 before seed 001: the same required hook registered twice is multiple_required (checked before duplicate_id)", () => {
    const gov = required("gov")
    const result = HookRegistration.validate([gov, gov])
    if (Either.isRight(result)) return expect.unreachable("expected multiple_required")
    expect(result.left._tag).toBe("InvalidRequiredAfterPlanningHook")
    expect(result.left._tag === "InvalidRequiredAfterPlanningHook" && result.left.reason).toBe("multiple_required")
  })

  it.effect("seed 001 dependencies: depending on a name no hook has is missing_dependency", () =>
    expectRefused([bp("a", { dependsOn: ["ghost"] })], "missing_dependency", "a", /"ghost".*not registered/))

  it.effect("seed 001 dependencies: depending on a hook that shares no point with the dependent is missing_dependency", () =>
    expectRefused(
      [bp("early"), as("late", { dependsOn: ["early"] })],
      "missing_dependency",
      "late",
      /"early".*handles none of its points/
    ))

  it.effect("seed 001 dependencies: an enabled hook depending on a disabled hook is disabled_dependency", () =>
    expectRefused(
      [bp("off", { enabled: false }), bp("on", { dependsOn: ["off"] })],
      "disabled_dependency",
      "on",
      /"off".*disabled/
    ))

  it.effect("seed 001 dependencies: a disabled hook may depend on a disabled hook or an enabled one", () =>
    expectAccepted([
      bp("off-1", { enabled: false }),
      bp("off-2", { enabled: false, dependsOn: ["off-1"] }),
      bp("on"),
      bp("off-3", { enabled: false, dependsOn: ["on"] })
    ]))

  it.effect("seed 001 dependencies: a dependency sharing one of several points is accepted", () =>
    expectAccepted([
      Hook.make({ name: "both", beforePlanning: () => Effect.void, afterSynthesis: (_c, t) => Effect.succeed(t) }),
      as("one", { dependsOn: ["both"] })
    ]))

  it.effect("seed 001 dependencies: two hooks depending on each other are cyclic_dependency", () =>
    expectRefused(
      [bp("a", { dependsOn: ["b"] }), bp("b", { dependsOn: ["a"] })],
      "cyclic_dependency",
      "a",
      /cycle at before_planning.*a, b/
    ))

  it.effect("seed 001 dependencies: a hook depending on itself is cyclic_dependency", () =>
    expectRefused([bp("ok"), as("narcissus", { dependsOn: ["narcissus"] })], "cyclic_dependency", "narcissus"))

  it.effect("seed 001 dependencies: a three-hook cycle is cyclic_dependency, wherever it is registered", () =>
    expectRefused(
      [
        ae("free"),
        ae("x", { dependsOn: ["z"] }),
        ae("y", { dependsOn: ["x"] }),
        ae("z", { dependsOn: ["y"] })
      ],
      "cyclic_dependency",
      "x",
      /after_execution/
    ))

  it.effect("seed 001 capabilities: an unknown capability is unknown_capability (JavaScript caller)", () =>
    expectRefused(
      [untypedHook({ name: "psychic", capabilities: ["enrichments", "telepathy"], beforePlanning: () => Effect.void })],
      "unknown_capability",
      "psychic",
      /telepathy/
    ))

  it("seed 001 capabilities: capabilities that are not an array are a configuration error naming the entry (C2)", () => {
    const result = HookRegistration.validate([bp("ok"), untypedHook({ name: "x", capabilities: "enrichments" })])
    if (Either.isRight(result)) return expect.unreachable("expected InvalidOrchestratorConfig")
    expect(result.left._tag).toBe("InvalidOrchestratorConfig")
    expect(result.left._tag === "InvalidOrchestratorConfig" && result.left.index).toBe(1)
  })

  it("seed 001: malformed subscription options from JavaScript callers are InvalidOrchestratorConfig (C2), never a crash", () => {
    const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
      [{ name: "p", priority: "high", beforePlanning: () => Effect.void }, /priority/],
      [{ name: "p", priority: Number.NaN, beforePlanning: () => Effect.void }, /priority/],
      [{ name: "d", dependsOn: "a", beforePlanning: () => Effect.void }, /dependsOn/],
      [{ name: "d", dependsOn: [1], beforePlanning: () => Effect.void }, /dependsOn/],
      [{ name: "e", enabled: "no", beforePlanning: () => Effect.void }, /enabled/],
      [{ name: "x", execution: "blocking", beforePlanning: () => Effect.void }, /execution/],
      [{ name: "x", execution: { _tag: "Eventually" }, beforePlanning: () => Effect.void }, /execution/],
      [{ name: "f", failure: "fail_maybe", beforePlanning: () => Effect.void }, /failure/]
    ]
    for (const [hook, detail] of cases) {
      const result = HookRegistration.validate([untypedHook(hook)])
      if (Either.isRight(result)) return expect.unreachable(`expected ${String(detail)} to be refused`)
      expect(result.left._tag).toBe("InvalidOrchestratorConfig")
      expect(result.left._tag === "InvalidOrchestratorConfig" && result.left.detail).toMatch(detail)
    }
  })
})

// ---------------------------------------------------------------------------
// C3 under priorities and dependencies
// ---------------------------------------------------------------------------

describe("C3 with seed 001 ordering: the required hook sorts last among after_planning hooks", () => {
  const notTerminal = (hooks: ReadonlyArray<Hook.Hook<never>>, hookName: string) =>
    Effect.gen(function*() {
      const result = HookRegistration.validate(hooks)
      if (Either.isRight(result)) return expect.unreachable("expected required_not_terminal")
      expect(result.left._tag).toBe("InvalidRequiredAfterPlanningHook")
      if (result.left._tag !== "InvalidRequiredAfterPlanningHook") return
      expect(result.left.reason).toBe("required_not_terminal")
      expect(result.left.hookName).toBe(hookName)
      const built = yield* Effect.flip(makeHarness({ hooks }))
      expect(built._tag === "InvalidRequiredAfterPlanningHook" && [built.reason, built.hookName]).toEqual([
        "required_not_terminal",
        hookName
      ])
    })

  it.effect("C3/seed 001: a hook registered after the required one but with a higher priority sorts before it: valid", () =>
    expectAccepted([required("gov"), ap("later-but-higher", { priority: 5 })]))

  it.effect("C3/seed 001: a required hook with a lower priority than a later-registered hook sorts last: valid", () =>
    expectAccepted([required("gov", { priority: -10 }), ap("later")]))

  it.effect("C3/seed 001: a hook registered after the required one with a lower priority sorts after it: required_not_terminal", () =>
    notTerminal([required("gov"), ap("sinks", { priority: -1 })], "sinks"))

  it.effect("C3/seed 001: a hook registered before the required one but with a lower priority sorts after it: required_not_terminal", () =>
    notTerminal([ap("early-low", { priority: -1 }), required("gov")], "early-low"))

  it.effect("C3/seed 001: a hook depending on the required hook sorts after it: required_not_terminal", () =>
    notTerminal([ap("first"), required("gov"), ap("dependent", { dependsOn: ["gov"], priority: 10 })], "dependent"))

  it.effect("C3/seed 001: the required hook may depend on a hook registered after it (the dependency sorts first): valid", () =>
    expectAccepted([required("gov", { dependsOn: ["prep"] }), ap("prep")]))

  it.effect("C3/seed 001: only the explicit marker makes the required hook — a fail_closed afterPlanning hook beside Hook.required is an ordinary hook and must sort before it", () =>
    Effect.gen(function*() {
      const result = HookRegistration.validate([ap("strict", { failure: "fail_closed" }), required("gov")])
      expect(Either.isRight(result)).toBe(true)
      const late = HookRegistration.validate([required("gov"), ap("strict", { failure: "fail_closed" })])
      if (Either.isRight(late)) return expect.unreachable("expected required_not_terminal")
      expect(late.left._tag === "InvalidRequiredAfterPlanningHook" && [late.left.reason, late.left.hookName]).toEqual([
        "required_not_terminal",
        "strict"
      ])
    }))

  it.effect("C3/seed 001: a fail_closed afterPlanning hook without the marker may be followed by other afterPlanning hooks", () =>
    Effect.sync(() => {
      expect(Either.isRight(HookRegistration.validate([ap("strict", { failure: "fail_closed" }), ap("after")]))).toBe(
        true
      )
    }))

  it.effect("C3/seed 001: at run time the required hook runs last, after higher- and later-registered hooks", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.required({
            name: "gov",
            priority: -10,
            afterPlanning: (_c, p) => Effect.sync(() => (calls.push("gov"), p))
          }),
          Hook.make({ name: "late", afterPlanning: (_c, p) => Effect.sync(() => (calls.push("late"), p)) }),
          Hook.make({ name: "top", priority: 3, afterPlanning: (_c, p) => Effect.sync(() => (calls.push("top"), p)) })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "gov-last" })
      expect(calls).toEqual(["top", "late", "gov"])
      const record = yield* h.record("gov-last")
      expect(runsAt(record, "after_planning").map((i) => [i.name, i.sequence, i.decision?.policy])).toEqual([
        ["top", 0, undefined],
        ["late", 1, undefined],
        ["gov", 2, "fail_closed"]
      ])
    }))
})

// ---------------------------------------------------------------------------
// Disabled hooks and dependency-failed skips
// ---------------------------------------------------------------------------

describe("seed 001 skipped runs", () => {
  it.effect("seed 001 enabled: a disabled hook is never called and is recorded skipped (skipReason disabled) at each of its points", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [traced("on-1", calls), traced("off", calls, { enabled: false }), traced("on-2", calls)],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "disabled" })
      expect(result._tag).toBe("Completed")
      expect(calls.filter((c) => c.endsWith(":off"))).toEqual([])
      const record = yield* h.record("disabled")
      for (const stage of STAGES) {
        expect(statusesAt(record, stage), stage).toEqual([["on-1", "completed"], ["off", "skipped"], [
          "on-2",
          "completed"
        ]])
        const skipped = runOf(record, stage, "off")
        expect(skipped.outcome).toBe("skipped")
        expect(skipped.skipReason).toBe("disabled")
        expect(skipped.sequence).toBe(1)
        expect(skipped.duration).toBe(0)
        expect(skipped.decision).toBeUndefined()
        expect(skipped.error).toBeUndefined()
        expect(skipped.contributionHash).toBeUndefined()
        expect(skipped.effects).toEqual([])
        expect(skipped.phase).toBe(stage === "after_planning" ? 1 : undefined)
      }
    }))

  it.effect("seed 001 enabled: a disabled hook that depends on a disabled hook is skipped as disabled, not dependency_failed", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          traced("off-base", calls, { enabled: false }),
          traced("off-top", calls, { enabled: false, dependsOn: ["off-base"] })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "disabled-chain" })
      expect(calls).toEqual([])
      const record = yield* h.record("disabled-chain")
      for (const stage of STAGES) {
        expect(runsAt(record, stage).map((i) => [i.name, i.status, i.skipReason]), stage).toEqual([
          ["off-base", "skipped", "disabled"],
          ["off-top", "skipped", "disabled"]
        ])
      }
    }))

  it.effect("seed 001 dependencies: when a dependency fails at a point, its dependents (transitively) are skipped there with dependency_failed; unrelated hooks run", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const push = (entry: string) => Effect.sync(() => void calls.push(entry))
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "base",
            beforePlanning: () => Effect.fail(new Error("index unavailable")),
            afterSynthesis: (_c, t) => Effect.as(push("after_synthesis:base"), t)
          }),
          Hook.make({
            name: "mid",
            dependsOn: ["base"],
            beforePlanning: () => push("before_planning:mid"),
            afterSynthesis: (_c, t) => Effect.as(push("after_synthesis:mid"), t)
          }),
          Hook.make({ name: "top", dependsOn: ["mid"], beforePlanning: () => push("before_planning:top") }),
          Hook.make({ name: "bystander", beforePlanning: () => push("before_planning:bystander") })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "dep-failed" })
      expect(result._tag).toBe("Completed")
      // Only at the point where base failed are its dependents skipped.
      expect(calls).toEqual(["before_planning:bystander", "after_synthesis:base", "after_synthesis:mid"])
      const record = yield* h.record("dep-failed")
      expect(runsAt(record, "before_planning").map((i) => [i.name, i.status, i.outcome, i.skipReason])).toEqual([
        ["base", "failed", "failed", undefined],
        ["mid", "skipped", "skipped", "dependency_failed"],
        ["top", "skipped", "skipped", "dependency_failed"],
        ["bystander", "completed", "succeeded", undefined]
      ])
      expect(runOf(record, "before_planning", "mid").decision).toBeUndefined()
      expect(statusesAt(record, "after_synthesis")).toEqual([["base", "completed"], ["mid", "completed"]])
    }))

  it.effect("seed 001 dependencies: an after_planning dependency returning an invalid plan skips its dependent there; the last valid plan runs", () =>
    Effect.gen(function*() {
      const dependentCalls: Array<number> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "breaker",
            afterPlanning: (_c, p) =>
              Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, depends_on: ["nowhere"] })) })
          }),
          Hook.make({
            name: "rewriter",
            dependsOn: ["breaker"],
            afterPlanning: (_c, p, info) =>
              Effect.sync(() => {
                dependentCalls.push(info.phase)
                return { ...p, steps: p.steps.map((s) => ({ ...s, parameters: { symbol: "NOPE" } })) }
              })
          })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "ap-dep" })
      expect(dependentCalls).toEqual([])
      const record = yield* h.record("ap-dep")
      expect(runsAt(record, "after_planning").map((i) => [i.name, i.status, i.skipReason, i.phase])).toEqual([
        ["breaker", "failed", undefined, 1],
        ["rewriter", "skipped", "dependency_failed", 1]
      ])
      expect(record.phases[0]?.plan.steps.map((s) => s.parameters)).toEqual([{ symbol: "ACME" }])
    }))

  it.effect("seed 001 dependencies: an after_execution dependency that fails skips its dependent", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          ae("audit", { afterExecution: () => Effect.fail("audit sink down") }),
          ae("metrics", { dependsOn: ["audit"], afterExecution: () => Effect.sync(() => void calls.push("metrics")) })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "ae-dep" })
      expect(result._tag).toBe("Completed")
      expect(calls).toEqual([])
      const record = yield* h.record("ae-dep")
      expect(runsAt(record, "after_execution").map((i) => [i.name, i.status, i.skipReason])).toEqual([
        ["audit", "failed", undefined],
        ["metrics", "skipped", "dependency_failed"]
      ])
      expect(runOf(record, "after_execution", "audit").error).toBe("audit sink down")
    }))

  it.effect("seed 001 dependencies: an after_synthesis dependency returning a non-string skips its dependent; the response keeps the previous string", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          untypedHook({ name: "broken", afterSynthesis: () => Effect.succeed(42) }),
          as("polish", { dependsOn: ["broken"], afterSynthesis: (_c, t) => Effect.succeed(`${t}!`) })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "as-dep" })
      expect(result._tag === "Completed" && result.response.response).toBe("draft")
      const record = yield* h.record("as-dep")
      expect(runsAt(record, "after_synthesis").map((i) => [i.name, i.status, i.skipReason])).toEqual([
        ["broken", "failed", undefined],
        ["polish", "skipped", "dependency_failed"]
      ])
    }))

  it.effect("seed 001 spans: skipped runs (disabled, dependency_failed) have no span; runs that happened have one carrying pipeline.hook.status", () => {
    const tracing = InMemoryTracing.make()
    return Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("off", { enabled: false }),
          bp("fails", { beforePlanning: () => Effect.fail(new Error("boom")) }),
          bp("needs-fails", { dependsOn: ["fails"] }),
          bp("fine")
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "spans" })
      const spans = InMemoryTracing.hookSpans(tracing.spans())
      expect(spans.map((s) => [s.name, s.attributes["pipeline.hook.status"]])).toEqual([
        ["pipeline.hook.before_planning.fails", "failed"],
        ["pipeline.hook.before_planning.fine", "completed"]
      ])
      const record = yield* h.record("spans")
      expect(statusesAt(record, "before_planning")).toEqual([
        ["off", "skipped"],
        ["fails", "failed"],
        ["needs-fails", "skipped"],
        ["fine", "completed"]
      ])
    }).pipe(Effect.provide(tracing.layer))
  })
})

// ---------------------------------------------------------------------------
// Contribution hashes
// ---------------------------------------------------------------------------

const HASH = /^cyrb53:[0-9a-f]{14}$/

describe("seed 001 contribution hashes", () => {
  it.effect("seed 001 contribution hash: present when a before_planning hook changes enrichments or decides; absent when it returns nothing or no change", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("silent"),
          bp("empty", { beforePlanning: () => Effect.succeed({ enrichments: {} }) }),
          bp("adds", { beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "doc" } }) }),
          bp("removes", { beforePlanning: () => Effect.succeed({ remove: ["rag_context"] }) }),
          bp("answers", {
            beforePlanning: () =>
              Effect.succeed({ decision: { kind: "authoritative", shortCircuit: { response: "no" } } })
          })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "bp-hash" })
      const record = yield* h.record("bp-hash")
      const hashes = Object.fromEntries(runsAt(record, "before_planning").map((i) => [i.name, i.contributionHash]))
      expect(hashes.silent).toBeUndefined()
      expect(hashes.empty).toBeUndefined()
      expect(hashes.adds).toMatch(HASH)
      expect(hashes.removes).toMatch(HASH)
      expect(hashes.answers).toMatch(HASH)
      expect(new Set([hashes.adds, hashes.removes, hashes.answers]).size).toBe(3)
    }))

  it.effect("seed 001 contribution hash: re-setting an enrichment to the value it already has changes nothing, so no hash", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("sets", { beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "doc" } }) }),
          bp("same-again", { beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "doc" } }) })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "bp-same" })
      const record = yield* h.record("bp-same")
      expect(runOf(record, "before_planning", "sets").contributionHash).toMatch(HASH)
      // Nothing changed: no enrichment effect, and no contribution.
      expect(runOf(record, "before_planning", "same-again").effects).toEqual([])
      expect(runOf(record, "before_planning", "same-again").contributionHash).toBeUndefined()
    }))

  it.effect("seed 001 contribution hash: equal before_planning changes give equal hashes (key order does not matter); different changes differ", () =>
    Effect.gen(function*() {
      const values: Array<Record<string, string>> = [
        { rag_context: "doc", tone: "formal" },
        { tone: "formal", rag_context: "doc" },
        { rag_context: "other doc", tone: "formal" }
      ]
      let n = 0
      const h = yield* makeHarness({
        hooks: [bp("ctx", { beforePlanning: () => Effect.sync(() => ({ enrichments: values[n++]! })) })],
        script: {
          plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")]), plan([quoteStep("s1")])],
          synthesis: "draft"
        }
      })
      const hashes: Array<string | undefined> = []
      for (const id of ["eq-1", "eq-2", "eq-3"]) {
        yield* h.pipeline.process({ request: "quote ACME", requestId: id })
        hashes.push(runOf(yield* h.record(id), "before_planning", "ctx").contributionHash)
      }
      expect(hashes[0]).toMatch(HASH)
      expect(hashes[1], "same enrichments, other key order").toBe(hashes[0])
      expect(hashes[2]).not.toBe(hashes[0])
    }))

  it.effect("seed 001 contribution hash: a changed plan has a hash, an unchanged plan (even a fresh equal copy) has none", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          ap("identity"),
          ap("copy", { afterPlanning: (_c, p) => Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s })) }) }),
          ap("rewrite", {
            afterPlanning: (_c, p) =>
              Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, parameters: { symbol: "XYZ" } })) })
          })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "ap-hash" })
      const record = yield* h.record("ap-hash")
      expect(runOf(record, "after_planning", "identity").contributionHash).toBeUndefined()
      expect(runOf(record, "after_planning", "copy").contributionHash).toBeUndefined()
      expect(runOf(record, "after_planning", "rewrite").contributionHash).toMatch(HASH)
      expect(record.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "XYZ" })
    }))

  it.effect("seed 001 contribution hash: equal plan changes give equal hashes (JSON key order does not matter); different plans differ", () =>
    Effect.gen(function*() {
      const metadata: Array<Record<string, string>> = [
        { owner: "desk-a", reason: "audit" },
        { reason: "audit", owner: "desk-a" },
        { owner: "desk-b", reason: "audit" }
      ]
      let n = 0
      const h = yield* makeHarness({
        hooks: [
          ap("tagger", {
            afterPlanning: (_c, p) =>
              Effect.sync(() => {
                const tag = metadata[n++]!
                return { ...p, steps: p.steps.map((s) => ({ ...s, metadata: tag })) }
              })
          })
        ],
        script: {
          plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")]), plan([quoteStep("s1")])],
          synthesis: "draft"
        }
      })
      const hashes: Array<string | undefined> = []
      for (const id of ["ap-eq-1", "ap-eq-2", "ap-eq-3"]) {
        yield* h.pipeline.process({ request: "quote ACME", requestId: id })
        hashes.push(runOf(yield* h.record(id), "after_planning", "tagger").contributionHash)
      }
      expect(hashes[0]).toMatch(HASH)
      expect(hashes[1], "same plan, other metadata key order").toBe(hashes[0])
      expect(hashes[2]).not.toBe(hashes[0])
    }))

  it.effect("seed 001 contribution hash: a rewritten response has a hash, an unchanged one none; equal rewrites give equal hashes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          as("keeps"),
          as("shouts", { afterSynthesis: (_c, t) => Effect.succeed(t.toUpperCase()) }),
          as("keeps-again", { afterSynthesis: (_c, t) => Effect.succeed(`${t}`) }),
          as("constant", { afterSynthesis: () => Effect.succeed("FINAL") })
        ],
        script: { plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")])], synthesis: "draft" }
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "as-1" })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "as-2" })
      const first = yield* h.record("as-1")
      const second = yield* h.record("as-2")
      expect(runOf(first, "after_synthesis", "keeps").contributionHash).toBeUndefined()
      expect(runOf(first, "after_synthesis", "keeps-again").contributionHash).toBeUndefined()
      expect(runOf(first, "after_synthesis", "shouts").contributionHash).toMatch(HASH)
      expect(runOf(first, "after_synthesis", "constant").contributionHash).toMatch(HASH)
      expect(runOf(first, "after_synthesis", "constant").contributionHash).not.toBe(
        runOf(first, "after_synthesis", "shouts").contributionHash
      )
      // The same change in another request: the same hash.
      expect(runOf(second, "after_synthesis", "shouts").contributionHash).toBe(
        runOf(first, "after_synthesis", "shouts").contributionHash
      )
      expect(runOf(second, "after_synthesis", "constant").contributionHash).toBe(
        runOf(first, "after_synthesis", "constant").contributionHash
      )
      expect(first.finalResponse).toBe("FINAL")
    }))

  it.effect("seed 001 contribution hash: failed runs and observe-only after_execution runs carry none", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("fails", { beforePlanning: () => Effect.fail(new Error("no")) }),
          ae("observes"),
          as("fails-too", { afterSynthesis: () => Effect.fail(new Error("no")) })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "no-hash" })
      const record = yield* h.record("no-hash")
      for (const invocation of record.hookInvocations) {
        expect(invocation.contributionHash, `${invocation.stage}:${invocation.name}`).toBeUndefined()
      }
    }))
})

// ---------------------------------------------------------------------------
// Record fields
// ---------------------------------------------------------------------------

describe("seed 001 hook-run records", () => {
  it.effect("seed 001 record: blocking runs omit `execution`; deadline runs record execution deadline; only after_planning runs carry the phase", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [traced("plain", calls), traced("bounded", calls, { execution: Hook.deadline("5 seconds") })],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "fields" })
      const record = yield* h.record("fields")
      for (const stage of STAGES) {
        const plain = runOf(record, stage, "plain")
        const bounded = runOf(record, stage, "bounded")
        expect("execution" in plain, `${stage} plain`).toBe(false)
        expect(bounded.execution, `${stage} bounded`).toBe("deadline")
        for (const run of [plain, bounded]) {
          expect([run.status, run.outcome]).toEqual(["completed", "succeeded"])
          expect(run.phase).toBe(stage === "after_planning" ? 1 : undefined)
          expect(run.duration).toBeGreaterThanOrEqual(0)
          expect(typeof run.startedAt).toBe("number")
          expect(run.skipReason).toBeUndefined()
        }
      }
    }))

  it.effect("seed 001 record: status and outcome agree — completed/succeeded, failed/failed, skipped/skipped — and the failure's decision is recorded", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("ok"),
          bp("bad", { beforePlanning: () => Effect.fail(new Error("bad hook")) }),
          bp("off", { enabled: false })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "status" })
      const record = yield* h.record("status")
      expect(runsAt(record, "before_planning").map((i) => [i.name, i.status, i.outcome])).toEqual([
        ["ok", "completed", "succeeded"],
        ["bad", "failed", "failed"],
        ["off", "skipped", "skipped"]
      ])
      const bad = runOf(record, "before_planning", "bad")
      expect(bad.error).toBe("bad hook")
      expect(bad.decision).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
    }))

  it.effect("seed 001 record: every new field (status, execution, skipReason, contributionHash) survives the ExecutionRecord schema round trip", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("adds", {
            execution: Hook.deadline("1 second"),
            beforePlanning: () => Effect.succeed({ enrichments: { k: "v" } })
          }),
          bp("off", { enabled: false }),
          bp("bad", { beforePlanning: () => Effect.fail(new Error("x")) }),
          bp("needs-bad", { dependsOn: ["bad"] }),
          as("rewrites", { afterSynthesis: (_c, t) => Effect.succeed(`${t}.`) })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "roundtrip" })
      const record = yield* h.record("roundtrip")
      const encoded = yield* ExecutionRecord.encode(record)
      const decoded = yield* ExecutionRecord.decodeUnknown(JSON.parse(JSON.stringify(encoded)))
      expect(decoded).toEqual(record)
      expect(Schema.is(ExecutionRecord.HookInvocation)(runOf(decoded, "before_planning", "needs-bad"))).toBe(true)
      expect(runOf(decoded, "before_planning", "adds")).toMatchObject({ execution: "deadline", status: "completed" })
      expect(runOf(decoded, "before_planning", "off")).toMatchObject({ status: "skipped", skipReason: "disabled" })
      expect(runOf(decoded, "before_planning", "needs-bad")).toMatchObject({ skipReason: "dependency_failed" })
      expect(runOf(decoded, "after_synthesis", "rewrites").contributionHash).toMatch(HASH)
    }))
})

// ---------------------------------------------------------------------------
// A fail-closed hook is never silently skipped
// ---------------------------------------------------------------------------

describe("seed 001: a fail-closed hook that cannot run stops the request", () => {
  const failing = (name: string) => Hook.make({ name, afterPlanning: () => Effect.fail("prep is down") })

  it.effect("seed 001 / C9: the required hook whose dependency failed stops the phase with RequiredAfterPlanningError; no tool runs", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [failing("prep"), required("gov", { dependsOn: ["prep"] })],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "gov-skipped" }))
      expect(error._tag).toBe("RequiredAfterPlanningError")
      expect(error._tag === "RequiredAfterPlanningError" && [error.hookName, error.detail]).toEqual([
        "gov",
        `could not run: "prep" did not complete`
      ])
      const record = yield* h.record("gov-skipped")
      expect(runOf(record, "after_planning", "gov")).toMatchObject({
        status: "skipped",
        skipReason: "dependency_failed"
      })
      expect(record.phases).toEqual([])
      expect(h.prompts.filter((p) => p.kind !== "plan")).toEqual([])
    }))

  it.effect("seed 001: a fail-closed BeforePlanning hook whose dependency failed fails the request with HookFailed (dependency_failed)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "lookup", beforePlanning: () => Effect.fail("lookup down") }),
          bp("policy", { failure: "fail_closed", dependsOn: ["lookup"] })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME" }))
      expect(error).toMatchObject({
        _tag: "HookFailed",
        hookName: "policy",
        point: "before_planning",
        reason: "dependency_failed"
      })
      expect(h.plansUsed()).toBe(0)
    }))

  it.effect("seed 001: a fail-open hook whose dependency failed is only skipped", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "lookup", beforePlanning: () => Effect.fail("lookup down") }),
          bp("soft", { dependsOn: ["lookup"] })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "soft-skip" })
      expect(result._tag).toBe("Completed")
      expect(runOf(yield* h.record("soft-skip"), "before_planning", "soft")).toMatchObject({ status: "skipped" })
    }))

  it.effect("seed 001: a fail-closed transform whose dependency failed fails its operation with HookFailed (dependency_failed)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "detect", failure: "fail_open", beforeInference: () => Effect.fail("detector down") }),
          Hook.make({ name: "redact", dependsOn: ["detect"], beforeInference: (_c, p) => Effect.succeed(p) })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME" }))
      expect(error).toMatchObject({
        _tag: "HookFailed",
        hookName: "redact",
        point: "before_inference",
        reason: "dependency_failed"
      })
      expect(h.prompts).toEqual([])
    }))
})

describe("seed 001: detached hooks and dependencies", () => {
  it.effect("seed 001: a detached hook cannot fail closed — the request does not wait for it (policy_not_applicable)", () =>
    expectRefused(
      [ae("exporter", { execution: Hook.fireAndRecord, failure: "fail_closed" })],
      "policy_not_applicable",
      "exporter",
      /cannot fail closed/
    ))

  it.effect("seed 001: nothing may depend on a detached hook — nothing waits for it to complete (policy_not_applicable)", () =>
    expectRefused(
      [ae("exporter", { execution: Hook.background }), ae("after-export", { dependsOn: ["exporter"] })],
      "policy_not_applicable",
      "after-export",
      /runs detached/
    ))
})
