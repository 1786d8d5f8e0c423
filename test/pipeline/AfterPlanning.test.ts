import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either } from "effect"
import {
  AfterPlanning,
  Approval,
  type ExecutionRecord,
  Hook,
  HookEffects,
  PipelineContext,
  PlanValidation,
  Policy,
  type RoutingPlan,
  type Subscription,
  ToolRegistry
} from "effect-agent-pipeline"
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
        Hook.make({
          name: "bad",
          afterPlanning: () => Effect.succeed("not a plan" as unknown as RoutingPlan.RoutingPlan)
        })
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
      const h = yield* makeHarness({
        hooks: [policy],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "never" }
      })
      const found = yield* h.pipeline.process({ request: "buy ACME" }).pipe(
        Effect.as("answered"),
        Effect.catchTag(
          "RequiredAfterPlanningError",
          (denied) =>
            Effect.succeed(denied.cause instanceof OperationNotAllowed ? `denied: ${denied.cause.stepId}` : "unknown")
        )
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

describe("AfterPlanning: an unchanged plan needs no revalidation (C8)", () => {
  // Nested parameters, metadata, dependencies and reasoning: every part the
  // unchanged check compares.
  const nested = {
    steps: [
      quoteStep("s1", "ACME", { metadata: { tags: ["a", { b: 1, c: null }], note: "" } }),
      weatherStep("s2", "{{steps.s1.output.symbol}}", { depends_on: ["s1"] })
    ],
    terminal: true,
    reasoning: "quote, then weather"
  }
  const runsOf = (record: ExecutionRecord.ExecutionRecord) =>
    record.hookInvocations
      .filter((i) => i.stage === "after_planning")
      .map((i) => [i.name, i.status, i.decision, i.contributionHash])
  // A step as a JavaScript hook sees it: freely mutable.
  type MutableStep = { parameters: Record<string, unknown>; depends_on: Array<string>; metadata: unknown }
  const inPlace = (
    name: string,
    mutate: (step: MutableStep) => void,
    capabilities: ReadonlyArray<"plan_rewrite"> = ["plan_rewrite"]
  ) =>
    Hook.make({
      name,
      capabilities,
      afterPlanning: (_c, p) =>
        Effect.sync(() => {
          // What a JavaScript hook may do: mutate its private copy and return it.
          mutate(p.steps[0] as unknown as MutableStep)
          return p
        })
    })

  it.effect("C8: the very copy, a structural copy or a rebuilt equal plan is accepted with no contribution and needs no plan_rewrite", () =>
    Effect.gen(function*() {
      const seen: Array<RoutingPlan.RoutingPlan> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "same", capabilities: [], afterPlanning: (_c, p) => Effect.sync(() => (seen.push(p), p)) }),
          Hook.make({ name: "cloned", capabilities: [], afterPlanning: (_c, p) => Effect.succeed(structuredClone(p)) }),
          Hook.make({
            name: "rebuilt",
            capabilities: [],
            afterPlanning: (_c, p) =>
              Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, parameters: { ...s.parameters } })) })
          }),
          Hook.required({ name: "gov", capabilities: [], afterPlanning: (_c, p) => Effect.succeed(p) })
        ],
        script: { plans: [nested], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "unchanged" })
      expect(result._tag).toBe("Completed")
      const record = yield* h.record("unchanged")
      expect(runsOf(record)).toEqual([
        ["same", "completed", undefined, undefined],
        ["cloned", "completed", undefined, undefined],
        ["rebuilt", "completed", undefined, undefined],
        ["gov", "completed", { policy: "fail_closed", action: "continue", reason: "accepted" }, undefined]
      ])
      // The plan that ran is the plan the first hook was handed.
      expect(record.phases[0]?.plan).toEqual(seen[0])
      expect(record.phases[0]?.steps.map((s) => s.status)).toEqual(["succeeded", "succeeded"])
    }))

  it.effect("C8: a hook that mutates its private copy in place and returns it changed the plan: revalidated, recorded as a contribution, chained", () =>
    Effect.gen(function*() {
      const seen: Array<RoutingPlan.RoutingPlan> = []
      const h = yield* makeHarness({
        hooks: [
          inPlace("nested", (s) => {
            s.parameters.symbol = "MUT"
          }),
          passThrough("next", seen)
        ],
        script: { plans: [nested], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "q", requestId: "in-place" })
      const record = yield* h.record("in-place")
      const [mutator, next] = runsOf(record)
      expect(mutator?.slice(0, 3)).toEqual(["nested", "completed", undefined])
      expect(mutator?.[3]).toMatch(/^cyrb53:/)
      expect(next).toEqual(["next", "completed", undefined, undefined])
      expect(seen[0]?.steps[0]?.parameters).toEqual({ symbol: "MUT" })
      expect(record.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "MUT" })
    }))

  it.effect("C8: an in-place change without plan_rewrite is refused as undeclared and the last valid plan runs", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          inPlace("sneaky", (s) => {
            s.parameters.symbol = "MUT"
          }, [])
        ],
        script: { plans: [nested], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "q", requestId: "undeclared" })
      const record = yield* h.record("undeclared")
      expect(runsOf(record)).toEqual([
        ["sneaky", "failed", { policy: "fail_open", action: "continue", reason: "undeclared_contribution" }, undefined]
      ])
      expect(record.phases[0]?.plan.steps[0]?.parameters).toEqual({ symbol: "ACME" })
    }))

  class Meta {}
  for (
    const [label, mutate, error] of [
      [
        "a class instance for an empty metadata object (structurally equal, not JSON)",
        (s: MutableStep) => {
          s.metadata = new Meta()
        },
        /invalid plan \(decode\)/
      ],
      [
        "a dependency on a missing step",
        (s: MutableStep) => {
          s.depends_on.push("ghost")
        },
        /unknown_dependency/
      ],
      [
        "an undefined parameter",
        (s: MutableStep) => {
          s.parameters.extra = undefined
        },
        /invalid plan \(decode\)/
      ]
    ] as const
  ) {
    it.effect(`C8: an in-place mutation to ${label} is still fully validated and keeps the last valid plan`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [Hook.make({
            name: "vandal",
            afterPlanning: (_c, p) =>
              Effect.sync(() => {
                mutate(p.steps[0] as unknown as MutableStep)
                return p
              })
          })],
          script: { plans: [plan([quoteStep("s1", "ACME")])], synthesis: "done" }
        })
        const result = yield* h.pipeline.process({ request: "q", requestId: "vandal" })
        expect(result._tag).toBe("Completed")
        const record = yield* h.record("vandal")
        const run = record.hookInvocations.find((i) => i.name === "vandal")
        expect(run?.status).toBe("failed")
        expect(run?.error).toMatch(error)
        expect(run?.decision).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
        expect(record.phases[0]?.plan.steps[0]).toMatchObject({
          parameters: { symbol: "ACME" },
          depends_on: [],
          metadata: {}
        })
        const ran = result._tag === "Completed" ? result.response.phases[0]?.plan.steps[0] : undefined
        expect(ran?.parameters).toEqual({ symbol: "ACME" })
        expect(ran?.depends_on).toEqual([])
        expect(Object.getPrototypeOf(ran?.metadata)).toBe(Object.prototype)
      }))
  }
})

