/**
 * Seed 001 policies at the four pipeline stages: execution policies
 * (`blocking`, `deadline`, `fireAndRecord`, `background` and the pool's
 * shutdown drain), failure policies (`fail_open` / `fail_closed`, the
 * required after-planning hook), where each policy applies
 * (`policy_not_applicable`), and declared capabilities
 * (`undeclared_contribution`).
 *
 * Deadlines run on the TestClock (`overrun` forks the request and moves the
 * clock once the deadline timer sleeps). Detached runs need the hooks
 * Layer's scope to stay open, so those tests build the agent in a scope the
 * test owns (`buildAgent`) and close it (`shutdown`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Duration, Effect, Fiber, Option, TestClock } from "effect"
import { type AgentResponse, Hook, PipelineError } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"
import {
  awaitRecord,
  buildAgent,
  expectAccepted,
  expectRefused,
  joinWithin,
  overrun,
  runOf,
  runsAt,
  settle,
  shutdown,
  startClosing,
  statusesAt,
  untilSleeping,
  untypedHook
} from "./SubscriptionsSupport.js"

const script = { plans: [plan([quoteStep("s1")])], synthesis: "draft" }

type Extra = Partial<Omit<Hook.Hook<never>, "name">>

const bp = (name: string, extra: Extra = {}) => Hook.make({ name, beforePlanning: () => Effect.void, ...extra })
const ap = (name: string, extra: Extra = {}) =>
  Hook.make({ name, afterPlanning: (_c, p) => Effect.succeed(p), ...extra })
const ae = (name: string, extra: Extra = {}) => Hook.make({ name, afterExecution: () => Effect.void, ...extra })
const as = (name: string, extra: Extra = {}) =>
  Hook.make({ name, afterSynthesis: (_c, t) => Effect.succeed(t), ...extra })

const text = (result: AgentResponse.PipelineResult) =>
  result._tag === "Completed" ? result.response.response : `(${result._tag})`

const planningPrompt = (prompts: ReadonlyArray<{ readonly kind: string; readonly prompt: string }>) =>
  prompts.find((p) => p.kind === "plan")?.prompt ?? ""

const TIMED_OUT_OPEN = { policy: "fail_open", action: "continue", reason: "timed_out" } as const
const TIMED_OUT_CLOSED = { policy: "fail_closed", action: "terminate", reason: "timed_out" } as const
const ERROR_OPEN = { policy: "fail_open", action: "continue", reason: "hook_error" } as const
const ERROR_CLOSED = { policy: "fail_closed", action: "terminate", reason: "hook_error" } as const
const UNDECLARED_OPEN = { policy: "fail_open", action: "continue", reason: "undeclared_contribution" } as const
const UNDECLARED_CLOSED = { policy: "fail_closed", action: "terminate", reason: "undeclared_contribution" } as const

/** A handler that never finishes on its own; notes when it is interrupted. */
const stuck = (interrupted: Array<string>, name: string) =>
  Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void interrupted.push(name))))

/** Rewrites every step's symbol. */
const setSymbol = (name: string, symbol: string, extra: Extra = {}) =>
  ap(name, {
    afterPlanning: (_c, p) => Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, parameters: { symbol } })) }),
    ...extra
  })

// ---------------------------------------------------------------------------
// Deadline
// ---------------------------------------------------------------------------

