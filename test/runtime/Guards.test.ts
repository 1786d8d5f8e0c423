/**
 * Guards (seed 003): only guardable operations may be guarded; a guard wraps
 * or denies each run of its operation. Where a denial lands (a tool step, the
 * request, a retrieval or memory call), what each way a guard can end means
 * (proceed's own failure, a refusal, another failure, a deadline overrun,
 * fail-open), undeclared refusals, composition order, whole-run wraps
 * (retry, timeout) with their attempts, and cause preservation.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Data, Deferred, Effect, Either, Exit, Fiber, TestClock } from "effect"
import { Hook, Memory, Operation, PipelineError, Retrieval, ToolRegistry } from "effect-agent-pipeline"
import { allTools, ExecuteTrade, NAMESPACE } from "../../examples/shared/DemoTools.js"
import { convertStep, makeHarness, plan, quoteStep, tradeStep } from "../support/Harness.js"
import { HookRegistration } from "../support/Internal.js"
import {
  at,
  blockingStep,
  blockingTool,
  completed,
  makeSeamAgent,
  observerOf,
  runsOf,
  type SeamServices,
  type Seen,
  stepResultsIn,
  textPrompts,
  untyped
} from "./OperationsSupport.js"

/** Denies every trade; lets every other tool call through. */
const noTrades = (options: Partial<Hook.Hook<never>> = {}): Hook.Hook<never> =>
  Hook.make({
    name: "no-trades",
    ...options,
    guard: {
      toolCall: (call, proceed) =>
        call.payload.capability === "execute_trade" ? Hook.deny("trades are not allowed") : proceed
    }
  })

/** Logs every tool handler run (`tool_execution`). */
const executions = (seen: Array<Seen>, log?: Array<string>): Hook.Hook<never> =>
  Hook.make({ name: "executions", around: { toolExecution: observerOf("exec", seen, log) } })

/** The demo tools with a trade tool that counts its executions. */
const countingTrades = () => {
  const trades: Array<number> = []
  const trade = ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "trading-service",
    tool: ExecuteTrade,
    handler: ({ quantity, side, symbol }) =>
      Effect.sync(() => {
        trades.push(quantity)
        return { orderId: `mock-${side}-${symbol}-${quantity}`, status: "accepted (mock)" }
      })
  })
  return { tools: [...allTools.filter((t) => t.tool.name !== "execute_trade"), trade], trades }
}

class PolicyStoreDown extends Data.TaggedError("PolicyStoreDown")<{ readonly message: string }> {}

const byStep = <A extends { readonly stepId?: string | undefined }>(entries: ReadonlyArray<A>): ReadonlyArray<A> =>
  [...entries].sort((a, b) => (a.stepId ?? "").localeCompare(b.stepId ?? ""))

// ---------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------

describe("guards: construction", () => {
  it.effect("seed 003: a guard on a non-guardable operation is refused at construction (InvalidHookSubscription not_guardable)", () =>
    Effect.gen(function*() {
      const cases = [
        ["phase", "phase"],
        ["toolExecution", "tool_execution"],
        ["approvalWait", "approval_wait"],
        ["recordWrite", "record_write"]
      ] as const
      for (const [key, operation] of cases) {
        const name = `guard-${key}`
        // TypeScript does not allow these keys: a JavaScript caller could write them.
        const hook = untyped({ name, guard: { [key]: (_call: unknown, proceed: unknown) => proceed } })
        const error = yield* Effect.flip(makeHarness({ hooks: [hook] }))
        expect(error).toBeInstanceOf(PipelineError.InvalidHookSubscription)
        expect(error).toMatchObject({ _tag: "InvalidHookSubscription", reason: "not_guardable", hookName: name })
        expect(error.message).toContain(`${operation} is not a guardable operation`)
        // The same verdict without building anything.
        const validated = HookRegistration.validate([hook])
        expect(Either.isLeft(validated) && validated.left._tag === "InvalidHookSubscription" && validated.left.reason)
          .toBe("not_guardable")
      }
    }))

  it.effect("seed 003: a hook whose other guards are valid is still refused for one non-guardable guard", () =>
    Effect.gen(function*() {
      const hook = untyped({
        name: "mixed",
        guard: {
          toolCall: (_call: unknown, proceed: unknown) => proceed,
          toolExecution: (_call: unknown, proceed: unknown) => proceed
        }
      })
      const error = yield* Effect.flip(
        makeHarness({ hooks: [Hook.make({ name: "fine", guard: { request: (_c, p) => p } }), hook] })
      )
      expect(error).toMatchObject({ _tag: "InvalidHookSubscription", reason: "not_guardable", hookName: "mixed" })
    }))

  it.effect("seed 003: a guard key that names no operation is refused at construction", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        makeHarness({ hooks: [untyped({ name: "turn-guard", guard: { turn: (_c: unknown, p: unknown) => p } })] })
      )
      expect(error).toMatchObject({ _tag: "InvalidOrchestratorConfig", index: 0 })
      expect(error.message).toContain("guard.turn is not an operation")
    }))

  it.effect("seed 003: the guardable operations are exactly request, inference, tool_call, retrieval, memory_load, memory_store; a guard on each builds", () =>
    Effect.gen(function*() {
      expect(Operation.operations.filter(Operation.isGuardable)).toEqual([
        "request",
        "inference",
        "tool_call",
        "retrieval",
        "memory_load",
        "memory_store"
      ])
      const pass = <A, E>(_call: unknown, proceed: Effect.Effect<A, E>) => proceed
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "all-guards",
            guard: {
              request: pass,
              inference: pass,
              toolCall: pass,
              retrieval: pass,
              memoryLoad: pass,
              memoryStore: pass
            }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "g-all" }))
      expect(response.response).toBe("ok")
      const record = yield* h.record("g-all")
      expect(record.hookInvocations.map((i) => `${i.stage}:${i.status}`).sort()).toEqual([
        "guard_inference:completed",
        "guard_inference:completed",
        "guard_request:completed",
        "guard_tool_call:completed"
      ])
    }))
})

