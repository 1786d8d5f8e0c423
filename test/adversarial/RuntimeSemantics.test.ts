/**
 * Adversarial class 7, "runtime semantics that break their own
 * documentation" (issue 17): each rule the README states, pinned by a test
 * named after it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Either, Stream, TestClock } from "effect"
import {
  Agent,
  type AgentResponse,
  Hook,
  type Operation,
  Pipeline,
  type ShortCircuit,
  ToolRegistry
} from "effect-agent-pipeline"
import { allTools, NAMESPACE, StockQuote } from "../../examples/shared/DemoTools.js"
import {
  awaitRecord,
  buildAgent,
  joinWithin,
  runOf,
  settle,
  startClosing,
  untilSleeping,
  untypedHook
} from "../runtime/SubscriptionsSupport.js"
import { makeHarness, plan, quoteStep } from "../support/Harness.js"
import { HookRegistration } from "../support/Internal.js"

/** A gate as a JavaScript caller could return it: its shape is not checked. */
const untypedGate = (gate: unknown): ShortCircuit.PipelineGate => gate as ShortCircuit.PipelineGate

const script = { plans: [plan([quoteStep("s1")])], synthesis: "one two three", chunks: ["one", " two", " three"] }

/** A quote tool that counts how often its handler runs. */
const countingQuotes = () => {
  const runs = { count: 0 }
  const quote = ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "stock-service",
    tool: StockQuote,
    handler: ({ symbol }) => Effect.sync(() => (runs.count++, { symbol, price: 42, currency: "USD" }))
  })
  return { tools: [...allTools.filter((t) => t.tool.name !== "stock_quote"), quote], runs }
}

describe("runtime semantics: guards and dependencies", () => {
  it.effect("rule: a fail-closed guard whose dependsOn hook failed does not run — it denies the operation with dependency_failed, and the tool never runs", () =>
    Effect.gen(function*() {
      const { runs, tools } = countingQuotes()
      const h = yield* makeHarness({
        hooks: [
          // Fails, fails open: steps aside, so the operation would run as if it were absent…
          Hook.make({
            name: "lookup",
            failure: "fail_open",
            guard: { toolCall: () => Effect.fail(new Error("policy store down")) }
          }),
          // …but this governance guard needs its verdict, and fails closed (the guards' default).
          Hook.make({ name: "governance", dependsOn: ["lookup"], guard: { toolCall: (_call, proceed) => proceed } })
        ],
        script,
        tools
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "dep-guard" })
      expect(result._tag).toBe("Completed")
      expect(runs.count).toBe(0)
      const record = yield* h.record("dep-guard")
      expect(runOf(record, "guard_tool_call", "lookup").status).toBe("failed")
      const governance = runOf(record, "guard_tool_call", "governance")
      expect([governance.status, governance.skipReason]).toEqual(["skipped", "dependency_failed"])
      expect(record.phases[0]?.steps[0]?.status).toBe("denied")
      expect(record.phases[0]?.steps[0]?.error).toMatch(/dependency_failed/)
    }))

  it.effect("rule: a fail-open guard whose dependency failed is skipped, and the operation runs", () =>
    Effect.gen(function*() {
      const { runs, tools } = countingQuotes()
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "lookup",
            failure: "fail_open",
            guard: { toolCall: () => Effect.fail(new Error("down")) }
          }),
          Hook.make({
            name: "advice",
            failure: "fail_open",
            dependsOn: ["lookup"],
            guard: { toolCall: (_call, proceed) => proceed }
          })
        ],
        script,
        tools
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "dep-open" })
      expect(runs.count).toBe(1)
      expect((yield* h.record("dep-open")).phases[0]?.steps[0]?.status).toBe("succeeded")
    }))
})

