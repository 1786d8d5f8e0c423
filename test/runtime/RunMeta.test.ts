/**
 * RunMeta (seed 002): every operation hook call — Around observers, guards,
 * before/after transforms, `onError` — gets a read-only `RunMeta` as its
 * last argument: the request's id, the zero-based round of the model loop
 * (planning phase n and its tool calls → n - 1; a run outside any phase →
 * the number of phases begun before it, so the synthesis call after k
 * phases → k) and the hook's group. Handlers that do not declare it work
 * as before; `Hook.sync` handlers get it on the fast path too.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Hook, type Operation } from "effect-agent-pipeline"
import * as HookGroup from "../../src/pipeline/HookGroup.js"
import { makeHarness, plan, quoteStep, weatherStep } from "../support/Harness.js"
import { completed } from "./OperationsSupport.js"

interface Saw {
  readonly hook: string
  readonly what: string
  readonly meta: Operation.RunMeta
}

/** A hook that notes the meta of every operation hook call it gets. */
const watcher = (name: string, saw: Array<Saw>): Hook.Hook<never> => {
  const note = (what: string, meta: Operation.RunMeta) => saw.push({ hook: name, what, meta })
  return Hook.make({
    name,
    around: {
      request: (_call, meta) => Effect.sync(() => void note("around:request", meta)),
      phase: (call, meta) => Effect.sync(() => void note(`around:phase ${call.payload.phase}`, meta)),
      inference: (call, meta) => Effect.sync(() => void note(`around:${call.payload.purpose}`, meta))
    },
    guard: {
      toolCall: (call, proceed, meta) =>
        Effect.zipRight(Effect.sync(() => note(`guard:${call.payload.capability}`, meta)), proceed)
    },
    beforeInference: (call, prompt, meta) => Effect.sync(() => (note(`before:${call.payload.purpose}`, meta), prompt)),
    afterTool: (call, result, meta) => Effect.sync(() => (note(`after_tool:${call.payload.capability}`, meta), result))
  })
}

const twoPhases = {
  plans: [plan([quoteStep("q1")], false), plan([weatherStep("w1")])],
  synthesis: "done"
}