describe("seed 001 execution policy: deadline", () => {
  it.effect("seed 001 deadline: a hook that finishes in time completes normally and is recorded with execution deadline", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("ctx", {
            execution: Hook.deadline("200 millis"),
            beforePlanning: () => Effect.as(Effect.sleep("150 millis"), { enrichments: { rag_context: "in time" } })
          })
        ],
        script
      })
      const result = yield* overrun(h.pipeline.process({ request: "quote ACME", requestId: "in-time" }), "150 millis")
      expect(text(result)).toBe("draft")
      expect(planningPrompt(h.prompts)).toContain("in time")
      const run = runOf(yield* h.record("in-time"), "before_planning", "ctx")
      expect([run.status, run.outcome, run.execution, run.decision]).toEqual([
        "completed",
        "succeeded",
        "deadline",
        undefined
      ])
    }))

  it.effect("seed 001 deadline: before_planning overrun, fail_open (default) — the hook is interrupted, recorded timed_out, its changes are dropped and later hooks run", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const seen: Array<unknown> = []
      const h = yield* makeHarness({
        hooks: [
          bp("early", { beforePlanning: () => Effect.succeed({ enrichments: { tone: "formal" } }) }),
          bp("slow", {
            execution: Hook.deadline("200 millis"),
            beforePlanning: () =>
              Effect.sleep("1 second").pipe(
                Effect.as({ enrichments: { rag_context: "too late" } }),
                Effect.onInterrupt(() => Effect.sync(() => void interrupted.push("slow")))
              )
          }),
          bp("later", { beforePlanning: (ctx) => Effect.sync(() => void seen.push({ ...ctx.enrichments })) })
        ],
        script
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote ACME", requestId: "bp-open" }))
      // The hook's own sleep and the deadline timer.
      yield* untilSleeping(2)
      yield* TestClock.adjust("200 millis")
      const result = yield* Fiber.join(fiber)
      expect(text(result)).toBe("draft")
      expect(interrupted).toEqual(["slow"])
      expect(seen).toEqual([{ tone: "formal" }])
      expect(planningPrompt(h.prompts)).not.toContain("too late")
      const record = yield* h.record("bp-open")
      const slow = runOf(record, "before_planning", "slow")
      expect([slow.status, slow.outcome, slow.execution]).toEqual(["timed_out", "failed", "deadline"])
      expect(slow.error).toMatch(/^timed out after 200/)
      expect(slow.decision).toEqual(TIMED_OUT_OPEN)
      expect(slow.effects).toEqual([])
      expect(slow.contributionHash).toBeUndefined()
      expect(runOf(record, "before_planning", "later").status).toBe("completed")
      expect(record.lifecycle?.status).toBe("succeeded")
    }))

  it.effect("seed 001 deadline: before_planning overrun, fail_closed — the request fails with HookFailed (reason timed_out, point before_planning); planning never runs", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const laterCalls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          bp("gate", {
            execution: Hook.deadline("200 millis"),
            failure: "fail_closed",
            beforePlanning: () => stuck(interrupted, "gate")
          }),
          bp("later", { beforePlanning: () => Effect.sync(() => void laterCalls.push("later")) })
        ],
        script
      })
      const error = yield* overrun(Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "bp-closed" })))
      expect(error).toBeInstanceOf(PipelineError.HookFailed)
      if (error._tag !== "HookFailed") return expect.unreachable()
      expect([error.hookName, error.point, error.reason]).toEqual(["gate", "before_planning", "timed_out"])
      expect(error.detail).toMatch(/timed out after 200/)
      expect(interrupted).toEqual(["gate"])
      expect(laterCalls).toEqual([])
      expect(h.prompts).toEqual([])
      const record = yield* h.record("bp-closed")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookFailed" })
      const gate = runOf(record, "before_planning", "gate")
      expect([gate.status, gate.outcome]).toEqual(["timed_out", "failed"])
      expect(gate.decision).toEqual(TIMED_OUT_CLOSED)
      expect(runsAt(record, "before_planning").map((i) => i.name)).toEqual(["gate"])
    }))

  it.effect("seed 001 deadline: after_planning overrun, fail_open — the last valid plan (an earlier hook's rewrite) is kept and executed", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const seenByLater: Array<unknown> = []
      const h = yield* makeHarness({
        hooks: [
          setSymbol("rewrite", "XYZ"),
          ap("slow", {
            execution: Hook.deadline("200 millis"),
            afterPlanning: () => stuck(interrupted, "slow")
          }),
          ap("later", {
            afterPlanning: (_c, p) => Effect.sync(() => (seenByLater.push(p.steps[0]?.parameters), p))
          })
        ],
        script
      })
      const result = yield* overrun(h.pipeline.process({ request: "quote ACME", requestId: "ap-open" }))
      expect(result._tag).toBe("Completed")
      expect(interrupted).toEqual(["slow"])
      expect(seenByLater).toEqual([{ symbol: "XYZ" }])
      const record = yield* h.record("ap-open")
      expect(record.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "XYZ" })
      expect(record.phases[0]?.steps[0]?.status).toBe("succeeded")
      const slow = runOf(record, "after_planning", "slow")
      expect([slow.status, slow.outcome, slow.phase, slow.execution]).toEqual(["timed_out", "failed", 1, "deadline"])
      expect(slow.decision).toEqual(TIMED_OUT_OPEN)
    }))

  it.effect("seed 001 deadline: the required after_planning hook overrunning fails closed with RequiredAfterPlanningError; no tool runs", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.required({
            name: "gov",
            execution: Hook.deadline("200 millis"),
            afterPlanning: () => stuck(interrupted, "gov")
          })
        ],
        script
      })
      const error = yield* overrun(Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "ap-required" })))
      expect(error).toBeInstanceOf(PipelineError.RequiredAfterPlanningError)
      if (error._tag !== "RequiredAfterPlanningError") return expect.unreachable()
      expect([error.hookName, error.phase]).toEqual(["gov", 1])
      expect(error.detail).toMatch(/timed out after 200/)
      expect(interrupted).toEqual(["gov"])
      const record = yield* h.record("ap-required")
      expect(record.phases).toEqual([])
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "RequiredAfterPlanningError" })
      const gov = runOf(record, "after_planning", "gov")
      expect([gov.status, gov.outcome, gov.phase]).toEqual(["timed_out", "failed", 1])
      expect(gov.decision).toEqual(TIMED_OUT_CLOSED)
    }))

  it.effect("seed 001 deadline: a fail_closed after_planning hook without the required marker overrunning is HookFailed (an ordinary fail-closed hook, not the boundary)", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          ap("strict", {
            failure: "fail_closed",
            execution: Hook.deadline("200 millis"),
            afterPlanning: () => stuck(interrupted, "strict")
          })
        ],
        script
      })
      const error = yield* overrun(Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "ap-strict" })))
      if (error._tag !== "HookFailed") return expect.unreachable(`got ${error._tag}`)
      expect([error.hookName, error.point, error.reason]).toEqual(["strict", "after_planning", "timed_out"])
      expect(runOf(yield* h.record("ap-strict"), "after_planning", "strict").decision).toEqual(TIMED_OUT_CLOSED)
    }))

  it.effect("seed 001 deadline: after_execution overrun, fail_open (default) — recorded timed_out, synthesis still runs", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          ae("slow", { execution: Hook.deadline("200 millis"), afterExecution: () => stuck(interrupted, "slow") }),
          ae("next")
        ],
        script
      })
      const result = yield* overrun(h.pipeline.process({ request: "quote ACME", requestId: "ae-open" }))
      expect(text(result)).toBe("draft")
      expect(interrupted).toEqual(["slow"])
      const record = yield* h.record("ae-open")
      expect(statusesAt(record, "after_execution")).toEqual([["slow", "timed_out"], ["next", "completed"]])
      expect(runOf(record, "after_execution", "slow").decision).toEqual(TIMED_OUT_OPEN)
    }))

  it.effect("seed 001 deadline: after_execution overrun, fail_closed — HookFailed (reason timed_out, point after_execution); synthesis never runs", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          ae("audit", {
            execution: Hook.deadline("200 millis"),
            failure: "fail_closed",
            afterExecution: () => stuck(interrupted, "audit")
          })
        ],
        script
      })
      const error = yield* overrun(Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "ae-closed" })))
      expect(error._tag).toBe("HookFailed")
      if (error._tag !== "HookFailed") return expect.unreachable()
      expect([error.hookName, error.point, error.reason]).toEqual(["audit", "after_execution", "timed_out"])
      expect(interrupted).toEqual(["audit"])
      expect(h.prompts.map((p) => p.kind)).toEqual(["plan"])
      const record = yield* h.record("ae-closed")
      expect(record.phases[0]?.steps.map((s) => s.status)).toEqual(["succeeded"])
      expect(runOf(record, "after_execution", "audit").decision).toEqual(TIMED_OUT_CLOSED)
    }))

  it.effect("seed 001 deadline: after_synthesis overrun, fail_open — the previous string (an earlier hook's rewrite) is kept", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          as("polish", { afterSynthesis: (_c, t) => Effect.succeed(`${t}!`) }),
          as("slow", { execution: Hook.deadline("200 millis"), afterSynthesis: () => stuck(interrupted, "slow") })
        ],
        script
      })
      const result = yield* overrun(h.pipeline.process({ request: "quote ACME", requestId: "as-open" }))
      expect(text(result)).toBe("draft!")
      expect(interrupted).toEqual(["slow"])
      const record = yield* h.record("as-open")
      expect(record.finalResponse).toBe("draft!")
      expect(runOf(record, "after_synthesis", "slow")).toMatchObject({ status: "timed_out", decision: TIMED_OUT_OPEN })
    }))

  it.effect("seed 001 deadline: after_synthesis overrun, fail_closed — HookFailed (reason timed_out, point after_synthesis); the raw draft is kept, no final response", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          as("redact", {
            execution: Hook.deadline("200 millis"),
            failure: "fail_closed",
            afterSynthesis: () => stuck(interrupted, "redact")
          })
        ],
        script
      })
      const error = yield* overrun(Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "as-closed" })))
      expect(error._tag).toBe("HookFailed")
      if (error._tag !== "HookFailed") return expect.unreachable()
      expect([error.hookName, error.point, error.reason]).toEqual(["redact", "after_synthesis", "timed_out"])
      expect(interrupted).toEqual(["redact"])
      const record = yield* h.record("as-closed")
      expect(record.rawDraft).toBe("draft")
      expect(record.finalResponse).toBeUndefined()
      expect(runOf(record, "after_synthesis", "redact").decision).toEqual(TIMED_OUT_CLOSED)
    }))

  it.effect("seed 001 deadline: a dependent of a hook that timed out is skipped (dependency_failed)", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          bp("slow", { execution: Hook.deadline("200 millis"), beforePlanning: () => stuck(interrupted, "slow") }),
          bp("after-slow", {
            dependsOn: ["slow"],
            beforePlanning: () => Effect.sync(() => void calls.push("after-slow"))
          })
        ],
        script
      })
      yield* overrun(h.pipeline.process({ request: "quote ACME", requestId: "dep-timeout" }))
      expect(calls).toEqual([])
      const record = yield* h.record("dep-timeout")
      expect(runsAt(record, "before_planning").map((i) => [i.name, i.status, i.skipReason])).toEqual([
        ["slow", "timed_out", undefined],
        ["after-slow", "skipped", "dependency_failed"]
      ])
    }))

  it.effect("seed 001 spans: a timed-out run's span ends with pipeline.hook.status timed_out (outcome failed, decision reason timed_out)", () => {
    const tracing = InMemoryTracing.make()
    return Effect.gen(function*() {
      const interrupted: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          as("slow", { execution: Hook.deadline("200 millis"), afterSynthesis: () => stuck(interrupted, "slow") })
        ],
        script
      })
      yield* overrun(h.pipeline.process({ request: "quote ACME", requestId: "span-timeout" }))
      const spans = InMemoryTracing.named(tracing.spans(), "pipeline.hook.after_synthesis.slow")
      expect(spans).toHaveLength(1)
      const span = spans[0]!
      expect(span.ended).toBe(true)
      expect(span.attributes["pipeline.hook.status"]).toBe("timed_out")
      expect(span.attributes["pipeline.hook.outcome"]).toBe("failed")
      expect(span.attributes["pipeline.hook.decision.reason"]).toBe("timed_out")
      expect(span.attributes["pipeline.hook.decision.policy"]).toBe("fail_open")
      expect(String(span.attributes["pipeline.hook.error"])).toMatch(/timed out after 200/)
    }).pipe(Effect.provide(tracing.layer))
  })
})