// ---------------------------------------------------------------------------
// Where a denial lands
// ---------------------------------------------------------------------------

describe("guards: a denied tool call", () => {
  it.effect("seed 003: a tool_call guard's refusal makes that step denied with the HookDenied message; the request goes on to synthesis", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [noTrades(), executions(seen)],
        script: { plans: [plan([quoteStep("q1"), tradeStep("t1")])], synthesis: "done" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote and buy", requestId: "g-tool" }))
      const steps = response.phases[0]!.steps
      expect(steps.map((s) => [s.step_id, s.status])).toEqual([["q1", "succeeded"], ["t1", "denied"]])
      expect(steps[1]!.error).toBe("tool_call denied by hook \"no-trades\" (refused): trades are not allowed")
      expect(steps[1]!.output).toBeUndefined()
      // The trade's handler never ran.
      expect(runsOf(seen, "tool_execution").map((s) => s.call.payload.capability)).toEqual(["stock_quote"])
      // Synthesis ran and reported the denied step.
      expect(response.response).toBe("done")
      const synthesis = textPrompts(h.prompts)
      expect(synthesis).toHaveLength(1)
      expect(stepResultsIn(synthesis[0]!)?.map((s) => [s.step_id, s.status, s.error])).toEqual([
        ["q1", "succeeded", undefined],
        ["t1", "denied", steps[1]!.error]
      ])

      const record = yield* h.record("g-tool")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.phases[0]!.steps[1]).toMatchObject({ step_id: "t1", status: "denied", error: steps[1]!.error })
      const runs = byStep(at(record, "guard_tool_call"))
      expect(runs).toHaveLength(2)
      expect(runs[0]).toMatchObject({
        name: "no-trades",
        stepId: "q1",
        status: "completed",
        outcome: "succeeded",
        attempts: 1
      })
      expect(runs[1]).toMatchObject({
        name: "no-trades",
        operation: "tool_call",
        stepId: "t1",
        phase: 1,
        status: "denied",
        outcome: "failed",
        error: "trades are not allowed",
        decision: { policy: "fail_closed", action: "deny", reason: "refused" },
        attempts: 0
      })
      expect(runs[1]!.callId).toMatch(/^tool_call-/)
    }))

  it.effect("seed 003: a step that depends on a denied step is skipped, never executed", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [noTrades(), executions(seen)],
        script: {
          plans: [plan([tradeStep("t1"), convertStep("c1", 100, { depends_on: ["t1"] })])],
          synthesis: "done"
        }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy then convert", requestId: "g-skip" }))
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status, s.error])).toEqual([
        ["t1", "denied", "tool_call denied by hook \"no-trades\" (refused): trades are not allowed"],
        ["c1", "skipped", "dependency did not succeed: t1"]
      ])
      expect(seen).toEqual([])
    }))
})