describe("runtime semantics: an abandoned stream is canceled", () => {
  it.effect("rule: a stream its consumer abandons ends its request and its synthesis call as canceled, not completed; AfterSynthesis never runs", () =>
    Effect.gen(function*() {
      const outcomes: Array<string> = []
      const afterSynthesis: Array<string> = []
      const observe = (call: Operation.Call) =>
        Effect.succeed((result: Operation.Result) =>
          Effect.sync(() => {
            if (call.operation === "request" || ("purpose" in call.payload && call.payload.purpose === "synthesis")) {
              outcomes.push(`${call.operation}:${result.outcome}`)
            }
          })
        )
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "watch", around: { request: observe, inference: observe } }),
          Hook.make({ name: "post", afterSynthesis: (_c, t) => Effect.sync(() => (afterSynthesis.push(t), t)) })
        ],
        script
      })
      const taken = yield* Stream.runCollect(
        Stream.take(h.pipeline.stream({ request: "quote ACME", requestId: "abandoned" }), 1)
      )
      expect(Chunk.toReadonlyArray(taken).map((e: AgentResponse.StreamEvent) => e._tag)).toEqual(["Token"])
      expect(outcomes.sort()).toEqual(["inference:canceled", "request:canceled"])
      expect(afterSynthesis).toEqual([])
      expect((yield* h.record("abandoned")).lifecycle?.status).toBe("interrupted")
    }))

  it.effect("rule: a stream read to its end ends its request and synthesis call as completed", () =>
    Effect.gen(function*() {
      const outcomes: Array<string> = []
      const observe = (call: Operation.Call) =>
        Effect.succeed((result: Operation.Result) =>
          Effect.sync(() => {
            if (call.operation === "request" || ("purpose" in call.payload && call.payload.purpose === "synthesis")) {
              outcomes.push(`${call.operation}:${result.outcome}`)
            }
          })
        )
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "watch", around: { request: observe, inference: observe } })],
        script
      })
      yield* Stream.runDrain(h.pipeline.stream({ request: "quote ACME", requestId: "read-all" }))
      expect(outcomes.sort()).toEqual(["inference:completed", "request:completed"])
      expect((yield* h.record("read-all")).lifecycle?.status).toBe("succeeded")
    }))
})

describe("runtime semantics: detached runs", () => {
  it.effect("rule: shutdown waits for a detached Around observer at most drainTimeout, as it does for detached stage hooks", () =>
    Effect.gen(function*() {
      const agent = yield* buildAgent({
        hooks: [
          Hook.make({
            name: "slow-audit",
            execution: Hook.background,
            // Interruptible, just slow: shutdown interrupts it once the drain bound passed.
            around: { toolCall: () => Effect.succeed(() => Effect.sleep("1 hour")) }
          })
        ],
        script,
        pool: { drainTimeout: "1 second", hookTimeout: "2 hours" }
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "slow-audit" })
      yield* awaitRecord(agent, "slow-audit", (r) => r.hookInvocations.some((i) => i.name === "slow-audit"))
      const closing = yield* startClosing(agent)
      yield* untilSleeping(2)
      yield* TestClock.adjust("1 second")
      yield* joinWithin(closing, "shutdown")
      const run = runOf(yield* agent.record("slow-audit"), "around_tool_call", "slow-audit")
      expect([run.status, run.error]).toEqual(["failed", "interrupted at shutdown"])
    }))

  it.effect("rule: a detached run whose start falls in a later millisecond than its queuing appears once in the record (matched by its run id)", () =>
    Effect.gen(function*() {
      const agent = yield* buildAgent({
        hooks: [
          Hook.make({ name: "first", execution: Hook.background, afterExecution: () => Effect.sleep("5 millis") }),
          Hook.make({ name: "second", execution: Hook.background, afterExecution: () => Effect.void })
        ],
        script,
        // One at a time: the second starts only after the first's sleep.
        pool: { concurrency: 1 }
      })
      yield* agent.pipeline.process({ request: "quote ACME", requestId: "later-ms" })
      yield* untilSleeping()
      yield* TestClock.adjust("5 millis")
      const record = yield* awaitRecord(
        agent,
        "later-ms",
        (r) => r.hookInvocations.filter((i) => i.stage === "after_execution" && i.status === "completed").length === 2,
        "both detached runs to complete"
      )
      const runs = record.hookInvocations.filter((i) => i.stage === "after_execution")
      expect(runs.map((r) => [r.name, r.status])).toEqual([["first", "completed"], ["second", "completed"]])
      // The second really started later than it was queued.
      expect(runs[1]!.startedAt).toBeGreaterThan(record.lifecycle?.endedAt ?? Number.POSITIVE_INFINITY)
      expect(runs.every((r) => typeof r.runId === "string")).toBe(true)
      yield* settle
    }))
})

