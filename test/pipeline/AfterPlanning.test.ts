import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { Approval, Hook, HookEffects, type RoutingPlan, ToolRegistry } from "effect-agent-pipeline"
import { allowedOperations, OperationNotAllowed } from "../../examples/plan-policy/PlanPolicy.js"
import { ExecuteTrade } from "../../examples/shared/DemoTools.js"
import { makeHarness, NAMESPACE, plan, quoteStep, tradeStep, weatherStep } from "../support/Harness.js"

const passThrough = (name: string, seen?: Array<RoutingPlan.RoutingPlan>) =>
  Hook.make({
    name,
    afterPlanning: (_ctx, p) =>
      Effect.sync(() => {
        seen?.push(p)
        return p
      })
  })

const setSymbol = (name: string, symbol: string) =>
  Hook.make({
    name,
    afterPlanning: (_ctx, p) =>
      Effect.succeed({
        ...p,
        steps: p.steps.map((s) => ({ ...s, parameters: { ...s.parameters, symbol } }))
      })
  })

const rejectTrades = Hook.required({
  name: "allowed-operations",
  afterPlanning: (_ctx, p) =>
    p.steps.some((s) => s.capability === "execute_trade")
      ? Effect.fail(new Error("trade not allowed"))
      : Effect.succeed(p)
})