// ---------------------------------------------------------------------------
// Failure policy
// ---------------------------------------------------------------------------

describe("seed 001 failure policy", () => {
  it.effect("seed 001 failure: by default every stage fails open — a failing hook is recorded (fail_open/continue/hook_error) and the request completes", () =>
    Effect.gen(function*() {
      const boom = () => Effect.fail(new Error("boom"))
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "flaky",
            beforePlanning: boom,
            afterPlanning: boom,
            afterExecution: boom,
            afterSynthesis: boom
          }),
          bp("after", { afterSynthesis: (_c, t) => Effect.succeed(`${t}+`) })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "default-open" })
      expect(text(result)).toBe("draft+")
      const record = yield* h.record("default-open")
      for (const stage of ["before_planning", "after_planning", "after_execution", "after_synthesis"] as const) {
        const run = runOf(record, stage, "flaky")
        expect([run.status, run.error], stage).toEqual(["failed", "boom"])
        expect(run.decision, stage).toEqual(ERROR_OPEN)
      }
      expect(record.phases[0]?.steps[0]?.status).toBe("succeeded")
    }))

  it.effect("seed 001 failure: an explicit fail_open behaves as the default at every stage", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          as("a", { failure: "fail_open", afterSynthesis: () => Effect.fail("nope") }),
          ae("b", { failure: "fail_open", afterExecution: () => Effect.fail("nope") }),
          bp("c", { failure: "fail_open", beforePlanning: () => Effect.fail("nope") })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "explicit-open" })
      expect(text(result)).toBe("draft")
      const record = yield* h.record("explicit-open")
      expect(record.hookInvocations.map((i) => i.decision)).toEqual([ERROR_OPEN, ERROR_OPEN, ERROR_OPEN])
    }))

  it.effect("seed 001 failure: a fail_closed before_planning hook that fails stops the request with HookFailed whose cause is the hook's own failure", () =>
    Effect.gen(function*() {
      const own = new Error("policy store unreachable")
      const later: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          bp("ok"),
          bp("policy", { failure: "fail_closed", beforePlanning: () => Effect.fail(own) }),
          bp("later", { beforePlanning: () => Effect.sync(() => void later.push("later")) })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "bp-fail-closed" }))
      expect(error).toBeInstanceOf(PipelineError.HookFailed)
      expect(PipelineError.isPipelineError(error)).toBe(true)
      if (error._tag !== "HookFailed") return expect.unreachable()
      expect([error.hookName, error.point, error.reason]).toEqual(["policy", "before_planning", "hook_failed"])
      expect(Cause.originalError(error.cause)).toBe(own)
      expect(error.detail).toBe("policy store unreachable")
      expect(later).toEqual([])
      expect(h.prompts).toEqual([])
      const record = yield* h.record("bp-fail-closed")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookFailed" })
      expect(runOf(record, "before_planning", "policy")).toMatchObject({
        status: "failed",
        error: "policy store unreachable",
        decision: ERROR_CLOSED
      })
    }))

  it.effect("seed 001 failure: a fail_closed after_execution hook that fails stops the request before synthesis (HookFailed, cause kept)", () =>
    Effect.gen(function*() {
      const own = { _tag: "AuditSinkDown", message: "sink down" }
      const h = yield* makeHarness({
        hooks: [ae("audit", { failure: "fail_closed", afterExecution: () => Effect.fail(own) })],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "ae-fail-closed" }))
      if (error._tag !== "HookFailed") return expect.unreachable(`got ${error._tag}`)
      expect([error.hookName, error.point, error.reason]).toEqual(["audit", "after_execution", "hook_failed"])
      expect(Cause.originalError(error.cause)).toBe(own)
      expect(h.prompts.map((p) => p.kind)).toEqual(["plan"])
      expect(runOf(yield* h.record("ae-fail-closed"), "after_execution", "audit").decision).toEqual(ERROR_CLOSED)
    }))

  it.effect("seed 001 failure: a fail_closed after_synthesis hook that fails stops the request (HookFailed, cause kept); later hooks are not called", () =>
    Effect.gen(function*() {
      const own = new Error("redactor crashed")
      const later: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          as("redact", { failure: "fail_closed", afterSynthesis: () => Effect.fail(own) }),
          as("later", { afterSynthesis: (_c, t) => Effect.sync(() => (later.push("later"), t)) })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "as-fail-closed" }))
      if (error._tag !== "HookFailed") return expect.unreachable(`got ${error._tag}`)
      expect([error.hookName, error.point, error.reason]).toEqual(["redact", "after_synthesis", "hook_failed"])
      expect(Cause.originalError(error.cause)).toBe(own)
      expect(later).toEqual([])
      const record = yield* h.record("as-fail-closed")
      expect(record.rawDraft).toBe("draft")
      expect(record.finalResponse).toBeUndefined()
    }))

  it.effect("seed 001 failure: failure fail_closed on an afterPlanning hook does not make it the required hook — its failure is HookFailed with the cause, and nothing of the phase runs", () =>
    Effect.gen(function*() {
      const own = new Error("plan not allowed")
      const h = yield* makeHarness({
        hooks: [ap("strict", { failure: "fail_closed", afterPlanning: () => Effect.fail(own) })],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "ap-fail-closed" }))
      if (error._tag !== "HookFailed") return expect.unreachable(`got ${error._tag}`)
      expect([error.hookName, error.point, error.reason]).toEqual(["strict", "after_planning", "hook_failed"])
      expect(error.cause).toBe(own)
      const record = yield* h.record("ap-fail-closed")
      expect(record.phases).toEqual([])
      expect(runOf(record, "after_planning", "strict").decision).toEqual(ERROR_CLOSED)
    }))

  it.effect("seed 001 failure: a fail_closed hook's failure policy applies at each of its stages (the same hook fails closed at before_planning)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "strict",
            failure: "fail_closed",
            beforePlanning: () => Effect.fail(new Error("no context")),
            afterPlanning: (_c, p) => Effect.succeed(p)
          })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "strict-bp" }))
      expect(error._tag === "HookFailed" && [error.point, error.hookName]).toEqual(["before_planning", "strict"])
    }))

  it.effect("seed 001 failure: a fail_closed hook returning the wrong shape fails with HookFailed reason wrong_shape (JavaScript caller)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [untypedHook({ name: "js", failure: "fail_closed", beforePlanning: () => Effect.succeed(42) })],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "wrong-shape" }))
      expect(error._tag === "HookFailed" && [error.point, error.reason]).toEqual(["before_planning", "wrong_shape"])
      const synth = yield* makeHarness({
        hooks: [untypedHook({ name: "js", failure: "fail_closed", afterSynthesis: () => Effect.succeed(null) })],
        script
      })
      const error2 = yield* Effect.flip(synth.pipeline.process({ request: "quote ACME", requestId: "wrong-shape-2" }))
      expect(error2._tag === "HookFailed" && [error2.point, error2.reason]).toEqual(["after_synthesis", "wrong_shape"])
    }))

  it.effect("seed 001 failure: a required hook cannot be fail_open (policy_not_applicable)", () =>
    expectRefused(
      [Hook.required({ name: "gov", failure: "fail_open", afterPlanning: (_c, p) => Effect.succeed(p) })],
      "policy_not_applicable",
      "gov",
      /fail_open/
    ))

  it.effect("seed 001 failure: an Around observer cannot fail closed (policy_not_applicable)", () =>
    expectRefused(
      [Hook.make({
        name: "watch",
        failure: "fail_closed",
        around: { toolCall: () => Effect.succeed(() => Effect.void) }
      })],
      "policy_not_applicable",
      "watch",
      /around_tool_call/
    ))
})