describe("guards: a denied model call", () => {
  it.effect("seed 003: an inference guard's refusal of planning fails the request with HookDenied; nothing is planned or executed", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "budget", guard: { inference: () => Hook.deny("model budget exhausted") } }),
          executions(seen)
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "g-inf" }))
      expect(error).toBeInstanceOf(PipelineError.HookDenied)
      expect(error).toMatchObject({
        _tag: "HookDenied",
        hookName: "budget",
        operation: "inference",
        reason: "refused",
        detail: "model budget exhausted"
      })
      expect(error.message).toBe("inference denied by hook \"budget\" (refused): model budget exhausted")
      // The model never received the prompt.
      expect(h.prompts).toEqual([])
      expect(h.plansUsed()).toBe(0)
      expect(seen).toEqual([])
      const record = yield* h.record("g-inf")
      expect(record.lifecycle).toMatchObject({
        status: "failed",
        errorTag: "HookDenied",
        errorMessage: `HookDenied: ${error.message}`
      })
      expect(record.phases).toEqual([])
      expect(at(record, "guard_inference")).toEqual([
        expect.objectContaining({ name: "budget", operation: "inference", phase: 1, status: "denied", attempts: 0 })
      ])
    }))

  it.effect("seed 003: an inference guard's refusal of synthesis fails the request after the tools ran; the model never gets the synthesis prompt", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "no-synthesis",
            guard: {
              inference: (call, proceed) =>
                call.payload.purpose === "synthesis" ? Hook.deny("answers are drafted by a human") : proceed
            }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "g-syn" }))
      expect(error).toMatchObject({
        _tag: "HookDenied",
        operation: "inference",
        reason: "refused",
        hookName: "no-synthesis"
      })
      expect(textPrompts(h.prompts)).toEqual([])
      const record = yield* h.record("g-syn")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookDenied" })
      expect(record.phases.map((p) => p.steps.map((s) => [s.step_id, s.status]))).toEqual([[["q1", "succeeded"]]])
      expect(record.rawDraft).toBeUndefined()
      expect(at(record, "guard_inference").map((i) => [i.phase, i.status])).toEqual([[1, "completed"], [
        undefined,
        "denied"
      ]])
    }))
})

describe("guards: a denied request", () => {
  it.effect("seed 003: a request guard's refusal fails the request with HookDenied before anything runs; the record's lifecycle is failed (HookDenied)", () =>
    Effect.gen(function*() {
      let beforePlanning = 0
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "count", beforePlanning: () => Effect.sync(() => void beforePlanning++) }),
          Hook.make({ name: "maintenance", guard: { request: () => Hook.deny("down for maintenance") } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "g-req" }))
      expect(error).toMatchObject({
        _tag: "HookDenied",
        hookName: "maintenance",
        operation: "request",
        reason: "refused",
        detail: "down for maintenance"
      })
      expect(beforePlanning).toBe(0)
      expect(h.prompts).toEqual([])
      const record = yield* h.record("g-req")
      expect(record.lifecycle).toMatchObject({
        status: "failed",
        errorTag: "HookDenied",
        errorMessage: `HookDenied: ${error.message}`
      })
      expect(record.hookInvocations).toEqual([
        expect.objectContaining({
          name: "maintenance",
          stage: "guard_request",
          operation: "request",
          status: "denied",
          decision: { policy: "fail_closed", action: "deny", reason: "refused" },
          attempts: 0
        })
      ])
    }))
})