describe("runtime semantics: the required boundary is explicit", () => {
  it.effect("rule: only required: true makes the boundary — a second fail-closed after-planning hook is an ordinary fail-closed hook that runs before it and stops the request with HookFailed", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "strict",
            failure: "fail_closed",
            afterPlanning: () => Effect.sync(() => calls.push("strict")).pipe(Effect.zipRight(Effect.fail("no")))
          }),
          Hook.required({ name: "boundary", afterPlanning: (_c, p) => Effect.sync(() => (calls.push("boundary"), p)) })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "two-closed" }))
      expect(error._tag === "HookFailed" && [error.hookName, error.point]).toEqual(["strict", "after_planning"])
      expect(calls).toEqual(["strict"])
    }))

  it.effect("rule: a fail_closed after-planning hook without the marker does not have to be last", () =>
    Effect.sync(() => {
      const validated = HookRegistration.validate([
        Hook.make({ name: "strict", failure: "fail_closed", afterPlanning: (_c, p) => Effect.succeed(p) }),
        Hook.make({ name: "after", afterPlanning: (_c, p) => Effect.succeed(p) })
      ])
      expect(Either.isRight(validated)).toBe(true)
    }))
})

describe("runtime semantics: registration refuses what it cannot honour", () => {
  it.effect("rule: a misspelled hook key (beforePlaning) is refused with InvalidOrchestratorConfig naming it, never silently ignored", () =>
    Effect.gen(function*() {
      const hook = untypedHook({ name: "typo", beforePlaning: () => Effect.void })
      const validated = HookRegistration.validate([Hook.make({ name: "fine" }), hook])
      if (Either.isRight(validated)) return expect.unreachable("a misspelled key was accepted")
      expect(validated.left._tag).toBe("InvalidOrchestratorConfig")
      expect(validated.left._tag === "InvalidOrchestratorConfig" && validated.left.index).toBe(1)
      expect(validated.left.message).toContain("unknown key \"beforePlaning\" (did you mean \"beforePlanning\"?)")
      const error = yield* Effect.flip(makeHarness({ hooks: [hook] }))
      expect(error._tag).toBe("InvalidOrchestratorConfig")
    }))

  it.effect("rule: a negative, zero or infinite Hook.deadline or timeout is refused (policy_not_applicable)", () =>
    Effect.sync(() => {
      const cases: ReadonlyArray<Hook.Hook<never>> = [
        Hook.make({ name: "negative", execution: Hook.deadline(-5), beforePlanning: () => Effect.void }),
        Hook.make({ name: "zero", execution: Hook.deadline(0), beforePlanning: () => Effect.void }),
        Hook.make({ name: "infinite", execution: Hook.deadline(Duration.infinity), beforePlanning: () => Effect.void }),
        Hook.make({ name: "negative-timeout", timeout: -1, beforePlanning: () => Effect.void }),
        Hook.make({ name: "nan-timeout", timeout: Number.NaN, beforePlanning: () => Effect.void }),
        Hook.make({
          name: "both",
          timeout: "1 second",
          execution: Hook.deadline("2 seconds"),
          beforePlanning: () => Effect.void
        })
      ]
      for (const hook of cases) {
        const validated = HookRegistration.validate([hook])
        if (Either.isRight(validated)) return expect.unreachable(`${hook.name} was accepted`)
        expect(validated.left._tag === "InvalidHookSubscription" && [validated.left.reason, validated.left.hookName])
          .toEqual([
            "policy_not_applicable",
            hook.name
          ])
      }
    }))

  it.effect("rule: a positive timeout is accepted", () =>
    Effect.sync(() => {
      expect(
        Either.isRight(
          HookRegistration.validate([
            Hook.make({ name: "ok", timeout: "5 seconds", beforePlanning: () => Effect.void })
          ])
        )
      ).toBe(true)
    }))
})

describe("runtime semantics: a broken gate fails closed", () => {
  it.effect("rule: a gate whose forRequest throws (or returns something that is not a gate) turns cache reads off for the request instead of failing it; a cache decision is not accepted", () =>
    Effect.gen(function*() {
      const cached = Hook.make({
        name: "cache",
        beforePlanning: () =>
          Effect.succeed({
            decision: { kind: "cache", shortCircuit: { response: "cached answer" }, cachedAgainst: {} }
          })
      })
      for (
        const forRequest of [
          () => {
            throw new Error("gate store down")
          },
          () => untypedGate({ cacheReadEnabled: "yes", cacheVary: {} }),
          () => untypedGate({ cacheReadEnabled: true, cacheVary: { model: 4 } })
        ]
      ) {
        const result = yield* Effect.gen(function*() {
          const pipeline = yield* Pipeline.Pipeline
          return yield* pipeline.process({ request: "quote ACME", requestId: "gate" })
        }).pipe(Effect.provide(Agent.layerTest({ tools: allTools, hooks: [cached], gate: { forRequest }, script })))
        expect(result._tag === "Completed" && result.response.response).toBe("one two three")
      }
    }))
})
