/**
 * The `on_error` point (seed 004 "OnError"): an `onError` handler sees every
 * operation run that ends `failed` or `denied` — its immutable call, its
 * result (outcome, error) and its `Cause` — after the run's observers;
 * never a completed or canceled run. It observes: its own failure is
 * recorded (fail open) and never masks the operation's error; it runs
 * under its hook's policies (disabled → skipped, fire-and-record → in the
 * pool) and every run is recorded in `hookInvocations` at `on_error`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Either, Stream } from "effect"
import { type ExecutionRecord, Hook, type Operation, PipelineError } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, tradeStep } from "../support/Harness.js"
import { at, makeSeamAgent } from "./OperationsSupport.js"

interface Failure {
  readonly call: Operation.Call
  readonly result: Operation.Result
  readonly cause: Cause.Cause<unknown>
  readonly meta: Operation.RunMeta
}

const collector = (failures: Array<Failure>, options: Partial<Hook.Hook<never>> = {}): Hook.Hook<never> =>
  Hook.make({
    name: "errors",
    ...options,
    onError: (call, result, cause, meta) => Effect.sync(() => void failures.push({ call, result, cause, meta }))
  })

const noTrades = Hook.make({
  name: "no-trades",
  guard: {
    toolCall: (call, proceed) => call.payload.capability === "execute_trade" ? Hook.deny("trades are off") : proceed
  }
})

const noModel = Hook.make({ name: "no-model", guard: { inference: () => Hook.deny("model is off") } })

/** A plan with a succeeding quote, a quote whose arguments do not decode, and a denied trade. */
const mixed = { plans: [plan([quoteStep("q1"), quoteStep("q2", "acme"), tradeStep("t1")])], synthesis: "ok" }