describe("AfterPlanning", () => {
  it.effect("C8: runs exactly once per phase, on the validated plan, before any tool call", () =>
    Effect.gen(function*() {
      const seen: Array<RoutingPlan.RoutingPlan> = []
      const h = yield* makeHarness({
        hooks: [passThrough("observer", seen)],
        script: {
          plans: [plan([quoteStep("s1")], false), plan([weatherStep("s2")], true)],
          synthesis: "done"
        }
      })
      yield* h.pipeline.process({ request: "q", requestId: "once" })
      expect(seen.map((p) => p.steps.map((s) => s.step_id))).toEqual([["s1"], ["s2"]])
      const record = yield* h.record("once")
      const invocations = record.hookInvocations.filter((i) => i.stage === "after_planning")
      expect(invocations.map((i) => [i.phase, i.sequence, i.outcome])).toEqual([
        [1, 0, "succeeded"],
        [2, 0, "succeeded"]
      ])
      // The hook saw the normalized plan (defaults filled in).
      expect(seen[0]?.steps[0]?.depends_on).toEqual([])
      expect(seen[0]?.steps[0]?.metadata).toEqual({})
    }))

  it.effect("C8: runs before HITL: the checkpoint holds the hook-mutated plan", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "mutator",
            afterPlanning: (_c, p) =>
              Effect.sync(() => {
                order.push("hook")
                return { ...p, steps: p.steps.map((s) => ({ ...s, parameters: { symbol: "MUT" } })) }
              })
          })
        ],
        approval: {
          evaluate: (_c, p) =>
            Effect.sync(() => {
              order.push(`approval:${String(p.steps[0]?.parameters.symbol)}`)
              return Approval.suspend("check")
            })
        },
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "q" })
      expect(order).toEqual(["hook", "approval:MUT"])
      expect(result._tag === "Suspended" && result.checkpoint.plan.steps[0]?.parameters).toEqual({ symbol: "MUT" })
    }))

  it.effect("C8: hooks chain — each sees the previous hook's accepted plan, and the last one executes", () =>
    Effect.gen(function*() {
      const seen: Array<RoutingPlan.RoutingPlan> = []
      const h = yield* makeHarness({
        hooks: [setSymbol("a", "AAA"), passThrough("peek", seen), setSymbol("b", "BBB")],
        script: { plans: [plan([quoteStep("s1", "ACME")])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "q" })
      expect(seen[0]?.steps[0]?.parameters).toEqual({ symbol: "AAA" })
      expect(result._tag === "Completed" && result.response.phases[0]?.steps[0]?.output).toMatchObject({
        symbol: "BBB"
      })
    }))

  for (
    const [label, hook] of [
      ["an error", Hook.make({ name: "bad", afterPlanning: () => Effect.fail("mutator exploded") })],
      [
        "a wrong return type",
        Hook.make({ name: "bad", afterPlanning: () => Effect.succeed("not a plan" as unknown as RoutingPlan.RoutingPlan) })
      ],
      [
        "an invalid plan (unknown tool)",
        Hook.make({
          name: "bad",
          afterPlanning: (_c, p) =>
            Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, capability: "drop_tables" })) })
        })
      ],
      [
        "an invalid plan (cycle)",
        Hook.make({
          name: "bad",
          afterPlanning: (_c, p) =>
            Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, depends_on: [s.step_id] })) })
        })
      ]
    ] as const
  ) {
    it.effect(`C8: an ordinary hook's ${label} keeps the last valid plan and never re-plans`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [setSymbol("first", "FIRST"), hook, passThrough("after")],
          script: { plans: [plan([quoteStep("s1", "ACME")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "q", requestId: "keep" })
        expect(result._tag).toBe("Completed")
        expect(h.plansUsed()).toBe(1)
        const record = yield* h.record("keep")
        expect(record.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "FIRST" })
        expect(record.phases[0]?.steps[0]?.status).toBe("succeeded")
        const bad = record.hookInvocations.find((i) => i.name === "bad")
        expect(bad?.outcome).toBe("failed")
        expect(bad?.error).toBeTruthy()
        expect(bad?.decision).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
        expect(record.hookInvocations.find((i) => i.name === "after")?.outcome).toBe("succeeded")
      }))
  }

  it.effect("C8: copy-on-write — a hook that mutates its argument in place and then fails cannot corrupt the prior plan", () =>
    Effect.gen(function*() {
      const vandal = Hook.make({
        name: "vandal",
        afterPlanning: (_c, p) =>
          Effect.suspend(() => {
            // What a careless JavaScript hook does: mutate the argument in place.
            const steps = p.steps as unknown as Array<{ parameters: Record<string, unknown> }>
            if (steps[0]) steps[0].parameters.symbol = "EVIL"
            return Effect.fail("rejected after mutating")
          })
      })
      const h = yield* makeHarness({
        hooks: [vandal],
        script: { plans: [plan([quoteStep("s1", "ACME")])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "q" })
      expect(result._tag === "Completed" && result.response.phases[0]?.plan.steps[0]?.parameters).toEqual({
        symbol: "ACME"
      })
    }))

  it.effect("C8: hooks must supply exact implicit_deps — the model-only normalizer does not run on hook output", () =>
    Effect.gen(function*() {
      const sloppy = Hook.make({
        name: "sloppy",
        afterPlanning: (_c, p) =>
          Effect.succeed({
            ...p,
            steps: [...p.steps, weatherStep("s2", "{{steps.s1.output.symbol}}")]
          })
      })
      const h = yield* makeHarness({
        hooks: [sloppy],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "q", requestId: "sloppy" })
      const record = yield* h.record("sloppy")
      expect(record.phases[0]?.plan.steps.map((s) => s.step_id)).toEqual(["s1"])
      expect(record.hookInvocations[0]?.error).toMatch(/reference_needs_depends_on/)
    }))

  it.effect("C9: a required hook's error stops the phase before HITL, persistence and any tool call", () =>
    Effect.gen(function*() {
      let approvals = 0
      let toolCalls = 0
      const countingTrade = ToolRegistry.entry({
        namespace: NAMESPACE,
        agent: "trading-service",
        tool: ExecuteTrade,
        handler: () => Effect.sync(() => (toolCalls++, { orderId: "x", status: "done" }))
      })
      const h = yield* makeHarness({
        tools: [countingTrade],
        hooks: [rejectTrades],
        approval: { evaluate: () => Effect.sync(() => (approvals++, Approval.approve)) },
        script: { plans: [plan([tradeStep("s1")])], synthesis: "must not be reached" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "buy ACME", requestId: "denied" }))
      expect(error._tag).toBe("RequiredAfterPlanningError")
      if (error._tag !== "RequiredAfterPlanningError") return
      expect(error.hookName).toBe("allowed-operations")
      expect(error.phase).toBe(1)
      expect(error.detail).toBe("trade not allowed")
      expect(approvals).toBe(0)
      expect(toolCalls).toBe(0)
      expect(h.prompts.filter((p) => p.kind !== "plan")).toEqual([])
      const record = yield* h.record("denied")
      expect(record.lifecycle?.status).toBe("failed")
      expect(record.lifecycle?.errorTag).toBe("RequiredAfterPlanningError")
      expect(record.phases).toEqual([])
      expect(record.rawDraft).toBeUndefined()
      expect(record.finalResponse).toBeUndefined()
      const inv = record.hookInvocations[0]
      expect(inv?.outcome).toBe("failed")
      expect(inv?.error).toBe("trade not allowed")
      expect(inv?.decision).toEqual({ policy: "fail_closed", action: "terminate", reason: "hook_error" })
    }))

  it.effect("C9: a required hook's invalid plan or wrong type fails closed too", () =>
    Effect.gen(function*() {
      for (
        const bad of [
          () => Effect.succeed({ steps: [{ step_id: "bad id!" }] } as unknown as RoutingPlan.RoutingPlan),
          () => Effect.succeed(null as unknown as RoutingPlan.RoutingPlan)
        ]
      ) {
        const h = yield* makeHarness({
          hooks: [Hook.required({ name: "gov", afterPlanning: bad })],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "x" }
        })
        const error = yield* Effect.flip(h.pipeline.process({ request: "q", requestId: "inv" }))
        expect(error._tag).toBe("RequiredAfterPlanningError")
        const record = yield* h.record("inv")
        expect(record.phases).toEqual([])
        expect(record.hookInvocations[0]?.decision?.action).toBe("terminate")
      }
    }))

  it.effect("C9: an accepted required hook is recorded as fail_closed / continue / accepted", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [rejectTrades],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "quote" }
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "ok" })
      expect(result._tag).toBe("Completed")
      const inv = (yield* h.record("ok")).hookInvocations[0]
      expect(inv?.decision).toEqual({ policy: "fail_closed", action: "continue", reason: "accepted" })
    }))

  it.effect("C9: a later-phase rejection keeps earlier phases' plans and results and does not add the candidate", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [rejectTrades],
        script: { plans: [plan([quoteStep("s1")], false), plan([tradeStep("s2")], true)], synthesis: "x" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "q", requestId: "late" }))
      expect(error._tag === "RequiredAfterPlanningError" && error.phase).toBe(2)
      const record = yield* h.record("late")
      expect(record.lifecycle?.status).toBe("failed")
      expect(record.phases.map((p) => p.phase)).toEqual([1])
      expect(record.phases[0]?.steps[0]?.status).toBe("succeeded")
      expect(record.phases.flatMap((p) => p.plan.steps.map((s) => s.capability))).not.toContain("execute_trade")
    }))

  it.effect("C9: later effect updates preserve the failed state", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const done = yield* Deferred.make<void>()
      const reporter = Hook.make({
        name: "async-audit",
        beforePlanning: () =>
          Effect.gen(function*() {
            yield* HookEffects.report({ effectId: "audit", name: "Audit", status: "pending" })
            // Detached work finishes after the request has already failed.
            yield* Effect.forkDaemon(
              Deferred.await(release).pipe(
                Effect.zipRight(HookEffects.report({ effectId: "audit", name: "Audit", status: "succeeded" })),
                Effect.ensuring(Deferred.succeed(done, undefined))
              )
            )
          }).pipe(Effect.orDie, Effect.as(undefined))
      })
      const h = yield* makeHarness({
        hooks: [reporter, rejectTrades],
        script: { plans: [plan([tradeStep("s1")])], synthesis: "x" }
      })
      yield* Effect.flip(h.pipeline.process({ request: "q", requestId: "late-update" }))
      const before = yield* h.record("late-update")
      expect(before.lifecycle?.status).toBe("failed")
      expect(before.hookInvocations[0]?.effects.map((e) => e.status)).toEqual(["pending"])
      yield* Deferred.succeed(release, undefined)
      yield* Deferred.await(done)
      const after = yield* h.record("late-update")
      expect(after.lifecycle).toEqual(before.lifecycle)
      expect(after.recordRevision).toBeGreaterThan(before.recordRevision)
      expect(after.hookInvocations[0]?.effects.map((e) => e.status)).toEqual(["succeeded"])
      expect(after.phases).toEqual([])
    }))
})

