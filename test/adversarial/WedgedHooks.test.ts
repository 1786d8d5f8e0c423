/**
 * Adversarial class 3, "a hook can wedge a request forever" (issue 17):
 * every hook invocation of every kind is bounded by a deadline — the
 * pipeline's `hookTimeout` unless the hook sets its own — and work that
 * ignores its interruption is abandoned after the grace period, recorded as
 * such, and never holds up the request, its interruption or shutdown.
 * `proceed` runs the operation at most once, inside the guard.
 *
 * Deadlines run on the TestClock: a test forks the request, waits until the
 * deadline timer sleeps, moves the clock, and joins.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Scope, TestClock } from "effect"
import { type AgentResponse, type ExecutionRecord, Hook, ToolRegistry } from "effect-agent-pipeline"
import { allTools, NAMESPACE, StockQuote } from "../../examples/shared/DemoTools.js"
import {
  awaitRecord,
  buildAgent,
  joinWithin,
  runOf,
  settle,
  startClosing,
  untilSleeping
} from "../runtime/SubscriptionsSupport.js"
import { makeHarness, plan, quoteStep } from "../support/Harness.js"

const script = { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
const options = { hookTimeout: "1 second", hookGracePeriod: "100 millis" } as const

const text = (result: AgentResponse.PipelineResult) =>
  result._tag === "Completed" ? result.response.response : `(${result._tag})`

/** Never ends, and cannot be interrupted: only abandoning it ends the wait. */
const wedged = Effect.uninterruptible(Effect.never)

/** A quote tool that counts how often its handler starts and how often it finishes. */
const countingQuotes = (latency?: Duration.DurationInput) => {
  const runs = { started: 0, finished: 0 }
  const quote = ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "stock-service",
    tool: StockQuote,
    handler: ({ symbol }) =>
      Effect.gen(function*() {
        runs.started++
        if (latency !== undefined) yield* Effect.sleep(latency)
        runs.finished++
        return { symbol, price: 42, currency: "USD" }
      })
  })
  return { tools: [...allTools.filter((t) => t.tool.name !== "stock_quote"), quote], runs }
}

/** Forks `effect`, moves the clock by `by` once `sleepers` fibers sleep on it, joins. */
const passing = <A, E>(effect: Effect.Effect<A, E>, by: Duration.DurationInput, sleepers = 1) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* untilSleeping(sleepers)
    yield* TestClock.adjust(by)
    // The grace period after an interruption that was ignored.
    yield* settle
    yield* TestClock.adjust(options.hookGracePeriod)
    return yield* joinWithin(fiber, "the request")
  })

const onlyRun = (
  record: ExecutionRecord.ExecutionRecord,
  point: ExecutionRecord.HookInvocation["stage"],
  name: string
) => runOf(record, point, name)

