import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type AgentResponse, ExecutionRecord, Hook, ShortCircuit } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep } from "../support/Harness.js"

const script = { plans: [plan([quoteStep("s1")])], synthesis: "planned answer" }

const enrich = (name: string, key: string, value: string, seen?: Array<unknown>) =>
  Hook.make({
    name,
    beforePlanning: (ctx) =>
      Effect.sync(() => {
        seen?.push({ ...ctx.enrichments })
        return { enrichments: { [key]: value } }
      })
  })

const decide = (name: string, decision: unknown) =>
  Hook.make({
    name,
    // A JavaScript hook may return anything; the runner checks the contract.
    beforePlanning: () => Effect.succeed({ decision } as Hook.BeforePlanningResult)
  })

const cacheHit = (cachedAgainst: Record<string, string>) => ({
  kind: "cache",
  shortCircuit: { response: "cached answer", source: "semantic_cache" },
  cachedAgainst
})

const completedText = (result: AgentResponse.PipelineResult) =>
  result._tag === "Completed" ? result.response.response : undefined

describe("short-circuit", () => {
  it.effect("C4: BeforePlanning hooks accumulate enrichments; each sees the earlier ones", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const h = yield* makeHarness({
        hooks: [enrich("a", "rag_context", "doc A", seen), enrich("b", "custom", "B", seen)],
        script
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "acc" })
      expect(seen).toEqual([{}, { rag_context: "doc A" }])
      const planningPrompt = h.prompts.find((p) => p.kind === "plan")?.prompt ?? ""
      expect(planningPrompt).toContain("<agent_memory>\ndoc A\n</agent_memory>")
    }))

  it.effect("C4: the first accepted short-circuit wins; later hooks, planning, execution and synthesis are skipped", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const later = Hook.make({ name: "later", beforePlanning: () => Effect.sync(() => void calls.push("later")) })
      const h = yield* makeHarness({
        hooks: [
          enrich("ctx", "rag_context", "memory"),
          decide("deny", { kind: "authoritative", shortCircuit: { response: "denied by policy", source: "policy" } }),
          decide("second", { kind: "authoritative", shortCircuit: { response: "second" } }),
          later,
          Hook.make({ name: "synth", afterSynthesis: (_c, t) => Effect.sync(() => (calls.push("synth"), t)) })
        ],
        script
      })
      const result = yield* h.pipeline.process({ request: "anything", requestId: "sc" })
      expect(result._tag).toBe("Completed")
      if (result._tag !== "Completed") return
      expect(result.response.response).toBe("denied by policy")
      expect(result.response.confidence).toBe(1.0)
      expect(result.response.metadata).toEqual({ rag_context: "memory" })
      expect(result.response.shortCircuit).toEqual({
        hookName: "deny",
        kind: "authoritative",
        reason: "authoritative",
        source: "policy"
      })
      expect(calls).toEqual([])
      expect(h.prompts).toEqual([])
      const record = yield* h.record("sc")
      expect(record.hookInvocations.map((i) => i.name)).toEqual(["ctx", "deny"])
      expect(record.phases).toEqual([])
      expect(record.finalResponse).toBe("denied by policy")
      expect(record.hookInvocations[1]?.decision).toEqual({
        policy: "fail_closed",
        action: "short_circuit",
        reason: "authoritative"
      })
      expect(ExecutionRecord.requestCompletion(record)).toBe("succeeded")
    }))

  it.effect("C4: short-circuit metadata merges the payload metadata with the enrichments", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          enrich("ctx", "user_profile", "<user_profile>vip</user_profile>"),
          Hook.make({
            name: "legacy",
            beforePlanning: () => Effect.succeed({ shortCircuit: { response: "hi", metadata: { cache_age_s: 3 } } })
          })
        ]
      })
      const result = yield* h.pipeline.process({ request: "x" })
      expect(result._tag === "Completed" && result.response.metadata).toEqual({
        cache_age_s: 3,
        user_profile: "<user_profile>vip</user_profile>"
      })
    }))

  it.effect("C5: a cache decision is accepted when reads are enabled and every dimension matches (cache_match)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [decide("cache", cacheHit({ model: "m1", locale: "en" }))],
        gate: { cacheReadEnabled: true, cacheVary: { locale: "en", model: "m1" } },
        script
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "hit" })
      expect(completedText(result)).toBe("cached answer")
      const record = yield* h.record("hit")
      expect(record.hookInvocations[0]?.decision).toEqual({
        policy: "fail_closed",
        action: "short_circuit",
        reason: "cache_match"
      })
      expect(record.shortCircuit?.kind).toBe("cache")
      expect(h.plansUsed()).toBe(0)
    }))

  for (
    const [label, vary, against] of [
      ["a value differs", { model: "m1" }, { model: "m0" }],
      ["a dimension exists only in the gate", { model: "m1", locale: "en" }, { model: "m1" }],
      ["a dimension exists only in the entry", { model: "m1" }, { model: "m1", locale: "en" }],
      ["the entry has dimensions the gate lacks entirely", {}, { model: "m1" }]
    ] as const
  ) {
    it.effect(`C5: symmetric matching — ${label} → continue with cache_dimension_mismatch`, () =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [
            decide("cache", cacheHit(against)),
            Hook.make({ name: "later", beforePlanning: () => Effect.sync(() => void calls.push("later")) })
          ],
          gate: { cacheReadEnabled: true, cacheVary: vary },
          script
        })
        const result = yield* h.pipeline.process({ request: "q", requestId: "miss" })
        expect(completedText(result)).toBe("planned answer")
        expect(calls).toEqual(["later"])
        expect(h.plansUsed()).toBe(1)
        const record = yield* h.record("miss")
        expect(record.hookInvocations[0]?.outcome).toBe("succeeded")
        expect(record.hookInvocations[0]?.decision).toEqual({
          policy: "fail_closed",
          action: "continue",
          reason: "cache_dimension_mismatch"
        })
        expect(record.shortCircuit).toBeUndefined()
      }))
  }

  it.effect("C5: a cache decision is not served when cache reads are disabled", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [decide("cache", cacheHit({}))],
        gate: { cacheReadEnabled: false, cacheVary: {} },
        script
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "off" })
      expect(completedText(result)).toBe("planned answer")
      const record = yield* h.record("off")
      expect(record.hookInvocations[0]?.decision).toEqual({
        policy: "fail_closed",
        action: "continue",
        reason: "cache_read_disabled"
      })
    }))

  for (
    const [label, decision, reason] of [
      ["an unknown kind", { kind: "stale", shortCircuit: { response: "x" } }, "unknown_kind"],
      ["a missing kind", { shortCircuit: { response: "x" } }, "unknown_kind"],
      ["a missing payload", { kind: "authoritative" }, "missing_payload"],
      ["a payload without a string response", { kind: "cache", shortCircuit: { response: 42 } }, "missing_payload"]
    ] as const
  ) {
    it.effect(`C5: ${label} fails the request as a hook contract error (${reason})`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({ hooks: [decide("broken", decision)], script })
        const error = yield* Effect.flip(h.pipeline.process({ request: "q", requestId: "contract" }))
        expect(error._tag).toBe("HookContractError")
        expect(error._tag === "HookContractError" && error.reason).toBe(reason)
        expect(error._tag === "HookContractError" && error.hookName).toBe("broken")
        expect(h.plansUsed()).toBe(0)
        const record = yield* h.record("contract")
        expect(record.lifecycle?.status).toBe("failed")
        expect(record.lifecycle?.errorTag).toBe("HookContractError")
        expect(record.hookInvocations[0]?.outcome).toBe("failed")
        expect(record.hookInvocations[0]?.decision).toEqual({
          policy: "fail_closed",
          action: "terminate",
          reason: "contract_error"
        })
      }))
  }

  it.effect("C5: returning both a legacy short-circuit and a decision is a contract error", () =>
    Effect.gen(function*() {
      const both = Hook.make({
        name: "both",
        beforePlanning: () =>
          Effect.succeed({
            shortCircuit: { response: "a" },
            decision: { kind: "authoritative", shortCircuit: { response: "b" } }
          })
      })
      const h = yield* makeHarness({ hooks: [both], script })
      const error = yield* Effect.flip(h.pipeline.process({ request: "q" }))
      expect(error._tag === "HookContractError" && error.reason).toBe("ambiguous_result")
    }))

  it.effect("C5: a legacy short-circuit is authoritative and emits a diagnostic when reserved cache dimensions exist", () =>
    Effect.gen(function*() {
      const legacy = Hook.make({
        name: "legacy-cache",
        beforePlanning: () => Effect.succeed({ shortCircuit: { response: "old cache", source: "semantic_cache" } })
      })
      const h = yield* makeHarness({ hooks: [legacy], gate: { cacheReadEnabled: true, cacheVary: { model: "m1" } } })
      const result = yield* h.pipeline.process({ request: "q", requestId: "legacy" })
      expect(completedText(result)).toBe("old cache")
      const record = yield* h.record("legacy")
      expect(record.shortCircuit?.kind).toBe("authoritative")
      expect(record.hookInvocations[0]?.decision?.reason).toBe("authoritative")
      expect(record.diagnostics).toHaveLength(1)
      expect(record.diagnostics[0]).toMatch(/legacy-cache.*reserved cache dimensions.*model/)

      const quiet = yield* makeHarness({ hooks: [legacy] })
      yield* quiet.pipeline.process({ request: "q", requestId: "legacy-quiet" })
      expect((yield* quiet.record("legacy-quiet")).diagnostics).toEqual([])
    }))

  it.effect("C5: a failing decision hook fails open and planning continues", () =>
    Effect.gen(function*() {
      const flaky = Hook.make({ name: "cache-down", beforePlanning: () => Effect.fail(new Error("redis unavailable")) })
      const h = yield* makeHarness({ hooks: [flaky], script })
      const result = yield* h.pipeline.process({ request: "q", requestId: "down" })
      expect(completedText(result)).toBe("planned answer")
      const inv = (yield* h.record("down")).hookInvocations[0]
      expect(inv?.outcome).toBe("failed")
      expect(inv?.error).toBe("redis unavailable")
      expect(inv?.decision).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
    }))

  it("C5: dimension matching is symmetric", () => {
    expect(ShortCircuit.dimensionsMatch({}, {})).toBe(true)
    expect(ShortCircuit.dimensionsMatch({ a: "1", b: "2" }, { b: "2", a: "1" })).toBe(true)
    expect(ShortCircuit.dimensionsMatch({ a: "1" }, { a: "1", b: "2" })).toBe(false)
    expect(ShortCircuit.dimensionsMatch({ a: "1", b: "2" }, { a: "1" })).toBe(false)
    expect(ShortCircuit.dimensionsMatch({ a: "1" }, { a: "2" })).toBe(false)
    expect(ShortCircuit.dimensionsMatch({ a: "1" }, { b: "1" })).toBe(false)
  })
})