// ---------------------------------------------------------------------------
// Where detached policies apply
// ---------------------------------------------------------------------------

describe("seed 001 execution policy: where detached policies apply", () => {
  const detachedPolicies = [["fireAndRecord", Hook.fireAndRecord], ["background", Hook.background]] as const
  const refusedPoints: ReadonlyArray<readonly [string, (name: string, extra: Extra) => Hook.Hook<never>]> = [
    ["before_planning", bp],
    ["after_planning", ap],
    ["after_synthesis", as]
  ]
  for (const [policyName, policy] of detachedPolicies) {
    for (const [point, make] of refusedPoints) {
      it.effect(`seed 001 policy_not_applicable: ${policyName} on a ${point} hook (the request waits for what it returns)`, () =>
        expectRefused(
          [make("detached", { execution: policy })],
          "policy_not_applicable",
          "detached",
          new RegExp(point)
        ))
    }

    it.effect(`seed 001 policy_not_applicable: ${policyName} on a hook with after_execution and after_synthesis handlers (every point must be observe-only)`, () =>
      expectRefused(
        [ae("mixed", { execution: policy, afterSynthesis: (_c, t) => Effect.succeed(t) })],
        "policy_not_applicable",
        "mixed",
        /after_synthesis/
      ))

    it.effect(`seed 001 policy: ${policyName} is accepted on observe-only points (after_execution, Around observers)`, () =>
      expectAccepted([
        ae("observer", { execution: policy }),
        ae("observer-too", { execution: policy, around: { toolCall: () => Effect.succeed(() => Effect.void) } })
      ]))
  }

  it.effect("seed 001 policy: blocking and deadline apply at every stage (including the required hook)", () =>
    expectAccepted([
      bp("a", { execution: Hook.blocking }),
      bp("b", { execution: Hook.deadline("1 second") }),
      ap("c", { execution: Hook.deadline("1 second") }),
      ae("d", { execution: Hook.deadline("1 second") }),
      as("e", { execution: Hook.deadline("1 second") }),
      Hook.required({ name: "gov", execution: Hook.deadline("1 second"), afterPlanning: (_c, p) => Effect.succeed(p) })
    ]))
})