describe("guards: denied retrieval and memory", () => {
  it.scoped("seed 003: a retrieval guard's refusal fails Retrieval.retrieve with HookDenied; other queries go through", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<ReadonlyArray<Operation.Document>, unknown>> = []
      const rag = Hook.make<SeamServices>({
        name: "rag",
        beforePlanning: () =>
          Effect.gen(function*() {
            outcomes.push(yield* Effect.either(Retrieval.retrieve("ACME dividend")))
            outcomes.push(yield* Effect.either(Retrieval.retrieve("ACME secret merger")))
          })
      })
      const guard = Hook.make({
        name: "no-secrets",
        guard: {
          retrieval: (call, proceed) =>
            call.payload.query.includes("secret")
              ? Hook.deny("secret queries are not allowed", { query: call.payload.query })
              : proceed
        }
      })
      const agent = yield* makeSeamAgent({ hooks: [rag, guard] })
      const result = yield* agent.pipeline.process({ request: "quote", requestId: "g-ret" })
      // The hook caught the denial: the request itself is unaffected.
      expect(result._tag).toBe("Completed")
      expect(outcomes).toHaveLength(2)
      const [allowed, refused] = outcomes
      expect(Either.isRight(allowed!) && allowed.right.map((d) => d.id)).toEqual(["d2", "d1", "d4"])
      expect(Either.isLeft(refused!)).toBe(true)
      if (Either.isLeft(refused!)) {
        expect(refused.left).toBeInstanceOf(PipelineError.HookDenied)
        expect(refused.left).toMatchObject({
          _tag: "HookDenied",
          hookName: "no-secrets",
          operation: "retrieval",
          reason: "refused",
          detail: "secret queries are not allowed",
          cause: { query: "ACME secret merger" }
        })
      }
      const record = yield* agent.test.record("g-ret")
      expect(at(record, "guard_retrieval").map((i) => [i.operation, i.status, i.attempts])).toEqual([
        ["retrieval", "completed", 1],
        ["retrieval", "denied", 0]
      ])
    }))

  it.scoped("seed 003: memory guards isolate tenants: a denied Memory.store stores nothing, a denied Memory.load fails with HookDenied", () =>
    Effect.gen(function*() {
      const outcomes: Record<string, Either.Either<unknown, unknown>> = {}
      const tenant = Hook.make<SeamServices>({
        name: "tenant-app",
        beforePlanning: () =>
          Effect.gen(function*() {
            outcomes.storeA = yield* Effect.either(Memory.store("tenant-a", { content: "likes ACME" }))
            outcomes.storeB = yield* Effect.either(Memory.store("tenant-b", { content: "likes MSFT" }))
            outcomes.loadA = yield* Effect.either(Memory.load("tenant-a", ""))
            outcomes.loadB = yield* Effect.either(Memory.load("tenant-b", ""))
          })
      })
      const deny = (scope: string) => Hook.deny(`scope ${scope} belongs to another tenant`)
      const isolation = Hook.make({
        name: "isolation",
        guard: {
          memoryLoad: (call, proceed) => (call.payload.scope === "tenant-a" ? proceed : deny(call.payload.scope)),
          memoryStore: (call, proceed) => (call.payload.scope === "tenant-a" ? proceed : deny(call.payload.scope))
        }
      })
      const agent = yield* makeSeamAgent({ hooks: [tenant, isolation] })
      expect((yield* agent.pipeline.process({ request: "hi", requestId: "g-mem" }))._tag).toBe("Completed")

      expect(outcomes.storeA).toEqual(Either.right("mem-1"))
      expect(Either.isRight(outcomes.loadA!) && outcomes.loadA.right).toEqual([{ id: "mem-1", content: "likes ACME" }])
      for (const [key, operation] of [["storeB", "memory_store"], ["loadB", "memory_load"]] as const) {
        const outcome = outcomes[key]!
        expect(Either.isLeft(outcome) && outcome.left).toMatchObject({
          _tag: "HookDenied",
          hookName: "isolation",
          operation,
          reason: "refused",
          detail: "scope tenant-b belongs to another tenant"
        })
      }
      // Nothing reached tenant-b's memory.
      expect(yield* agent.memory.load("tenant-b", { query: "", limit: 10 })).toEqual([])
      const record = yield* agent.test.record("g-mem")
      expect(at(record, "guard_memory_store").map((i) => i.status)).toEqual(["completed", "denied"])
      expect(at(record, "guard_memory_load").map((i) => i.status)).toEqual(["completed", "denied"])
    }))
})

// ---------------------------------------------------------------------------
// What a guard's ending means
// ---------------------------------------------------------------------------

