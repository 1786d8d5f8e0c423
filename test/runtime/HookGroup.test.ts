/**
 * Hook groups (seed 002 "HookGroup"): `HookGroup.make(name, hooks)` is a
 * named group — an array of copies of the hooks, each carrying the group's
 * name — accepted wherever a hook list is (`Agent.layer`'s `hooks`,
 * `PipelineHooks.layer`), spread or combined with `HookGroup.merge`.
 * Names are unique: a duplicate group name, or a hook name that appears
 * twice across (or within) groups, fails registration with
 * `InvalidHookSubscription` (`duplicate_id`) naming the groups.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Agent, Hook, type Operation, Pipeline } from "effect-agent-pipeline"
import * as HookGroup from "../../src/pipeline/HookGroup.js"
import { makeHarness, plan, quoteStep } from "../support/Harness.js"
import { PipelineHooks } from "../support/Internal.js"
import { at, completed } from "./OperationsSupport.js"

/** A hook whose `beforeInference` notes its name and group (from RunMeta) in `log`. */
const noting = (name: string, log: Array<string>): Hook.Hook<never> =>
  Hook.make({
    name,
    beforeInference: (call, prompt, meta) =>
      Effect.sync(() => (log.push(`${meta.group ?? "-"}/${name}:${call.payload.purpose}`), prompt))
  })

const script = { plans: [plan([quoteStep("q1")])], synthesis: "ok" }