describe("wedged hooks: every hook invocation is bounded", () => {
  it.effect("wedged hooks: a stage hook returning Effect.never times out at the pipeline's hookTimeout; fail-open carries on", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "never", beforePlanning: () => Effect.never })],
        script,
        options
      })
      const result = yield* passing(h.pipeline.process({ request: "quote ACME", requestId: "never-bp" }), "1 second")
      expect(text(result)).toBe("draft")
      const run = onlyRun(yield* h.record("never-bp"), "before_planning", "never")
      expect([run.status, run.decision?.reason, run.error]).toEqual(["timed_out", "timed_out", "timed out after 1s"])
      expect(run.abandoned).toBeUndefined()
    }))

  it.effect("wedged hooks: without any option the default bound is 30 seconds — no hook waits forever", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "never", afterExecution: () => Effect.never })],
        script
      })
      const result = yield* passing(
        h.pipeline.process({ request: "quote ACME", requestId: "never-default" }),
        "30 seconds"
      )
      expect(text(result)).toBe("draft")
      expect(onlyRun(yield* h.record("never-default"), "after_execution", "never").error).toBe("timed out after 30s")
    }))

  it.effect("wedged hooks: a fail-closed stage hook that never returns stops the request with HookFailed timed_out", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "gate", failure: "fail_closed", afterSynthesis: () => Effect.never })],
        script,
        options
      })
      const error = yield* passing(
        Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "never-closed" })),
        "1 second"
      )
      expect(error._tag === "HookFailed" && [error.hookName, error.reason]).toEqual(["gate", "timed_out"])
    }))

  it.effect("wedged hooks: a hook that ignores interruption is abandoned after the grace period, recorded as abandoned, and the request goes on", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "stubborn", beforePlanning: () => wedged })],
        script,
        options
      })
      const result = yield* passing(h.pipeline.process({ request: "quote ACME", requestId: "stubborn" }), "1 second")
      expect(text(result)).toBe("draft")
      const run = onlyRun(yield* h.record("stubborn"), "before_planning", "stubborn")
      expect(run.status).toBe("timed_out")
      expect(run.abandoned).toBe(true)
      expect(run.error).toMatch(/^timed out after 1s; abandoned/)
    }))

  it.effect("wedged hooks: a per-hook timeout overrides the pipeline's; Hook.deadline is one", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "own", timeout: "200 millis", beforePlanning: () => Effect.never }),
          Hook.make({ name: "deadline", execution: Hook.deadline("300 millis"), afterExecution: () => Effect.never })
        ],
        script,
        options
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote ACME", requestId: "own" }))
      yield* untilSleeping()
      yield* TestClock.adjust("200 millis")
      yield* untilSleeping()
      yield* TestClock.adjust("300 millis")
      expect(text(yield* joinWithin(fiber, "the request"))).toBe("draft")
      const record = yield* h.record("own")
      expect(onlyRun(record, "before_planning", "own").error).toBe("timed out after 200ms")
      expect(onlyRun(record, "after_execution", "deadline").error).toBe("timed out after 300ms")
    }))

  it.effect("wedged hooks: a transform that never returns is bounded too (fail closed: its step fails, the request goes on)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "slow-args", beforeTool: () => Effect.never })],
        script,
        options
      })
      const result = yield* passing(h.pipeline.process({ request: "quote ACME", requestId: "transform" }), "1 second")
      expect(result._tag).toBe("Completed")
      const record = yield* h.record("transform")
      expect(onlyRun(record, "before_tool", "slow-args").status).toBe("timed_out")
      expect(record.phases[0]?.steps[0]?.status).toBe("failed")
    }))
})

describe("wedged hooks: observers never hold up an interruption or shutdown", () => {
  it.effect("wedged hooks: an Around observer whose finish never returns (and ignores interruption) cannot keep an interrupted request from ending; its run is recorded, not left running", () =>
    Effect.gen(function*() {
      const inTool = yield* Deferred.make<void>()
      const { tools } = countingQuotes()
      const blocking = tools.map((t) =>
        t.tool.name === "stock_quote"
          ? ToolRegistry.entry({
            namespace: NAMESPACE,
            agent: "stock-service",
            tool: StockQuote,
            handler: () => Effect.zipRight(Deferred.succeed(inTool, undefined), Effect.never)
          })
          : t
      )
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "watcher", around: { toolCall: () => Effect.succeed(() => wedged) } })],
        script,
        tools: blocking,
        options
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote ACME", requestId: "interrupted" }))
      yield* Deferred.await(inTool)
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      // The finish callback gets the grace period (the run was canceled), then is abandoned.
      yield* untilSleeping()
      yield* TestClock.adjust(options.hookGracePeriod)
      yield* settle
      yield* TestClock.adjust(options.hookGracePeriod)
      const exit = yield* joinWithin(interrupting, "the interruption")
      expect(Exit.isInterrupted(exit)).toBe(true)
      const record = yield* h.record("interrupted")
      expect(record.lifecycle?.status).toBe("interrupted")
      const run = onlyRun(record, "around_tool_call", "watcher")
      expect(run.status).not.toBe("started")
      expect(run.abandoned).toBe(true)
    }))

  it.effect("wedged hooks: a detached Around observer that never returns does not hold shutdown past drainTimeout + the grace period", () =>
    Effect.gen(function*() {
      const agent = yield* buildAgent({
        hooks: [
          Hook.make({
            name: "detached-watcher",
            execution: Hook.fireAndRecord,
            around: { toolCall: () => Effect.succeed(() => wedged) }
          })
        ],
        script,
        pool: { drainTimeout: "1 second", hookTimeout: "1 hour", hookGracePeriod: "100 millis" }
      })
      const result = yield* agent.pipeline.process({ request: "quote ACME", requestId: "detached" })
      expect(text(result)).toBe("draft")
      yield* awaitRecord(agent, "detached", (r) => r.hookInvocations.some((i) => i.name === "detached-watcher"))
      const closing = yield* startClosing(agent)
      // The drain waits its bound, then the run is interrupted and gets its grace period.
      yield* untilSleeping()
      yield* TestClock.adjust("1 second")
      yield* settle
      yield* TestClock.adjust("100 millis")
      yield* settle
      yield* TestClock.adjust("100 millis")
      yield* joinWithin(closing, "shutdown")
      const run = onlyRun(yield* agent.record("detached"), "around_tool_call", "detached-watcher")
      expect(run.status).toBe("failed")
      expect(run.error).toMatch(/interrupted at shutdown; abandoned/)
      expect(run.abandoned).toBe(true)
    }))
})