describe("guards: how a guard ends", () => {
  it.effect("seed 003: a guard failing with proceed's own error lets that failure through (the guard is recorded completed)", () =>
    Effect.gen(function*() {
      const failures: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "watch",
            guard: {
              inference: (_call, proceed) =>
                Effect.tapError(proceed, (e) => Effect.sync(() => void failures.push(String(e))))
            }
          })
        ],
        script: { plans: [new Error("model down")], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "g-own" }))
      // The model's failure, not a denial.
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "model_failed", phase: 1 })
      expect(failures).toHaveLength(1)
      const record = yield* h.record("g-own")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "PlanningError" })
      expect(at(record, "guard_inference")).toEqual([
        expect.objectContaining({ name: "watch", status: "completed", outcome: "succeeded", attempts: 1 })
      ])
      expect(at(record, "guard_inference")[0]!.decision).toBeUndefined()
    }))

  it.effect("seed 003: a guard failing with its own error denies fail-closed (HookDenied hook_failed, the guard's error as cause)", () =>
    Effect.gen(function*() {
      const down = new PolicyStoreDown({ message: "policy store unreachable" })
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "policy", guard: { request: () => Effect.fail(down) } })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "g-fail" }))
      expect(error).toMatchObject({
        _tag: "HookDenied",
        hookName: "policy",
        operation: "request",
        reason: "hook_failed"
      })
      expect(error._tag === "HookDenied" && error.detail).toContain("policy store unreachable")
      const cause = error._tag === "HookDenied" ? error.cause : undefined
      expect(cause).toBeInstanceOf(PolicyStoreDown)
      expect(cause instanceof PolicyStoreDown && cause.message).toBe("policy store unreachable")
      expect(h.plansUsed()).toBe(0)
      const record = yield* h.record("g-fail")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookDenied" })
      expect(at(record, "guard_request")).toEqual([
        expect.objectContaining({
          status: "denied",
          decision: { policy: "fail_closed", action: "deny", reason: "hook_error" },
          attempts: 0
        })
      ])
    }))

  it.effect("seed 003: a failing tool_call guard denies the step (hook_failed); the request completes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "rate-limit", guard: { toolCall: () => Effect.fail(new Error("limiter offline")) } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "g-fail-tool" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({
        status: "denied",
        error: "tool_call denied by hook \"rate-limit\" (hook_failed): limiter offline"
      })
    }))

  it.effect("seed 003: a guard that maps proceed's error is a guard failure: HookDenied hook_failed with the mapped error as cause", () =>
    Effect.gen(function*() {
      const mapped = new PolicyStoreDown({ message: "mapped" })
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "mapper", guard: { inference: (_c, proceed) => Effect.mapError(proceed, () => mapped) } })
        ],
        script: { plans: [new Error("model down")], synthesis: "never" }
      })
      const cause = yield* h.pipeline.process({ request: "quote", requestId: "g-map" }).pipe(
        Effect.as<unknown>("no failure"),
        Effect.catchTag("HookDenied", (e) => Effect.succeed(e.reason === "hook_failed" ? e.cause : e))
      )
      expect(cause).toBeInstanceOf(PolicyStoreDown)
      expect(cause instanceof PolicyStoreDown && cause.message).toBe("mapped")
    }))

  it.effect("seed 001/003: a fail-open guard that fails steps aside: recorded failed, the operation runs as if it were absent", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "flaky-policy",
            failure: "fail_open",
            guard: { toolCall: () => Effect.fail("policy store timeout") }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "g-open" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({ status: "succeeded", output: { symbol: "ACME" } })
      const record = yield* h.record("g-open")
      expect(at(record, "guard_tool_call")).toEqual([
        expect.objectContaining({
          status: "failed",
          error: "policy store timeout",
          decision: { policy: "fail_open", action: "continue", reason: "hook_error" },
          attempts: 0
        })
      ])
    }))

  it.effect("seed 001/003: a fail-open guard that fails after proceed succeeded does not run the operation a second time", () =>
    Effect.gen(function*() {
      const { tools, trades } = countingTrades()
      const h = yield* makeHarness({
        tools,
        hooks: [
          Hook.make({
            name: "audit-after",
            failure: "fail_open",
            guard: { toolCall: (_call, proceed) => Effect.flatMap(proceed, () => Effect.fail("audit sink down")) }
          })
        ],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy", requestId: "g-open-twice" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("succeeded")
      // As if the guard were absent: the trade executed exactly once.
      expect(trades).toEqual([10])
    }))

  it.effect("seed 001/003: a guard without the declared deny capability has its refusal refused: recorded failed (undeclared_contribution), the operation runs", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [noTrades({ capabilities: ["tool_input_rewrite"] }), executions(seen)],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy", requestId: "g-undeclared" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({
        status: "succeeded",
        output: { orderId: "mock-buy-ACME-10" }
      })
      expect(runsOf(seen, "tool_execution")).toHaveLength(1)
      const record = yield* h.record("g-undeclared")
      const [run] = at(record, "guard_tool_call")
      expect(run).toMatchObject({
        name: "no-trades",
        status: "failed",
        outcome: "failed",
        decision: { policy: "fail_closed", action: "continue", reason: "undeclared_contribution" }
      })
      expect(run!.error).toContain("undeclared contribution")
      expect(run!.error).toContain("trades are not allowed")
    }))

  it.effect("seed 001/003: a guard that declares deny may refuse", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [noTrades({ capabilities: ["deny"] })],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy", requestId: "g-declared" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("denied")
    }))
})