describe("AfterPlanning stage: what an unchanged plan costs (C8)", () => {
  // The stage alone, with a validation context that counts its tool lookups:
  // every full validation of this plan consults `hasTool` once per step.
  const counting = () => {
    let lookups = 0
    const validation: PlanValidation.ValidationContext = {
      hasTool: () => (lookups++, true),
      priorStepIds: new Set(["p1"])
    }
    return { validation, lookups: () => lookups }
  }
  const raw = {
    steps: [
      quoteStep("s1", "ACME", { metadata: { tags: ["a", { b: 1 }] } }),
      weatherStep("s2", "{{steps.s1.output.symbol}} {{steps.p1.output}}", { depends_on: ["s1"], implicit_deps: ["p1"] })
    ],
    reasoning: "why"
  }
  const stage = (handler: AfterPlanning.Handler) => {
    const participant: Subscription.Participant<AfterPlanning.Handler> = {
      id: "h",
      index: 0,
      point: "after_planning",
      handler,
      spanName: "pipeline.hook.after_planning.h",
      enabled: true,
      execution: Policy.blocking,
      failure: "fail_open",
      grant: "all",
      after: []
    }
    return AfterPlanning.make([participant])
  }
  // Outside any request: the stage records nothing.
  const request: Hook.StageRequest = {
    context: { requestId: PipelineContext.RequestId.make("stage"), request: "q", metadata: {}, enrichments: {} }
  }
  const runWith = (handler: AfterPlanning.Handler) =>
    Effect.gen(function*() {
      const { lookups, validation } = counting()
      const planned = yield* Either.match(PlanValidation.validate(raw, validation), {
        onLeft: (error) => Effect.die(error),
        onRight: Effect.succeed
      })
      const before = lookups()
      const out = yield* stage(handler).run(request, planned, { phase: 1, priorStepIds: ["p1"], validation })
      return { planned, out, revalidations: (lookups() - before) / planned.steps.length }
    })

  it.effect("C8: a plan handed back as given, or rebuilt equal, is not revalidated and goes on as the validated plan", () =>
    Effect.gen(function*() {
      let handed: RoutingPlan.RoutingPlan | undefined
      const same = yield* runWith((_c, p) => Effect.sync(() => (handed = p)))
      expect(same.revalidations).toBe(0)
      // The validated plan goes on, not the copy the hook still holds.
      expect(same.out).toBe(same.planned)
      expect(handed).not.toBe(same.planned)
      expect(handed).toEqual(same.planned)
      const rebuilt = yield* runWith((_c, p) => Effect.succeed(structuredClone(p)))
      expect(rebuilt.revalidations).toBe(0)
      expect(rebuilt.out).toBe(rebuilt.planned)
    }))

  it.effect("C8: a copy mutated in place, or a plan not exactly the one handed (an extra key), is revalidated", () =>
    Effect.gen(function*() {
      const changed = yield* runWith((_c, p) =>
        Effect.sync(() => {
          const parameters = p.steps[0]!.parameters as Record<string, unknown>
          parameters.symbol = "MUT"
          return p
        })
      )
      expect(changed.revalidations).toBe(1)
      expect(changed.out.steps[0]?.parameters).toEqual({ symbol: "MUT" })
      const extraKey = yield* runWith((_c, p) =>
        Effect.succeed({ ...p, steps: p.steps.map((s) => ({ ...s, note: 1 })) })
      )
      // Full validation decides: it drops the key and finds no change.
      expect(extraKey.revalidations).toBe(1)
      expect(extraKey.out).toEqual(extraKey.planned)
    }))
})