describe("wedged hooks: proceed is single-use and must complete inside the guard", () => {
  it.effect("wedged hooks: a guard that calls proceed twice runs the tool once; the misuse is recorded and the step is denied (proceed_misuse)", () =>
    Effect.gen(function*() {
      const { runs, tools } = countingQuotes()
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "twice",
            guard: { toolCall: (_call, proceed) => Effect.zipRight(proceed, proceed) }
          })
        ],
        script,
        tools,
        options
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "twice" })
      expect(result._tag).toBe("Completed")
      expect(runs).toEqual({ started: 1, finished: 1 })
      const record = yield* h.record("twice")
      const run = onlyRun(record, "guard_tool_call", "twice")
      expect([run.status, run.attempts, run.decision]).toEqual([
        "denied",
        1,
        { policy: "fail_closed", action: "deny", reason: "proceed_misuse" }
      ])
      expect(run.error).toMatch(/called again after the operation had succeeded/)
      expect(record.phases[0]?.steps[0]?.status).toBe("denied")
    }))

  it.effect("wedged hooks: a guard may retry proceed after a failure (attempts counted) — that is not a misuse", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "retry",
            guard: { inference: (_call, proceed) => Effect.retry(proceed, { times: 1 }) }
          })
        ],
        // The first planning call fails; the guard's retry gets the plan.
        script: { plans: [new Error("model down"), plan([quoteStep("s1")])], synthesis: "draft" },
        options: { ...options, modelRetries: 0 }
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "retry" })
      expect(text(result)).toBe("draft")
      const runs = (yield* h.record("retry")).hookInvocations.filter((i) => i.stage === "guard_inference")
      // Planning (retried once), then synthesis.
      expect(runs.map((r) => [r.status, r.attempts])).toEqual([["completed", 2], ["completed", 1]])
    }))

  it.effect("wedged hooks: a guard that forks proceed and denies at once never lets the tool run after it ended (the record says denied, and it is true)", () =>
    Effect.gen(function*() {
      const { runs, tools } = countingQuotes()
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "escape",
            guard: {
              toolCall: (_call, proceed) => Effect.zipRight(Effect.forkDaemon(proceed), Hook.deny("no"))
            }
          })
        ],
        script,
        tools,
        options
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "escape" })
      expect(result._tag).toBe("Completed")
      // Give the escaped fiber every chance to run.
      yield* settle
      yield* settle
      expect(runs.started).toBe(0)
      const record = yield* h.record("escape")
      expect(onlyRun(record, "guard_tool_call", "escape").status).toBe("denied")
      expect(record.phases[0]?.steps[0]?.status).toBe("denied")
    }))

  it.effect("wedged hooks: a proceed still running when its guard ends (forked, not awaited) is interrupted before the decision — the tool never completes", () =>
    Effect.gen(function*() {
      const { runs, tools } = countingQuotes("10 seconds")
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "escape-late",
            guard: {
              toolCall: (_call, proceed) =>
                Effect.gen(function*() {
                  yield* Effect.fork(proceed)
                  // Let the forked proceed start the tool, then return without waiting for it.
                  for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
                  return yield* Hook.deny("changed my mind")
                })
            }
          })
        ],
        script,
        tools,
        options
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "escape-late" })
      expect(result._tag).toBe("Completed")
      expect(runs).toEqual({ started: 1, finished: 0 })
      const record = yield* h.record("escape-late")
      const run = onlyRun(record, "guard_tool_call", "escape-late")
      expect([run.status, run.decision?.reason]).toEqual(["denied", "proceed_misuse"])
      expect(run.error).toMatch(/escaped the guard/)
      expect(record.phases[0]?.steps[0]?.status).toBe("denied")
    }))

  it.effect("wedged hooks: a guard that never calls proceed nor returns is denied at its deadline (timed_out); the tool never runs", () =>
    Effect.gen(function*() {
      const { runs, tools } = countingQuotes()
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "stuck-guard", guard: { toolCall: () => Effect.never } })],
        script,
        tools,
        options
      })
      const result = yield* passing(h.pipeline.process({ request: "quote ACME", requestId: "stuck-guard" }), "1 second")
      expect(result._tag).toBe("Completed")
      expect(runs.started).toBe(0)
      const record = yield* h.record("stuck-guard")
      expect(onlyRun(record, "guard_tool_call", "stuck-guard").status).toBe("denied")
      expect(record.phases[0]?.steps[0]?.status).toBe("denied")
    }))

  it.effect("wedged hooks: a guard's deadline counts only its own time — an operation that runs longer than it inside proceed is not cut short", () =>
    Effect.gen(function*() {
      const { runs, tools } = countingQuotes("5 seconds")
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "patient", guard: { toolCall: (_call, proceed) => proceed } })],
        script,
        tools,
        options: { ...options, toolTimeout: "1 minute" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote ACME", requestId: "patient" }))
      // The tool's sleep, the guard's watch and the tool's own timeout.
      yield* untilSleeping(3)
      yield* TestClock.adjust("5 seconds")
      const result = yield* joinWithin(fiber, "the request")
      expect(result._tag).toBe("Completed")
      expect(runs).toEqual({ started: 1, finished: 1 })
      const record = yield* h.record("patient")
      expect(onlyRun(record, "guard_tool_call", "patient").status).toBe("completed")
      expect(record.phases[0]?.steps[0]?.error).toBeUndefined()
      expect(record.phases[0]?.steps[0]).toMatchObject({ status: "succeeded" })
    }))
})

describe("wedged hooks: the agent's scope closes", () => {
  it.effect("wedged hooks: an agent whose hooks are all wedged still shuts down (its Layer closes)", () =>
    Effect.gen(function*() {
      const agent = yield* buildAgent({
        hooks: [
          Hook.make({ name: "bg", execution: Hook.background, afterExecution: () => wedged })
        ],
        script,
        pool: { drainTimeout: "500 millis", hookGracePeriod: "100 millis" }
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "bg" })
      const closing = yield* startClosing(agent)
      yield* untilSleeping()
      yield* TestClock.adjust("500 millis")
      yield* settle
      yield* TestClock.adjust("100 millis")
      yield* settle
      yield* TestClock.adjust("100 millis")
      yield* joinWithin(closing, "shutdown")
      const closed = yield* Scope.close(agent.scope, Exit.void).pipe(Effect.as("closed"))
      expect(closed).toBe("closed")
    }))
})