describe("guards: panics, disabled guards, detached policies", () => {
  it.effect("seed 001/003: a guard that dies is a panic, not a denial: recorded propagate_panic, and the defect propagates", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "buggy", guard: { inference: () => Effect.die(new Error("null pointer in policy")) } })
        ],
        script: { plans: [plan([])], synthesis: "never" }
      })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "hi", requestId: "g-panic" }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)._tag).toBe("None")
      const record = yield* h.record("g-panic")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "Defect" })
      expect(at(record, "guard_inference")).toEqual([
        expect.objectContaining({
          status: "failed",
          decision: { policy: "fail_closed", action: "propagate_panic", reason: "panic" }
        })
      ])
    }))

  it.effect("seed 001/003: a disabled guard never runs (recorded skipped): the operation runs as if it were absent", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [noTrades({ enabled: false })],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy", requestId: "g-disabled" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("succeeded")
      const record = yield* h.record("g-disabled")
      expect(at(record, "guard_tool_call")).toEqual([
        expect.objectContaining({ name: "no-trades", status: "skipped", skipReason: "disabled", stepId: "t1" })
      ])
    }))

  it.effect("seed 001/003: a guard cannot run detached: a background or fire-and-record guard is refused at construction", () =>
    Effect.gen(function*() {
      for (const execution of [Hook.background, Hook.fireAndRecord]) {
        const error = yield* Effect.flip(makeHarness({ hooks: [noTrades({ execution })] }))
        expect(error).toMatchObject({
          _tag: "InvalidHookSubscription",
          reason: "policy_not_applicable",
          hookName: "no-trades"
        })
      }
    }))

  it.effect("seed 002/003: a transform failing inside a guarded tool call is proceed's own failure: the guard is recorded completed, the step failed", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "gate", guard: { toolCall: (_call, proceed) => proceed } }),
          Hook.make({ name: "redactor", afterTool: () => Effect.fail("redactor down") })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "g-inner-fail" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({
        status: "failed",
        error: "fail-closed hook \"redactor\" stopped the request at after_tool (hook_failed): redactor down"
      })
      const record = yield* h.record("g-inner-fail")
      expect(at(record, "guard_tool_call")).toEqual([expect.objectContaining({ status: "completed", attempts: 1 })])
    }))
})

// ---------------------------------------------------------------------------
// Composition
// ---------------------------------------------------------------------------

describe("guards: composition", () => {
  const wrapping = (name: string, log: Array<string>, options: Partial<Hook.Hook<never>> = {}): Hook.Hook<never> =>
    Hook.make({
      name,
      ...options,
      guard: {
        toolCall: (_call, proceed) =>
          Effect.suspend(() => {
            log.push(`${name}:in`)
            return Effect.ensuring(proceed, Effect.sync(() => void log.push(`${name}:out`)))
          })
      }
    })

  it.effect("seed 003: guards compose outermost-first in registration order, around the tool's execution", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [wrapping("a", log), wrapping("b", log), executions([], log)],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      yield* h.pipeline.process({ request: "quote", requestId: "g-order" })
      expect(log).toEqual([
        "a:in",
        "b:in",
        "begin:exec:tool_execution",
        "end:exec:tool_execution:completed",
        "b:out",
        "a:out"
      ])
      const record = yield* h.record("g-order")
      expect(at(record, "guard_tool_call").map((i) => [i.name, i.sequence, i.status])).toEqual(
        expect.arrayContaining([["a", 0, "completed"], ["b", 1, "completed"]])
      )
    }))

  it.effect("seed 001/003: a higher-priority guard is the outermost", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [wrapping("a", log), wrapping("b", log), wrapping("c", log, { priority: 5 })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      yield* h.pipeline.process({ request: "quote", requestId: "g-prio" })
      expect(log).toEqual(["c:in", "a:in", "b:in", "b:out", "a:out", "c:out"])
    }))

  it.effect("seed 003: an outer guard's refusal: the inner guard and the tool never run", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [noTrades(), wrapping("inner", log), executions([], log)],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy", requestId: "g-outer" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("denied")
      expect(log).toEqual([])
      const record = yield* h.record("g-outer")
      expect(at(record, "guard_tool_call").map((i) => [i.name, i.status])).toEqual([["no-trades", "denied"]])
    }))

  it.effect("seed 003: an inner guard's refusal passes through the outer guard, which is recorded completed", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [wrapping("outer", log), noTrades()],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy", requestId: "g-inner" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({
        status: "denied",
        error: "tool_call denied by hook \"no-trades\" (refused): trades are not allowed"
      })
      expect(log).toEqual(["outer:in", "outer:out"])
      const record = yield* h.record("g-inner")
      expect(at(record, "guard_tool_call").map((i) => [i.name, i.status, i.attempts])).toEqual(
        expect.arrayContaining([["outer", "completed", 1], ["no-trades", "denied", 0]])
      )
    }))
})

// ---------------------------------------------------------------------------
// Whole-run wraps
// ---------------------------------------------------------------------------