describe("the required hook's failure stays the cause (seed 000 §7.4)", () => {
  it.effect("seed 000 §7.4: the application's typed denial is the cause of RequiredAfterPlanningError, found through catchTag", () =>
    Effect.gen(function*() {
      const policy = allowedOperations([{ namespace: NAMESPACE, agent: "stock-service", capability: "stock_quote" }])
      const h = yield* makeHarness({ hooks: [policy], script: { plans: [plan([tradeStep("t1")])], synthesis: "never" } })
      const found = yield* h.pipeline.process({ request: "buy ACME" }).pipe(
        Effect.as("answered"),
        Effect.catchTag("RequiredAfterPlanningError", (denied) =>
          Effect.succeed(denied.cause instanceof OperationNotAllowed ? `denied: ${denied.cause.stepId}` : "unknown"))
      )
      expect(found).toBe("denied: t1")
    }))

  it.effect("seed 000 §7.4: an invalid plan from the required hook keeps the validation failure as the cause", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.required({
            name: "breaks-plans",
            afterPlanning: (_ctx, p) => Effect.succeed({ ...p, steps: [{ ...p.steps[0]!, depends_on: ["ghost"] }] })
          })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote" }))
      expect(error._tag).toBe("RequiredAfterPlanningError")
      if (error._tag !== "RequiredAfterPlanningError") return
      expect(error.cause).toBeInstanceOf(Error)
      expect(error.detail).toContain("ghost")
      expect(error.cause instanceof Error && error.cause.message).toBe(error.detail)
    }))
})