describe("HookGroup", () => {
  it("seed 002: make copies the hooks, each carrying the group's name; the group is an array with a name", () => {
    const original = noting("a", [])
    const group = HookGroup.make("audit", [original, noting("b", [])])
    expect(Array.isArray(group)).toBe(true)
    expect(group.name).toBe("audit")
    expect(group.map((h) => [h.name, h.group])).toEqual([["a", "audit"], ["b", "audit"]])
    // The caller's hook is left as it was.
    expect(original.group).toBeUndefined()
    expect(Object.isFrozen(group)).toBe(true)
  })

  it.effect("seed 002: a group is accepted as the hook list, and merge combines groups in order; each hook runs with its group", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const guardrails = HookGroup.make("guardrails", [noting("g1", log), noting("g2", log)])
      const audit = HookGroup.make("audit", [noting("a1", log)])
      // A group alone, as Agent.layer's hooks.
      const alone = yield* makeHarness({ hooks: guardrails, script })
      completed(yield* alone.pipeline.process({ request: "quote", requestId: "g-1" }))
      expect(log.filter((l) => l.endsWith(":planning"))).toEqual(["guardrails/g1:planning", "guardrails/g2:planning"])
      log.length = 0
      // Merged, with an ungrouped hook after them (a spread list).
      const merged = yield* makeHarness({
        hooks: [...HookGroup.merge(audit, guardrails), noting("solo", log)],
        script
      })
      completed(yield* merged.pipeline.process({ request: "quote", requestId: "g-2" }))
      expect(log.filter((l) => l.endsWith(":planning"))).toEqual([
        "audit/a1:planning",
        "guardrails/g1:planning",
        "guardrails/g2:planning",
        "-/solo:planning"
      ])
    }))

  it.effect("seed 002: Agent.layer takes HookGroup.merge(...) directly", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const watch = (name: string) =>
        Hook.make({
          name,
          around: { request: (_call: Operation.Call<"request">, meta) => Effect.sync(() => void seen.push(meta.group)) }
        })
      const layer = Agent.layerTest({
        script,
        tools: [],
        hooks: HookGroup.merge(HookGroup.make("one", [watch("w1")]), HookGroup.make("two", [watch("w2")]))
      })
      const pipeline = yield* Effect.provide(Pipeline.Pipeline, Layer.fresh(layer))
      yield* Effect.either(pipeline.process({ request: "hi", requestId: "g-3" }))
      expect(seen).toEqual(["one", "two"])
    }))

  it.effect("seed 002: the record keeps each run under its hook's name (groups do not rename hooks)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ hooks: HookGroup.make("audit", [noting("a1", [])]), script })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "g-4" }))
      expect(at(yield* h.record("g-4"), "before_inference").map((i) => i.name)).toEqual(["a1", "a1"])
    }))

  describe("unique names (a typed configuration error at registration)", () => {
    const refused = (hooks: ReadonlyArray<Hook.Hook<never>>) => Effect.flip(makeHarness({ hooks }))

    it.effect("seed 002: two groups with the same name", () =>
      Effect.gen(function*() {
        const error = yield* refused(
          HookGroup.merge(HookGroup.make("audit", [noting("a", [])]), HookGroup.make("audit", [noting("b", [])]))
        )
        expect(error).toMatchObject({
          _tag: "InvalidHookSubscription",
          reason: "duplicate_id",
          hookName: "b",
          detail: "two groups are named \"audit\" (entries 0 and 1)"
        })
      }))

    it.effect("seed 002: the same hook name in two groups names both groups", () =>
      Effect.gen(function*() {
        const error = yield* refused(
          HookGroup.merge(HookGroup.make("one", [noting("x", [])]), HookGroup.make("two", [noting("x", [])]))
        )
        expect(error).toMatchObject({
          _tag: "InvalidHookSubscription",
          reason: "duplicate_id",
          hookName: "x",
          detail: "two hooks are named \"x\": in group \"one\" (entry 0) and in group \"two\" (entry 1)"
        })
      }))

    it.effect("seed 002: a group registered twice, a name twice in one group, a grouped and an ungrouped hook of one name", () =>
      Effect.gen(function*() {
        const group = HookGroup.make("g", [noting("x", [])])
        expect(yield* refused(HookGroup.merge(group, group))).toMatchObject({
          reason: "duplicate_id",
          detail: "group \"g\" is registered twice (its hook at entries 0 and 1)"
        })
        expect(yield* refused(HookGroup.make("g", [noting("x", []), noting("x", [])]))).toMatchObject({
          reason: "duplicate_id",
          detail: "two hooks are named \"x\": in group \"g\" (entry 0) and in group \"g\" (entry 1)"
        })
        expect(yield* refused([noting("x", []), ...group])).toMatchObject({
          reason: "duplicate_id",
          detail: "two hooks are named \"x\": in entry 0 (no group) and in group \"g\" (entry 1)"
        })
      }))

    it.effect("seed 001: two ungrouped hooks of one name keep the subscription's own message", () =>
      Effect.gen(function*() {
        expect(yield* refused([noting("x", []), noting("x", [])])).toMatchObject({
          reason: "duplicate_id",
          detail: "hooks 0 and 1 are both named \"x\""
        })
      }))

    it.effect("C2: a group name that is not a non-empty string is refused with the entry's index", () =>
      Effect.gen(function*() {
        expect(yield* refused([noting("ok", []), ...HookGroup.make("", [noting("x", [])])])).toMatchObject({
          _tag: "InvalidOrchestratorConfig",
          index: 1,
          detail: "group must be a non-empty string (a group's name)"
        })
        const untyped = yield* Effect.flip(
          Effect.scoped(Layer.build(PipelineHooks.layerUnknown([{ name: "js", group: 7 }])))
        )
        expect(untyped).toMatchObject({ _tag: "InvalidOrchestratorConfig", index: 0 })
      }))

    it.effect("seed 002: hand-labelled hooks with the same group name are one group", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const h = yield* makeHarness({
          hooks: [{ ...noting("a", log), group: "team" }, { ...noting("b", log), group: "team" }],
          script
        })
        completed(yield* h.pipeline.process({ request: "quote", requestId: "g-5" }))
        expect(log.filter((l) => l.endsWith(":planning"))).toEqual(["team/a:planning", "team/b:planning"])
      }))
  })
})