// ---------------------------------------------------------------------------
// Detached runs: fireAndRecord, background, shutdown
// ---------------------------------------------------------------------------

describe("seed 001 execution policy: detached runs", () => {
  it.effect("seed 001 fireAndRecord: the run is recorded at once as backgrounded/pending, never delays the response, and lands later by a late update", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const calls: Array<string> = []
      const agent = yield* buildAgent({
        hooks: [
          ae("watcher", {
            execution: Hook.fireAndRecord,
            afterExecution: () =>
              Effect.zipRight(Deferred.await(release), Effect.sync(() => void calls.push("watcher done")))
          }),
          ae("next", { afterExecution: () => Effect.sync(() => void calls.push("next")) })
        ],
        script
      })
      const result = yield* agent.pipeline.process({ request: "quote ACME", requestId: "far" })
      // The response is back while the detached run still waits.
      expect(text(result)).toBe("draft")
      expect(calls).toEqual(["next"])
      const atResponse = yield* agent.record("far")
      expect(atResponse.lifecycle?.status).toBe("succeeded")
      expect(atResponse.finalResponse).toBe("draft")
      const pending = runOf(atResponse, "after_execution", "watcher")
      expect([pending.status, pending.outcome, pending.execution, pending.sequence]).toEqual([
        "backgrounded",
        "pending",
        "fire_and_record",
        0
      ])
      expect(pending.decision).toBeUndefined()
      expect(runOf(atResponse, "after_execution", "next").status).toBe("completed")

      yield* Deferred.succeed(release, undefined)
      const landed = yield* awaitRecord(
        agent,
        "far",
        (r) => runOf(r, "after_execution", "watcher").status !== "backgrounded",
        "the fireAndRecord run to land"
      )
      expect(calls).toEqual(["next", "watcher done"])
      expect(landed.recordRevision).toBeGreaterThan(atResponse.recordRevision)
      const done = runOf(landed, "after_execution", "watcher")
      expect([done.status, done.outcome, done.execution, done.sequence]).toEqual([
        "completed",
        "succeeded",
        "fire_and_record",
        0
      ])
      // The late update changes only that run: the rest of the record stays.
      expect(landed.lifecycle?.status).toBe("succeeded")
      expect(landed.finalResponse).toBe("draft")
      expect(landed.hookInvocations.map((i) => [i.stage, i.name])).toEqual(
        atResponse.hookInvocations.map((i) => [i.stage, i.name])
      )
      yield* shutdown(agent)
    }))

  it.effect("seed 001 fireAndRecord: a detached run that fails lands as failed (fail_open/continue/hook_error); the response was unaffected", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const agent = yield* buildAgent({
        hooks: [
          ae("exporter", {
            execution: Hook.fireAndRecord,
            afterExecution: () => Effect.zipRight(Deferred.await(release), Effect.fail(new Error("export failed")))
          })
        ],
        script
      })
      const result = yield* agent.pipeline.process({ request: "quote ACME", requestId: "far-fail" })
      expect(text(result)).toBe("draft")
      yield* Deferred.succeed(release, undefined)
      const landed = yield* awaitRecord(
        agent,
        "far-fail",
        (r) => runOf(r, "after_execution", "exporter").status !== "backgrounded"
      )
      expect(runOf(landed, "after_execution", "exporter")).toMatchObject({
        status: "failed",
        outcome: "failed",
        execution: "fire_and_record",
        error: "export failed",
        decision: ERROR_OPEN
      })
      expect(landed.lifecycle?.status).toBe("succeeded")
      yield* shutdown(agent)
    }))

  it.effect("seed 001 fireAndRecord: a detached hook cannot be fail-closed — it could never stop a request that did not wait for it", () =>
    Effect.gen(function*() {
      const hooks = [
        ae("strict-exporter", {
          execution: Hook.fireAndRecord,
          failure: "fail_closed",
          afterExecution: () => Effect.fail("down")
        })
      ]
      const refused = yield* Effect.flip(makeHarness({ hooks }))
      expect(refused._tag === "InvalidHookSubscription" && [refused.reason, refused.hookName]).toEqual([
        "policy_not_applicable",
        "strict-exporter"
      ])
    }))

  it.effect("seed 001 background: recorded at once as backgrounded with execution background, completed later by a late update", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const agent = yield* buildAgent({
        hooks: [ae("indexer", { execution: Hook.background, afterExecution: () => Deferred.await(release) })],
        script
      })
      const result = yield* agent.pipeline.process({ request: "quote ACME", requestId: "bg" })
      expect(text(result)).toBe("draft")
      const atResponse = yield* agent.record("bg")
      expect(runOf(atResponse, "after_execution", "indexer")).toMatchObject({
        status: "backgrounded",
        outcome: "pending",
        execution: "background"
      })
      yield* Deferred.succeed(release, undefined)
      const landed = yield* awaitRecord(
        agent,
        "bg",
        (r) => runOf(r, "after_execution", "indexer").status === "completed"
      )
      expect(landed.recordRevision).toBeGreaterThan(atResponse.recordRevision)
      expect(runOf(landed, "after_execution", "indexer")).toMatchObject({
        outcome: "succeeded",
        execution: "background"
      })
      yield* shutdown(agent)
    }))

  it.effect("seed 001 background: runs queue for the pool's permits (concurrency 1 runs one at a time)", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const started: Array<string> = []
      const agent = yield* buildAgent({
        hooks: [
          ae("first", {
            execution: Hook.background,
            afterExecution: () =>
              Effect.zipRight(Effect.sync(() => void started.push("first")), Deferred.await(release))
          }),
          ae("second", {
            execution: Hook.background,
            afterExecution: () => Effect.sync(() => void started.push("second"))
          })
        ],
        script,
        pool: { concurrency: 1 }
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "bg-queue" })
      yield* settle
      expect(started).toEqual(["first"])
      expect(statusesAt(yield* agent.record("bg-queue"), "after_execution")).toEqual([
        ["first", "backgrounded"],
        ["second", "backgrounded"]
      ])
      yield* Deferred.succeed(release, undefined)
      const landed = yield* awaitRecord(
        agent,
        "bg-queue",
        (r) => runsAt(r, "after_execution").every((i) => i.status === "completed")
      )
      expect(started).toEqual(["first", "second"])
      expect(statusesAt(landed, "after_execution")).toEqual([["first", "completed"], ["second", "completed"]])
      yield* shutdown(agent)
    }))

  it.effect("seed 001 background: closing the hooks Layer's scope drains a running background run (within drainTimeout) and records it completed", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const agent = yield* buildAgent({
        hooks: [ae("flush", { execution: Hook.background, afterExecution: () => Deferred.await(release) })],
        script,
        pool: { drainTimeout: "5 seconds" }
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "drain" })
      yield* settle
      const closing = yield* startClosing(agent)
      yield* settle
      // Shutdown waits for the run.
      expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)
      expect(runOf(yield* agent.record("drain"), "after_execution", "flush").status).toBe("backgrounded")
      yield* Deferred.succeed(release, undefined)
      yield* joinWithin(closing, "shutdown")
      const record = yield* agent.record("drain")
      expect(runOf(record, "after_execution", "flush")).toMatchObject({
        status: "completed",
        outcome: "succeeded",
        execution: "background"
      })
      expect(runOf(record, "after_execution", "flush").error).toBeUndefined()
    }))

  it.effect("seed 001 background: a run still going after drainTimeout is interrupted and recorded failed \"interrupted at shutdown\"", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const agent = yield* buildAgent({
        hooks: [ae("forever", { execution: Hook.background, afterExecution: () => stuck(interrupted, "forever") })],
        script,
        pool: { drainTimeout: "2 seconds" }
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "drain-bound" })
      yield* settle
      const closing = yield* startClosing(agent)
      yield* untilSleeping()
      yield* TestClock.adjust(Duration.millis(1999))
      yield* settle
      // Not before the drain bound.
      expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)
      expect(interrupted).toEqual([])
      yield* TestClock.adjust(Duration.millis(1))
      yield* joinWithin(closing, "shutdown after the drain bound")
      expect(interrupted).toEqual(["forever"])
      const record = yield* agent.record("drain-bound")
      expect(runOf(record, "after_execution", "forever")).toMatchObject({
        status: "failed",
        outcome: "failed",
        execution: "background",
        error: "interrupted at shutdown"
      })
      expect(record.lifecycle?.status).toBe("succeeded")
    }))

  it.effect("seed 001 background: a run still queued for a permit at shutdown is interrupted too, never called, and recorded failed \"interrupted at shutdown\"", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const calls: Array<string> = []
      const agent = yield* buildAgent({
        hooks: [
          ae("hog", { execution: Hook.background, afterExecution: () => stuck(interrupted, "hog") }),
          ae("queued", {
            execution: Hook.background,
            afterExecution: () => Effect.sync(() => void calls.push("queued"))
          })
        ],
        script,
        pool: { concurrency: 1, drainTimeout: "1 second" }
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "queued-shutdown" })
      yield* settle
      yield* shutdown(agent)
      expect(interrupted).toEqual(["hog"])
      expect(calls).toEqual([])
      const record = yield* agent.record("queued-shutdown")
      for (const name of ["hog", "queued"]) {
        expect(runOf(record, "after_execution", name), name).toMatchObject({
          status: "failed",
          outcome: "failed",
          execution: "background",
          error: "interrupted at shutdown"
        })
      }
    }))

  it.effect("seed 001 fireAndRecord: a run still going after drainTimeout is interrupted at shutdown and recorded as such", () =>
    Effect.gen(function*() {
      const interrupted: Array<string> = []
      const agent = yield* buildAgent({
        hooks: [ae("tail", { execution: Hook.fireAndRecord, afterExecution: () => stuck(interrupted, "tail") })],
        script
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "far-shutdown" })
      yield* settle
      yield* shutdown(agent)
      expect(interrupted).toEqual(["tail"])
      expect(runOf(yield* agent.record("far-shutdown"), "after_execution", "tail")).toMatchObject({
        status: "failed",
        execution: "fire_and_record",
        error: "interrupted at shutdown"
      })
    }))

  it.effect("seed 001 detached: a run started after the pool's scope closed is not left backgrounded — it is recorded failed, not started", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      // makeHarness closes the Layer scope (and so the pool) once built.
      const h = yield* makeHarness({
        hooks: [
          ae("late", {
            execution: Hook.fireAndRecord,
            afterExecution: () => Effect.sync(() => void calls.push("late"))
          })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "closed-pool" })
      expect(text(result)).toBe("draft")
      yield* settle
      const run = runOf(yield* h.record("closed-pool"), "after_execution", "late")
      expect(run.status).not.toBe("backgrounded")
      expect(run).toMatchObject({ status: "failed", error: "not started: the agent is shutting down" })
      expect(calls).toEqual([])
    }))

  it.effect("seed 001 spans: a detached run has its own span, ended with the status it landed with", () => {
    const tracing = InMemoryTracing.make()
    return Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const agent = yield* buildAgent({
        hooks: [ae("watcher", { execution: Hook.fireAndRecord, afterExecution: () => Deferred.await(release) })],
        script
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "far-span" })
      expect(InMemoryTracing.named(tracing.spans(), "pipeline.hook.after_execution.watcher")).toEqual([])
      yield* Deferred.succeed(release, undefined)
      yield* awaitRecord(agent, "far-span", (r) => runOf(r, "after_execution", "watcher").status === "completed")
      const spans = InMemoryTracing.named(tracing.spans(), "pipeline.hook.after_execution.watcher")
      expect(spans.map((s) => s.attributes["pipeline.hook.status"])).toEqual(["completed"])
      yield* shutdown(agent)
    }).pipe(Effect.provide(tracing.layer))
  })
})