describe("onError", () => {
  it.effect("seed 004: sees each failed or denied run with its call, result and cause — never a completed one", () =>
    Effect.gen(function*() {
      const failures: Array<Failure> = []
      const h = yield* makeHarness({ hooks: [noTrades, collector(failures)], script: mixed })
      const result = yield* h.pipeline.process({ request: "quotes and a trade", requestId: "oe-1" })
      expect(result._tag).toBe("Completed")
      const seen = failures.map((f) => [f.call.operation, f.call.coordinates.stepId, f.result.outcome])
      expect(seen).toEqual([["tool_execution", "q2", "failed"], ["tool_call", "t1", "denied"]])
      const denied = failures[1]!
      // The immutable call, the result's error and the whole cause.
      expect(Object.isFrozen(denied.call)).toBe(true)
      expect(denied.call.payload).toMatchObject({ capability: "execute_trade" })
      expect(denied.result.error).toBeInstanceOf(PipelineError.HookDenied)
      expect(denied.result.error).toMatchObject({ reason: "refused", detail: "trades are off" })
      expect(Cause.failureOption(denied.cause)).toEqual(Cause.failureOption(Cause.fail(denied.result.error)))
      expect(denied.meta).toMatchObject({ runId: "oe-1", iteration: 0, group: undefined })
      const failed = failures[0]!
      expect(failed.result.outcome).toBe("failed")
      expect(Cause.squash(failed.cause)).toBe(failed.result.error)
      // Recorded, one run per failed operation run, on that run's call.
      const record = yield* h.record("oe-1")
      expect(at(record, "on_error").map((i) => [i.name, i.operation, i.callId, i.status, i.stepId])).toEqual([
        ["errors", "tool_execution", failed.call.callId, "completed", "q2"],
        ["errors", "tool_call", denied.call.callId, "completed", "t1"]
      ])
    }))

  it.effect("seed 004: a failure that ends the request is seen at every level it ends, innermost first", () =>
    Effect.gen(function*() {
      const failures: Array<Failure> = []
      const h = yield* makeHarness({ hooks: [noModel, collector(failures)], script: mixed })
      const error = yield* Effect.flip(h.pipeline.process({ request: "anything", requestId: "oe-2" }))
      expect(error).toMatchObject({ _tag: "HookDenied", hookName: "no-model" })
      expect(failures.map((f) => [f.call.operation, f.result.outcome])).toEqual([
        ["inference", "denied"],
        ["phase", "denied"],
        ["request", "denied"]
      ])
      // The same failure each time: the error the caller gets.
      expect(failures.every((f) => f.result.error === error)).toBe(true)
    }))

  it.effect("seed 004: a streamed run's failure is seen too (a denied streamed synthesis)", () =>
    Effect.gen(function*() {
      const failures: Array<Failure> = []
      const noSynthesis = Hook.make({
        name: "no-synthesis",
        guard: {
          inference: (call, proceed) => call.payload.purpose === "synthesis" ? Hook.deny("no answer today") : proceed
        }
      })
      const h = yield* makeHarness({
        hooks: [noSynthesis, collector(failures)],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      yield* Effect.either(Stream.runDrain(h.pipeline.stream({ request: "quote", requestId: "oe-s" })))
      expect(failures.map((f) => [f.call.operation, f.result.outcome, f.meta.iteration])).toEqual([
        ["inference", "denied", 1],
        ["request", "denied", 0]
      ])
      expect(failures[0]!.call.payload).toMatchObject({ purpose: "synthesis", streamed: true })
    }))

  it.effect("seed 004: runs after the run's Around observers ended", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "errors",
            onError: (call) => Effect.sync(() => void log.push(`on_error:${call.operation}`))
          }),
          Hook.make({
            name: "watch",
            around: {
              toolCall: (call) =>
                Effect.succeed((result: Operation.Result) =>
                  Effect.sync(() => void log.push(`end:${call.operation}:${result.outcome}`))
                )
            }
          }),
          noTrades
        ],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      yield* h.pipeline.process({ request: "trade", requestId: "oe-3" })
      expect(log).toEqual(["end:tool_call:denied", "on_error:tool_call"])
    }))

  it.effect("seed 004: its own failure is recorded (fail open) and never masks the operation's error", () =>
    Effect.gen(function*() {
      const failing = Hook.make({ name: "broken", onError: () => Effect.fail(new Error("alerting is down")) })
      const failures: Array<Failure> = []
      const h = yield* makeHarness({
        hooks: [noModel, failing, collector(failures, { dependsOn: ["broken"] })],
        script: mixed
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "anything", requestId: "oe-4" }))
      expect(error).toMatchObject({ _tag: "HookDenied", hookName: "no-model", detail: "model is off" })
      const record = yield* h.record("oe-4")
      const runs = at(record, "on_error").filter((i) => i.operation === "inference")
      expect(runs.map((i) => [i.name, i.status, i.error, i.decision, i.skipReason])).toEqual([
        [
          "broken",
          "failed",
          "alerting is down",
          { policy: "fail_open", action: "continue", reason: "hook_error" },
          undefined
        ],
        // A hook that depends on the failed one does not run (seed 001).
        ["errors", "skipped", undefined, undefined, "dependency_failed"]
      ])
      expect(failures).toEqual([])
    }))

  it.effect("seed 004 / C13: a panicking onError handler is recorded propagate_panic; the operation's failure stays first in the cause", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [noModel, Hook.make({ name: "panics", onError: () => Effect.die("boom") })],
        script: mixed
      })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "anything", requestId: "oe-5" }))
      expect(exit._tag).toBe("Failure")
      if (exit._tag !== "Failure") return
      expect(Cause.squash(exit.cause)).toMatchObject({ _tag: "HookDenied", hookName: "no-model" })
      expect(Cause.isDie(exit.cause)).toBe(true)
      const record = yield* h.record("oe-5")
      expect(at(record, "on_error")[0]).toMatchObject({
        name: "panics",
        status: "failed",
        decision: { policy: "fail_open", action: "propagate_panic", reason: "panic" }
      })
    }))

  it.effect("seed 001/004: runs under its hook's policies — a disabled one is recorded skipped; one cannot fail closed", () =>
    Effect.gen(function*() {
      const failures: Array<Failure> = []
      const h = yield* makeHarness({
        hooks: [noTrades, collector(failures, { enabled: false })],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      yield* h.pipeline.process({ request: "trade", requestId: "oe-6" })
      expect(failures).toEqual([])
      const record = yield* h.record("oe-6")
      expect(at(record, "on_error").map((i) => [i.name, i.status, i.skipReason])).toEqual([
        ["errors", "skipped", "disabled"]
      ])
      const refused = yield* Effect.flip(makeHarness({ hooks: [collector([], { failure: "fail_closed" })] }))
      expect(refused).toMatchObject({
        _tag: "InvalidHookSubscription",
        reason: "policy_not_applicable",
        hookName: "errors"
      })
    }))

  it.scoped("seed 001/004: a fire-and-record onError hook runs off the request's path; recorded backgrounded, then completed", () =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<string>()
      // The agent's Layer lives as long as the test: its pool runs the detached hook.
      const agent = yield* makeSeamAgent({
        hooks: [
          noTrades,
          Hook.make({
            name: "late",
            execution: Hook.fireAndRecord,
            onError: (call) => Deferred.succeed(done, call.callId)
          })
        ],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const result = yield* agent.pipeline.process({ request: "trade", requestId: "oe-7" })
      expect(result._tag).toBe("Completed")
      const callId = yield* Deferred.await(done)
      let entry: ExecutionRecord.HookInvocation | undefined
      for (let i = 0; i < 100 && entry?.status !== "completed"; i++) {
        entry = at(yield* agent.test.record("oe-7"), "on_error")[0]
        if (entry?.status !== "completed") yield* Effect.yieldNow()
      }
      expect(entry).toMatchObject({ name: "late", callId, execution: "fire_and_record", status: "completed" })
    }))

  it.effect("seed 004: a JavaScript caller's onError that is not a function fails registration", () =>
    Effect.gen(function*() {
      const error = yield* Effect.either(
        makeHarness({ hooks: [{ name: "js", onError: "log it" } as unknown as Hook.Hook<never>] })
      )
      expect(Either.isLeft(error) && error.left).toMatchObject({
        _tag: "InvalidOrchestratorConfig",
        index: 0,
        detail: "onError is a string, not a function"
      })
    }))
})