describe("guards: whole-run wraps", () => {
  it.effect("seed 003: a request guard retrying proceed re-runs a failing run; the request succeeds and the guard records attempts: 2", () =>
    Effect.gen(function*() {
      let beforePlanning = 0
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "count", beforePlanning: () => Effect.sync(() => void beforePlanning++) }),
          Hook.make({ name: "retry-run", guard: { request: (_call, proceed) => Effect.retry(proceed, { times: 2 }) } })
        ],
        script: { plans: [new Error("model overloaded"), plan([quoteStep("q1")])], synthesis: "second time lucky" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "g-retry" }))
      expect(response.response).toBe("second time lucky")
      expect(response.phases[0]!.steps.map((s) => s.status)).toEqual(["succeeded"])
      // The whole run ran again, BeforePlanning included.
      expect(beforePlanning).toBe(2)
      expect(h.plansUsed()).toBe(2)
      const record = yield* h.record("g-retry")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.phases).toHaveLength(1)
      expect(at(record, "guard_request")).toEqual([
        expect.objectContaining({ name: "retry-run", status: "completed", outcome: "succeeded", attempts: 2 })
      ])
    }))

  it.effect("seed 003: a retry that runs out ends with proceed's own failure; the guard records every attempt", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "retry-run", guard: { request: (_call, proceed) => Effect.retry(proceed, { times: 2 }) } })
        ],
        script: { plans: [new Error("down 1"), new Error("down 2"), new Error("down 3")], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "g-retry-out" }))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "model_failed" })
      expect(error.message).toContain("down 3")
      const record = yield* h.record("g-retry-out")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "PlanningError" })
      expect(at(record, "guard_request")).toEqual([expect.objectContaining({ status: "completed", attempts: 3 })])
    }))

  it.effect("seed 003: an inference guard retrying proceed re-runs only the model call (BeforePlanning runs once)", () =>
    Effect.gen(function*() {
      let beforePlanning = 0
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "count", beforePlanning: () => Effect.sync(() => void beforePlanning++) }),
          Hook.make({
            name: "retry-model",
            guard: { inference: (_call, proceed) => Effect.retry(proceed, { times: 1 }) }
          })
        ],
        script: { plans: [new Error("flaky"), plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "g-retry-inf" }))
      expect(beforePlanning).toBe(1)
      const record = yield* h.record("g-retry-inf")
      expect(at(record, "guard_inference").map((i) => [i.phase, i.attempts])).toEqual([[1, 2], [undefined, 1]])
    }))

  it.effect("seed 003: a request guard timing out proceed denies the run (HookDenied hook_failed, TimeoutException cause); the running tool is canceled", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<string>()
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "run-budget",
            guard: { request: (_call, proceed) => Effect.timeout(proceed, "1 second") }
          }),
          executions(seen)
        ],
        tools: [...allTools, blockingTool(started)],
        script: { plans: [plan([blockingStep("b1")])], synthesis: "never" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "slow", requestId: "g-timeout" }))
      expect(yield* Deferred.await(started)).toBe("b1")
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
      expect(error?._tag === "Some" && error.value).toMatchObject({
        _tag: "HookDenied",
        hookName: "run-budget",
        operation: "request",
        reason: "hook_failed"
      })
      expect(error?._tag === "Some" && error.value._tag === "HookDenied" && Cause.isTimeoutException(error.value.cause))
        .toBe(true)
      expect(runsOf(seen, "tool_execution").map((s) => s.result?.outcome)).toEqual(["canceled"])
      const record = yield* h.record("g-timeout")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookDenied" })
      expect(at(record, "guard_request")).toEqual([expect.objectContaining({ status: "denied", attempts: 1 })])
    }))
})

// ---------------------------------------------------------------------------
// Deadlines
// ---------------------------------------------------------------------------