describe("AfterPlanning.runRequired: the boundary again on an approved plan (DESIGN §7)", () => {
  const validation: PlanValidation.ValidationContext = { hasTool: () => true, priorStepIds: new Set() }
  const approved = Either.getOrThrow(PlanValidation.validate({ steps: [quoteStep("s1"), tradeStep("t1")] }, validation))
  const participant = (
    id: string,
    handler: AfterPlanning.Handler,
    extra: Partial<Subscription.Participant<AfterPlanning.Handler>> = {}
  ): Subscription.Participant<AfterPlanning.Handler> => ({
    id,
    index: 0,
    point: "after_planning",
    handler,
    spanName: `pipeline.hook.after_planning.${id}`,
    enabled: true,
    execution: Policy.blocking,
    failure: "fail_closed",
    grant: "all",
    after: [],
    ...extra
  })
  // Outside any request: the stage records nothing.
  const request: Hook.StageRequest = {
    context: { requestId: PipelineContext.RequestId.make("resume"), request: "q", metadata: {}, enrichments: {} }
  }
  const info = { phase: 1, priorStepIds: [], validation }
  /** An ordinary hook that counts its calls, then the required one, which depends on it. */
  const stage = (required: AfterPlanning.Handler) => {
    const calls = { ordinary: 0, required: 0 }
    const service = AfterPlanning.make([
      participant("ordinary", (_c, p) => Effect.sync(() => (calls.ordinary++, p)), { failure: "fail_open" }),
      participant("policy", (c, p, i) => Effect.suspend(() => (calls.required++, required(c, p, i))), { after: [0] })
    ], "policy")
    return { service, calls }
  }

  it.effect("tampered checkpoints: only the required hook runs (ordinary AfterPlanning hooks never run on resume, C8), its dependencies count as completed, and the approved plan goes on", () =>
    Effect.gen(function*() {
      const { calls, service } = stage((_c, p) => Effect.succeed(p))
      const out = yield* service.runRequired(request, approved, info)
      expect(out).toBe(approved)
      expect(calls).toEqual({ ordinary: 0, required: 1 })
    }))

  it.effect("tampered checkpoints: a required hook that now rejects the approved plan fails closed with RequiredAfterPlanningError", () =>
    Effect.gen(function*() {
      const { calls, service } = stage((_c, p) =>
        p.steps.some((s) => s.capability === "execute_trade")
          ? Effect.fail(new Error("trades are frozen"))
          : Effect.succeed(p)
      )
      const error = yield* Effect.flip(service.runRequired(request, approved, info))
      expect(error).toMatchObject({ _tag: "RequiredAfterPlanningError", hookName: "policy", phase: 1 })
      expect(error.detail).toContain("trades are frozen")
      expect(calls).toEqual({ ordinary: 0, required: 1 })
    }))

  it.effect("tampered checkpoints: a required hook that returns a plan other than the approved one is refused, even with plan_rewrite — it is not what the human approved", () =>
    Effect.gen(function*() {
      const { service } = stage((_c, p) =>
        Effect.succeed({ ...p, steps: p.steps.filter((s) => s.capability !== "execute_trade") })
      )
      const error = yield* Effect.flip(service.runRequired(request, approved, info))
      expect(error).toMatchObject({ _tag: "RequiredAfterPlanningError", hookName: "policy" })
      expect(error.detail).toContain("changed the approved plan")
      // Before a resume, the same rewrite is a contribution the boundary may make.
      const { service: normal } = stage((_c, p) =>
        Effect.succeed({ ...p, steps: p.steps.filter((s) => s.capability !== "execute_trade") })
      )
      const rewritten = yield* normal.run(request, approved, info)
      expect(rewritten.steps.map((s) => s.step_id)).toEqual(["s1"])
    }))

  it.effect("tampered checkpoints: an equal plan handed back (a structural copy) is the approved plan", () =>
    Effect.gen(function*() {
      const { service } = stage((_c, p) => Effect.succeed(JSON.parse(JSON.stringify(p))))
      expect(yield* service.runRequired(request, approved, info)).toEqual(approved)
    }))

  it.effect("without a required hook, runRequired runs nothing and returns the plan as is", () =>
    Effect.gen(function*() {
      let calls = 0
      const service = AfterPlanning.make([participant("ordinary", (_c, p) => Effect.sync(() => (calls++, p)))])
      expect(yield* service.runRequired(request, approved, info)).toBe(approved)
      expect(calls).toBe(0)
    }))
})