// ---------------------------------------------------------------------------
// Capabilities
// ---------------------------------------------------------------------------

describe("seed 001 capabilities", () => {
  it.effect("seed 001 capabilities: before_planning enrichments without the enrichments capability are refused (fail_open): dropped, recorded undeclared_contribution", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const h = yield* makeHarness({
        hooks: [
          bp("cache-only", {
            capabilities: ["short_circuit"],
            beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "smuggled" } })
          }),
          bp("later", { beforePlanning: (ctx) => Effect.sync(() => void seen.push({ ...ctx.enrichments })) })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-bp-enrich" })
      expect(text(result)).toBe("draft")
      expect(seen).toEqual([{}])
      expect(planningPrompt(h.prompts)).not.toContain("smuggled")
      const run = runOf(yield* h.record("cap-bp-enrich"), "before_planning", "cache-only")
      expect([run.status, run.outcome]).toEqual(["failed", "failed"])
      expect(run.decision).toEqual(UNDECLARED_OPEN)
      expect(run.error).toMatch(/undeclared contribution.*"enrichments"/)
      expect(run.effects).toEqual([])
      expect(run.contributionHash).toBeUndefined()
    }))

  it.effect("seed 001 capabilities: removing enrichments needs the enrichments capability too", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const h = yield* makeHarness({
        hooks: [
          bp("adds", { beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "kept" } }) }),
          bp("remover", { capabilities: [], beforePlanning: () => Effect.succeed({ remove: ["rag_context"] }) }),
          bp("later", { beforePlanning: (ctx) => Effect.sync(() => void seen.push({ ...ctx.enrichments })) })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-bp-remove" })
      expect(seen).toEqual([{ rag_context: "kept" }])
      expect(runOf(yield* h.record("cap-bp-remove"), "before_planning", "remover").decision).toEqual(UNDECLARED_OPEN)
    }))

  it.effect("seed 001 capabilities: a before_planning short-circuit without the short_circuit capability is refused (fail_open): the request plans as usual", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("enricher", {
            capabilities: ["enrichments"],
            beforePlanning: () =>
              Effect.succeed({
                enrichments: { rag_context: "also dropped" },
                decision: { kind: "authoritative", shortCircuit: { response: "hijacked" } }
              })
          }),
          bp("legacy", {
            capabilities: ["enrichments"],
            beforePlanning: () => Effect.succeed({ shortCircuit: { response: "hijacked too" } })
          })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-bp-sc" })
      expect(text(result)).toBe("draft")
      expect(result._tag === "Completed" && result.response.shortCircuit).toBeUndefined()
      // The whole change is dropped, its allowed part too.
      expect(planningPrompt(h.prompts)).not.toContain("also dropped")
      const record = yield* h.record("cap-bp-sc")
      expect(record.shortCircuit).toBeUndefined()
      for (const name of ["enricher", "legacy"]) {
        const run = runOf(record, "before_planning", name)
        expect([run.status, run.decision], name).toEqual(["failed", UNDECLARED_OPEN])
        expect(run.error, name).toMatch(/undeclared contribution.*"short_circuit"/)
      }
    }))

  it.effect("seed 001 capabilities: declared capabilities allow their contributions; an empty list allows a hook that changes nothing", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("silent", { capabilities: [], beforePlanning: () => Effect.void }),
          bp("ctx", {
            capabilities: ["enrichments"],
            beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "ok ctx" } })
          }),
          ap("reader", { capabilities: [] }),
          ae("observer", { capabilities: [] }),
          as("reader-too", { capabilities: [] }),
          as("rewriter", {
            capabilities: ["response_rewrite"],
            afterSynthesis: (_c, t) => Effect.succeed(t.toUpperCase())
          }),
          bp("cache", {
            capabilities: ["short_circuit", "enrichments"],
            beforePlanning: () => Effect.succeed({ enrichments: { k: "v" } })
          })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-ok" })
      expect(text(result)).toBe("DRAFT")
      expect(planningPrompt(h.prompts)).toContain("ok ctx")
      const record = yield* h.record("cap-ok")
      for (const invocation of record.hookInvocations) {
        expect(invocation.status, `${invocation.stage}:${invocation.name}`).toBe("completed")
      }
    }))

  it.effect("seed 001 capabilities: a before_planning undeclared contribution under fail_closed stops the request with HookFailed reason undeclared_contribution", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          bp("strict", {
            failure: "fail_closed",
            capabilities: ["short_circuit"],
            beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "x" } })
          })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "cap-bp-closed" }))
      if (error._tag !== "HookFailed") return expect.unreachable(`got ${error._tag}`)
      expect([error.hookName, error.point, error.reason]).toEqual([
        "strict",
        "before_planning",
        "undeclared_contribution"
      ])
      expect(h.prompts).toEqual([])
      expect(runOf(yield* h.record("cap-bp-closed"), "before_planning", "strict").decision).toEqual(UNDECLARED_CLOSED)
    }))

  it.effect("seed 001 capabilities: after_planning returning the plan unchanged needs no plan_rewrite; a changed plan without it is refused (fail_open) and the last valid plan runs", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          ap("reader", { capabilities: [] }),
          setSymbol("sneaky", "XYZ", { capabilities: ["response_rewrite"] }),
          ap("after", { capabilities: [] })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-ap" })
      expect(result._tag).toBe("Completed")
      const record = yield* h.record("cap-ap")
      expect(record.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "ACME" })
      expect(statusesAt(record, "after_planning")).toEqual([["reader", "completed"], ["sneaky", "failed"], [
        "after",
        "completed"
      ]])
      const sneaky = runOf(record, "after_planning", "sneaky")
      expect(sneaky.decision).toEqual(UNDECLARED_OPEN)
      expect(sneaky.error).toMatch(/undeclared contribution.*"plan_rewrite"/)
      expect(sneaky.contributionHash).toBeUndefined()
    }))

  it.effect("seed 001 capabilities: after_planning with plan_rewrite may change the plan", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [setSymbol("rewriter", "XYZ", { capabilities: ["plan_rewrite"] })],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-ap-ok" })
      const record = yield* h.record("cap-ap-ok")
      expect(record.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "XYZ" })
      expect(runOf(record, "after_planning", "rewriter").status).toBe("completed")
    }))

  it.effect("seed 001 capabilities: the required hook changing the plan without plan_rewrite fails closed (RequiredAfterPlanningError); unchanged it is accepted", () =>
    Effect.gen(function*() {
      const strict = yield* makeHarness({
        hooks: [
          Hook.required({
            name: "gov",
            capabilities: [],
            afterPlanning: (_c, p) =>
              Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, parameters: { symbol: "XYZ" } })) })
          })
        ],
        script
      })
      const error = yield* Effect.flip(strict.pipeline.process({ request: "quote ACME", requestId: "cap-gov" }))
      if (error._tag !== "RequiredAfterPlanningError") return expect.unreachable(`got ${error._tag}`)
      expect(error.hookName).toBe("gov")
      expect(error.detail).toMatch(/undeclared contribution/)
      const record = yield* strict.record("cap-gov")
      expect(record.phases).toEqual([])
      expect(runOf(record, "after_planning", "gov").decision).toEqual(UNDECLARED_CLOSED)

      const reader = yield* makeHarness({
        hooks: [Hook.required({ name: "gov", capabilities: [], afterPlanning: (_c, p) => Effect.succeed(p) })],
        script
      })
      const ok = yield* reader.pipeline.process({ request: "quote ACME", requestId: "cap-gov-ok" })
      expect(ok._tag).toBe("Completed")
      expect(runOf(yield* reader.record("cap-gov-ok"), "after_planning", "gov").decision).toEqual({
        policy: "fail_closed",
        action: "continue",
        reason: "accepted"
      })
    }))

  it.effect("seed 001 capabilities: after_synthesis rewriting without response_rewrite is refused (fail_open): the previous string is kept", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          as("polish", { capabilities: ["response_rewrite"], afterSynthesis: (_c, t) => Effect.succeed(`${t}!`) }),
          as("sneaky", { capabilities: ["plan_rewrite"], afterSynthesis: () => Effect.succeed("replaced") }),
          as("reader", { capabilities: [] })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-as" })
      expect(text(result)).toBe("draft!")
      const record = yield* h.record("cap-as")
      expect(record.finalResponse).toBe("draft!")
      expect(statusesAt(record, "after_synthesis")).toEqual([["polish", "completed"], ["sneaky", "failed"], [
        "reader",
        "completed"
      ]])
      const sneaky = runOf(record, "after_synthesis", "sneaky")
      expect(sneaky.decision).toEqual(UNDECLARED_OPEN)
      expect(sneaky.error).toMatch(/undeclared contribution.*"response_rewrite"/)
    }))

  it.effect("seed 001 capabilities: after_synthesis undeclared rewrite under fail_closed stops the request with HookFailed reason undeclared_contribution", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          as("strict", { failure: "fail_closed", capabilities: [], afterSynthesis: () => Effect.succeed("replaced") })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "cap-as-closed" }))
      if (error._tag !== "HookFailed") return expect.unreachable(`got ${error._tag}`)
      expect([error.hookName, error.point, error.reason]).toEqual([
        "strict",
        "after_synthesis",
        "undeclared_contribution"
      ])
      const record = yield* h.record("cap-as-closed")
      expect(record.finalResponse).toBeUndefined()
      expect(runOf(record, "after_synthesis", "strict").decision).toEqual(UNDECLARED_CLOSED)
    }))

  it.effect("seed 001 capabilities: a refused contribution counts as a failed run — its dependents are skipped (dependency_failed)", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          as("sneaky", { capabilities: [], afterSynthesis: () => Effect.succeed("replaced") }),
          as("after-sneaky", {
            dependsOn: ["sneaky"],
            afterSynthesis: (_c, t) => Effect.sync(() => (calls.push("after"), t))
          })
        ],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-dep" })
      expect(calls).toEqual([])
      expect(runsAt(yield* h.record("cap-dep"), "after_synthesis").map((i) => [i.name, i.status, i.skipReason]))
        .toEqual([
          ["sneaky", "failed", undefined],
          ["after-sneaky", "skipped", "dependency_failed"]
        ])
    }))

  it.effect("seed 001 spans: a refused contribution's span carries status failed and decision reason undeclared_contribution", () => {
    const tracing = InMemoryTracing.make()
    return Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [as("sneaky", { capabilities: [], afterSynthesis: () => Effect.succeed("replaced") })],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "cap-span" })
      const spans = InMemoryTracing.named(tracing.spans(), "pipeline.hook.after_synthesis.sneaky")
      expect(spans.map((s) => [s.attributes["pipeline.hook.status"], s.attributes["pipeline.hook.decision.reason"]]))
        .toEqual([
          ["failed", "undeclared_contribution"]
        ])
    }).pipe(Effect.provide(tracing.layer))
  })
})