describe("guards: deadlines", () => {
  const stuckGuard = (entered: Deferred.Deferred<void>, options: Partial<Hook.Hook<never>>) =>
    Hook.make({
      name: "stuck",
      execution: Hook.deadline("1 second"),
      ...options,
      guard: { toolCall: () => Effect.zipRight(Deferred.succeed(entered, undefined), Effect.never) }
    })

  it.effect("seed 001/003: a guard overrunning its deadline denies fail-closed (timed_out): the step is denied", () =>
    Effect.gen(function*() {
      const entered = yield* Deferred.make<void>()
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [stuckGuard(entered, {}), executions(seen)],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote", requestId: "g-deadline" }))
      yield* Deferred.await(entered)
      yield* TestClock.adjust("1 second")
      const response = completed(yield* Fiber.join(fiber))
      const step = response.phases[0]!.steps[0]!
      expect(step.status).toBe("denied")
      expect(step.error).toContain("tool_call denied by hook \"stuck\" (timed_out)")
      expect(seen).toEqual([])
      const record = yield* h.record("g-deadline")
      expect(at(record, "guard_tool_call")).toEqual([
        expect.objectContaining({
          status: "denied",
          execution: "deadline",
          decision: { policy: "fail_closed", action: "deny", reason: "timed_out" }
        })
      ])
    }))

  it.effect("seed 001/003: a fail-open guard overrunning its deadline steps aside: recorded timed_out, the step runs", () =>
    Effect.gen(function*() {
      const entered = yield* Deferred.make<void>()
      const h = yield* makeHarness({
        hooks: [stuckGuard(entered, { failure: "fail_open" })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote", requestId: "g-deadline-open" }))
      yield* Deferred.await(entered)
      yield* TestClock.adjust("1 second")
      const response = completed(yield* Fiber.join(fiber))
      expect(response.phases[0]!.steps[0]!.status).toBe("succeeded")
      const record = yield* h.record("g-deadline-open")
      expect(at(record, "guard_tool_call")).toEqual([
        expect.objectContaining({
          status: "timed_out",
          decision: { policy: "fail_open", action: "continue", reason: "timed_out" }
        })
      ])
    }))

  it.effect("seed 003: a request guard overrunning its deadline fails the request with HookDenied timed_out (no cause)", () =>
    Effect.gen(function*() {
      const entered = yield* Deferred.make<void>()
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "slow-gate",
            execution: Hook.deadline("2 seconds"),
            guard: { request: () => Effect.zipRight(Deferred.succeed(entered, undefined), Effect.never) }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never" }
      })
      const fiber = yield* Effect.fork(
        Effect.flip(h.pipeline.process({ request: "quote", requestId: "g-deadline-req" }))
      )
      yield* Deferred.await(entered)
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({
        _tag: "HookDenied",
        hookName: "slow-gate",
        operation: "request",
        reason: "timed_out"
      })
      expect(error._tag === "HookDenied" && error.cause).toBeUndefined()
      expect(h.plansUsed()).toBe(0)
    }))
})

// ---------------------------------------------------------------------------
// Cause preservation
// ---------------------------------------------------------------------------

describe("guards: cause preservation", () => {
  it.effect("seed 003: catchTag(\"HookDenied\") recovers the guard's own error as the denial's cause", () =>
    Effect.gen(function*() {
      const down = new PolicyStoreDown({ message: "policy store unreachable" })
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "policy", guard: { request: () => Effect.fail(down) } })],
        script: { plans: [plan([])], synthesis: "never" }
      })
      const cause = yield* h.pipeline.process({ request: "hi", requestId: "g-cause-1" }).pipe(
        Effect.as<unknown>("no failure"),
        Effect.catchTag("HookDenied", (e) => Effect.succeed(e.cause))
      )
      // The very instance the guard failed with (compared by identity, and
      // after unwrapping the span-capturing proxy Effect may put around it).
      expect({ same: cause === down, original: Cause.originalError(cause) === down }).toEqual({
        same: true,
        original: true
      })
    }))

  it.effect("seed 003: catchTag(\"HookDenied\") recovers the cause a refusal was given (Hook.deny(reason, cause))", () =>
    Effect.gen(function*() {
      const evidence = { rule: "R-17", matched: ["ACME"] }
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "policy", guard: { inference: () => Hook.deny("blocked by R-17", evidence) } })],
        script: { plans: [plan([])], synthesis: "never" }
      })
      const denial = yield* h.pipeline.process({ request: "hi", requestId: "g-cause-2" }).pipe(
        Effect.as<unknown>("no failure"),
        Effect.catchTag("HookDenied", (e) => Effect.succeed([e.reason, e.detail, e.cause]))
      )
      expect(denial).toEqual(["refused", "blocked by R-17", evidence])
      expect(Array.isArray(denial) && denial[2]).toBe(evidence)
    }))
})

describe("guards: every run is recorded (C14)", () => {
  it.effect("C14/seed 003: when an outer guard retries, the inner guard is recorded once per run — its denial and its later pass", () =>
    Effect.gen(function*() {
      let calls = 0
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "outer",
            priority: 1,
            guard: { toolCall: (_call, proceed) => Effect.retry(proceed, { times: 1 }) }
          }),
          Hook.make({
            name: "inner",
            guard: { toolCall: (_call, proceed) => (++calls === 1 ? Hook.deny("first try refused") : proceed) }
          })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "retry-inner" })
      expect(result._tag === "Completed" && result.response.phases[0]?.steps[0]?.status).toBe("succeeded")
      const record = yield* h.record("retry-inner")
      const inner = record.hookInvocations.filter((i) => i.name === "inner").map((i) => i.status)
      expect(inner).toEqual(["denied", "completed"])
      const outer = record.hookInvocations.filter((i) => i.name === "outer")
      expect(outer.map((i) => [i.status, i.attempts])).toEqual([["completed", 2]])
    }))
})