describe("RunMeta", () => {
  it.effect("seed 002: the iteration is the round of the model loop — phase n → n - 1, synthesis after k phases → k, the request → 0", () =>
    Effect.gen(function*() {
      const saw: Array<Saw> = []
      const h = yield* makeHarness({ hooks: [watcher("w", saw)], script: twoPhases })
      completed(yield* h.pipeline.process({ request: "quote then weather", requestId: "meta-1" }))
      expect(saw.map((s) => [s.what, s.meta.iteration])).toEqual([
        ["around:request", 0],
        ["around:phase 1", 0],
        ["around:planning", 0],
        ["before:planning", 0],
        ["guard:stock_quote", 0],
        ["after_tool:stock_quote", 0],
        ["around:phase 2", 1],
        ["around:planning", 1],
        ["before:planning", 1],
        ["guard:weather_forecast", 1],
        ["after_tool:weather_forecast", 1],
        ["around:synthesis", 2],
        ["before:synthesis", 2]
      ])
      expect(new Set(saw.map((s) => s.meta.runId))).toEqual(new Set(["meta-1"]))
      expect(saw.every((s) => s.meta.group === undefined)).toBe(true)
    }))

  it.effect("seed 002: the meta is frozen, and shared by the runs of one round and group (no allocation per call)", () =>
    Effect.gen(function*() {
      const saw: Array<Saw> = []
      const h = yield* makeHarness({
        hooks: [watcher("w", saw)],
        script: {
          plans: [plan([quoteStep("q1"), quoteStep("q2", "INIT")], false), plan([weatherStep("w1")])],
          synthesis: "x"
        }
      })
      completed(yield* h.pipeline.process({ request: "two quotes then weather", requestId: "meta-2" }))
      expect(saw.every((s) => Object.isFrozen(s.meta))).toBe(true)
      // Same hook, same point, same round: the same object, handed on; a new round gets a new one.
      const guards = saw.filter((s) => s.what.startsWith("guard:"))
      expect(guards.map((s) => s.meta.iteration)).toEqual([0, 0, 1])
      expect(guards[1]!.meta).toBe(guards[0]!.meta)
      expect(guards[2]!.meta).not.toBe(guards[0]!.meta)
      // Hooks of one group (here: of no group) share it across points too.
      expect(saw.find((s) => s.what.startsWith("after_tool:"))!.meta).toBe(guards[0]!.meta)
      // Changing it changes nothing (it is frozen: strict mode throws).
      expect(() => {
        ;(saw[0]!.meta as { iteration: number }).iteration = 9
      }).toThrow(TypeError)
      expect(saw[0]!.meta.iteration).toBe(0)
    }))

  it.effect("seed 002: a new request gets its own runId (the cached meta is not handed across requests)", () =>
    Effect.gen(function*() {
      const saw: Array<Saw> = []
      const h = yield* makeHarness({
        hooks: [watcher("w", saw)],
        script: { plans: [plan([quoteStep("a")]), plan([quoteStep("b")])], synthesis: "x" }
      })
      completed(yield* h.pipeline.process({ request: "one", requestId: "meta-a" }))
      completed(yield* h.pipeline.process({ request: "two", requestId: "meta-b" }))
      const guards = saw.filter((s) => s.what === "guard:stock_quote")
      expect(guards.map((s) => [s.meta.runId, s.meta.iteration])).toEqual([["meta-a", 0], ["meta-b", 0]])
    }))

  it.effect("seed 002: a hook in a group gets the group's name; an ungrouped one gets undefined", () =>
    Effect.gen(function*() {
      const saw: Array<Saw> = []
      const h = yield* makeHarness({
        hooks: [...HookGroup.make("audit", [watcher("grouped", saw)]), watcher("alone", saw)],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "x" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "meta-g" }))
      const groups = new Map(saw.map((s) => [s.hook, s.meta.group]))
      expect(groups).toEqual(new Map([["grouped", "audit"], ["alone", undefined]]))
    }))

  it.effect("seed 002: Hook.sync transforms and observers get the meta on the synchronous fast path", () =>
    Effect.gen(function*() {
      const seen: Array<[string, number, string | undefined]> = []
      const hooks = HookGroup.make("sync", [
        Hook.make({
          name: "sync-hook",
          beforeInference: Hook.sync((call: Operation.Call<"inference">, prompt: string, meta: Operation.RunMeta) => {
            seen.push([`before:${call.payload.purpose}`, meta.iteration, meta.group])
            return prompt
          }),
          around: {
            toolCall: Hook.sync((call: Operation.Call<"tool_call">, meta: Operation.RunMeta) => {
              seen.push([`around:${call.payload.capability}`, meta.iteration, meta.group])
            })
          }
        })
      ])
      const h = yield* makeHarness({ hooks, script: twoPhases })
      completed(yield* h.pipeline.process({ request: "quote then weather", requestId: "meta-s" }))
      expect(seen).toEqual([
        ["before:planning", 0, "sync"],
        ["around:stock_quote", 0, "sync"],
        ["before:planning", 1, "sync"],
        ["around:weather_forecast", 1, "sync"],
        ["before:synthesis", 2, "sync"]
      ])
    }))

  it.effect("seed 002: a short-circuited request (no phase) is round 0 for its hooks; handlers without a meta parameter still work", () =>
    Effect.gen(function*() {
      const saw: Array<Saw> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "answer", beforePlanning: () => Effect.succeed({ shortCircuit: { response: "cached" } }) }),
          watcher("w", saw),
          // Declares only the call: gets the meta too, and ignores it.
          Hook.make({ name: "old-style", around: { request: (call) => Effect.sync(() => void call.callId) } })
        ]
      })
      const response = completed(yield* h.pipeline.process({ request: "hi", requestId: "meta-sc" }))
      expect(response.response).toBe("cached")
      expect(saw.map((s) => [s.what, s.meta.iteration])).toEqual([["around:request", 0]])
    }))
})
