/**
 * The governance ordering recipe (seed 004 "Order: the governance hooks
 * register AFTER guardrail hooks so a caller whose input is already
 * guardrail-denied doesn't see the step-up challenge or the defer wait";
 * seed 001 priorities and dependencies): guardrails are a group at a
 * higher priority, governance a group whose first hook `dependsOn` every
 * guardrail and whose hooks chain by `dependsOn` in the documented order
 * (step-up → defer → trade-limit → audit). Guards wrap the tool call, the
 * first-ordered outermost, so:
 *
 * - whatever the registration order, guardrails run first, then governance
 *   in its documented order;
 * - a guardrail-denied call never reaches any governance hook;
 * - a governance denial stops the governance hooks after it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Hook, type Operation } from "effect-agent-pipeline"
import * as HookGroup from "../../src/pipeline/HookGroup.js"
import { makeHarness, plan, quoteStep, tradeStep } from "../support/Harness.js"
import { at, completed } from "./OperationsSupport.js"

type Check = (call: Operation.Call<"tool_call">) => string | undefined

/** A tool-call guard that logs `<group>:<name>`, then denies with the check's reason or proceeds. */
const gate = (
  name: string,
  log: Array<string>,
  check: Check = () => undefined,
  options: Partial<Hook.Hook<never>> = {}
) =>
  Hook.make({
    name,
    capabilities: ["deny"],
    ...options,
    guard: {
      toolCall: (call, proceed, meta) => {
        const reason = check(call)
        const noted = Effect.sync(() => log.push(`${meta.group}:${name}`))
        return reason === undefined ? Effect.zipRight(noted, proceed) : Effect.zipRight(noted, Hook.deny(reason))
      }
    }
  })

const symbolOf = (call: Operation.Call<"tool_call">) => String(call.payload.parameters["symbol"])
const quantityOf = (call: Operation.Call<"tool_call">) => Number(call.payload.parameters["quantity"] ?? 0)

/** The recipe: guardrails (priority 100), then governance chained in its documented order. */
const recipe = (log: Array<string>, options: { readonly limit?: number } = {}) => {
  const guardrails = HookGroup.make("guardrails", [
    gate("symbol-allowlist", log, (call) => symbolOf(call) === "EVIL" ? "symbol not allowed" : undefined, {
      priority: 100
    }),
    gate("injection-check", log, undefined, { priority: 100 })
  ])
  const governance = HookGroup.make("governance", [
    // Registered out of order on purpose: dependsOn decides.
    gate("audit", log, undefined, { dependsOn: ["trade-limit"] }),
    gate(
      "trade-limit",
      log,
      (call) => quantityOf(call) > (options.limit ?? 100) ? "over the trade limit" : undefined,
      { dependsOn: ["defer"] }
    ),
    gate("defer", log, undefined, { dependsOn: ["step-up"] }),
    gate("step-up", log, undefined, { dependsOn: ["symbol-allowlist", "injection-check"] })
  ])
  return { guardrails, governance }
}

const GOVERNANCE_ORDER = [
  "governance:step-up",
  "governance:defer",
  "governance:trade-limit",
  "governance:audit"
]

describe("governance ordering recipe", () => {
  it.effect("seed 004: governance runs after every guardrail, in its documented order, whatever the registration order", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const { governance, guardrails } = recipe(log)
      // Governance registered first: priorities and dependencies still put guardrails first.
      const h = yield* makeHarness({
        hooks: HookGroup.merge(governance, guardrails),
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy", requestId: "gov-1" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("succeeded")
      expect(log).toEqual(["guardrails:symbol-allowlist", "guardrails:injection-check", ...GOVERNANCE_ORDER])
      // Recorded as each guard ends (innermost first); its sequence is its place in the order.
      const runs = [...at(yield* h.record("gov-1"), "guard_tool_call")].sort((a, b) => a.sequence - b.sequence)
      expect(runs.map((i) => [i.name, i.sequence, i.status])).toEqual([
        ["symbol-allowlist", 0, "completed"],
        ["injection-check", 1, "completed"],
        ["step-up", 2, "completed"],
        ["defer", 3, "completed"],
        ["trade-limit", 4, "completed"],
        ["audit", 5, "completed"]
      ])
    }))

  it.effect("seed 004: a guardrail-denied call never reaches governance (no step-up, no defer, nothing recorded for it)", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const { governance, guardrails } = recipe(log)
      const h = yield* makeHarness({
        hooks: HookGroup.merge(guardrails, governance),
        script: { plans: [plan([quoteStep("q1", "EVIL"), quoteStep("q2")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quotes", requestId: "gov-2" }))
      const steps = response.phases[0]!.steps
      expect(steps.map((s) => [s.step_id, s.status])).toEqual([["q1", "denied"], ["q2", "succeeded"]])
      expect(steps[0]!.error).toContain("symbol-allowlist")
      // q1: the allowlist alone; q2 (allowed): every guardrail, then governance.
      const byCall = at(yield* h.record("gov-2"), "guard_tool_call")
      const q1 = byCall.filter((i) => i.stepId === "q1").map((i) => [i.name, i.status])
      expect(q1).toEqual([["symbol-allowlist", "denied"]])
      expect(log.filter((l) => l.startsWith("governance:"))).toEqual(GOVERNANCE_ORDER)
    }))

  it.effect("seed 004: a governance denial stops the governance hooks after it (audit never sees an over-limit trade)", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const { governance, guardrails } = recipe(log, { limit: 5 })
      const h = yield* makeHarness({
        hooks: HookGroup.merge(guardrails, governance),
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "buy 10", requestId: "gov-3" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("denied")
      expect(log).toEqual([
        "guardrails:symbol-allowlist",
        "guardrails:injection-check",
        "governance:step-up",
        "governance:defer",
        "governance:trade-limit"
      ])
    }))

  it.effect("seed 001: governance that names a guardrail it does not share a point with is refused at registration", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        makeHarness({
          hooks: [
            Hook.make({ name: "prompt-guardrail", beforeInference: (_c, prompt) => Effect.succeed(prompt) }),
            gate("step-up", [], undefined, { dependsOn: ["prompt-guardrail"] })
          ]
        })
      )
      expect(error).toMatchObject({
        _tag: "InvalidHookSubscription",
        reason: "missing_dependency",
        hookName: "step-up"
      })
    }))
})
