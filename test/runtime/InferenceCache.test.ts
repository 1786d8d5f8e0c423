/**
 * An LLM response cache (seed 002 "LLM response cache read/write"): a
 * `beforeInference` transform serves a response with `Hook.respond(text)`
 * (with the `inference_cache` capability) — the model is not called, the
 * remaining before transforms are skipped, the `afterInference` transforms
 * run on the served text (`RunMeta.servedBy` names the hook), planning
 * decodes the plan from it and a streamed synthesis emits it. The serving
 * run is recorded as such (decision `short_circuit` / `cache_match`, the
 * text's hash) and no model call is recorded for it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { type AgentResponse, Hook, type Operation } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep } from "../support/Harness.js"
import { at, completed, planPrompts, textPrompts } from "./OperationsSupport.js"

interface Cache {
  readonly entries: Map<string, string>
  /** What the afterInference transforms saw: purpose, and who served the text (undefined: the model). */
  readonly after: Array<readonly [string, string | undefined]>
}

/** A prompt → response cache: read before inference, written after it (only what the model answered). */
const llmCache = (cache: Cache, options: Partial<Hook.Hook<never>> = {}): Hook.Hook<never> =>
  Hook.make({
    name: "llm-cache",
    capabilities: ["inference_cache", "completion_rewrite"],
    ...options,
    beforeInference: (call, prompt) => {
      const hit = cache.entries.get(call.payload.prompt)
      return hit === undefined ? Effect.succeed(prompt) : Hook.respond(hit)
    },
    afterInference: (call, text, meta) =>
      Effect.sync(() => {
        cache.after.push([call.payload.purpose, meta.servedBy])
        if (meta.servedBy === undefined) cache.entries.set(call.payload.prompt, text)
        return text
      })
  })

const newCache = (): Cache => ({ entries: new Map(), after: [] })

const script = { plans: [plan([quoteStep("q1")])], synthesis: "ACME trades at 42" }

describe("inference cache", () => {
  it.effect("seed 002: the first request calls the model and stores its answers; the same prompt again is served from the cache — the model is not called", () =>
    Effect.gen(function*() {
      const cache = newCache()
      const h = yield* makeHarness({ hooks: [llmCache(cache)], script })
      const first = completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "c-1" }))
      expect(h.prompts.length).toBe(2)
      expect(cache.entries.size).toBe(2)
      const second = completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "c-2" }))
      // The scripted model counts calls: none more. (Its one plan entry is spent: a model call would fail.)
      expect(h.prompts.length).toBe(2)
      expect(h.plansUsed()).toBe(1)
      // Planning decoded the plan from the cached text; the tool ran; synthesis was served.
      expect(second.phases.map((p) => p.steps.map((s) => [s.step_id, s.status]))).toEqual([[["q1", "succeeded"]]])
      expect(second.response).toBe(first.response)
      expect(cache.after).toEqual([
        ["planning", undefined],
        ["synthesis", undefined],
        ["planning", "llm-cache"],
        ["synthesis", "llm-cache"]
      ])
    }))

  it.effect("seed 002: a served response is recorded as such — decision short_circuit / cache_match and the text's hash — and no model call is recorded for it", () =>
    Effect.gen(function*() {
      const cache = newCache()
      const h = yield* makeHarness({ hooks: [llmCache(cache)], script })
      completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "c-3" }))
      completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "c-4" }))
      const miss = yield* h.record("c-3")
      const hit = yield* h.record("c-4")
      expect(miss.modelCalls?.length).toBe(2)
      expect(hit.modelCalls ?? []).toEqual([])
      expect(at(miss, "before_inference").map((i) => [i.status, i.decision])).toEqual([
        ["completed", undefined],
        ["completed", undefined]
      ])
      const served = at(hit, "before_inference")
      expect(served.map((i) => [i.name, i.status, i.outcome, i.decision])).toEqual([
        ["llm-cache", "completed", "succeeded", {
          policy: "fail_closed",
          action: "short_circuit",
          reason: "cache_match"
        }],
        ["llm-cache", "completed", "succeeded", {
          policy: "fail_closed",
          action: "short_circuit",
          reason: "cache_match"
        }]
      ])
      expect(served.every((i) => typeof i.contributionHash === "string")).toBe(true)
      // The after transforms ran on the served text, recorded as usual.
      expect(at(hit, "after_inference").map((i) => i.status)).toEqual(["completed", "completed"])
    }))

  it.effect("seed 002: the remaining before transforms are skipped; Around observers see the run complete", () =>
    Effect.gen(function*() {
      const cache = newCache()
      const later: Array<string> = []
      const outcomes: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          llmCache(cache),
          Hook.make({
            name: "later",
            beforeInference: (call, prompt) => Effect.sync(() => (later.push(call.payload.purpose), prompt))
          }),
          Hook.make({
            name: "watch",
            around: {
              inference: () =>
                Effect.succeed((result: Operation.Result) => Effect.sync(() => void outcomes.push(result.outcome)))
            }
          })
        ],
        script
      })
      completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "c-5" }))
      completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "c-6" }))
      expect(later).toEqual(["planning", "synthesis"])
      expect(outcomes).toEqual(["completed", "completed", "completed", "completed"])
      expect(at(yield* h.record("c-6"), "before_inference").map((i) => i.name)).toEqual(["llm-cache", "llm-cache"])
    }))

  it.effect("seed 002: a streamed synthesis emits the served text (the after transforms' text is the response)", () =>
    Effect.gen(function*() {
      const cache = newCache()
      const h = yield* makeHarness({ hooks: [llmCache(cache)], script })
      completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "c-7" }))
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(h.pipeline.stream({ request: "quote ACME", requestId: "c-8" }))
      )
      expect(h.prompts.length).toBe(2)
      const tokens = events.filter((e): e is AgentResponse.Token => e._tag === "Token").map((e) => e.text)
      expect(tokens.join("")).toBe("ACME trades at 42")
      const done = events.at(-1)
      expect(done?._tag).toBe("Completed")
      expect(done?._tag === "Completed" && done.response.response).toBe("ACME trades at 42")
      expect(cache.after.at(-1)).toEqual(["synthesis", "llm-cache"])
    }))

  it.effect("seed 001/002: serving needs the inference_cache capability — undeclared, it is refused (fail closed: HookFailed; fail open: the model answers)", () =>
    Effect.gen(function*() {
      const cache = newCache()
      cache.entries.set("never matches", "x")
      const serveAlways = (failure: "fail_open" | "fail_closed") =>
        Hook.make({
          name: "server",
          failure,
          capabilities: ["prompt_rewrite"],
          beforeInference: () => Hook.respond("{\"steps\":[],\"terminal\":true}")
        })
      const closed = yield* makeHarness({ hooks: [serveAlways("fail_closed")], script })
      const error = yield* Effect.flip(closed.pipeline.process({ request: "quote ACME", requestId: "c-9" }))
      expect(error).toMatchObject({ _tag: "HookFailed", hookName: "server", reason: "undeclared_contribution" })
      expect(closed.prompts.length).toBe(0)

      const open = yield* makeHarness({ hooks: [serveAlways("fail_open")], script })
      completed(yield* open.pipeline.process({ request: "quote ACME", requestId: "c-10" }))
      expect(open.prompts.length).toBe(2)
      const runs = at(yield* open.record("c-10"), "before_inference")
      expect(runs[0]).toMatchObject({
        status: "failed",
        decision: { policy: "fail_open", action: "continue", reason: "undeclared_contribution" }
      })
    }))

  it.effect("seed 002: only a before_inference transform can serve — Hook.respond from an after transform is a failure of its hook", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "late-server", afterInference: () => Hook.respond("too late") })],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "c-11" }))
      expect(error).toMatchObject({ _tag: "HookFailed", hookName: "late-server", point: "after_inference" })
      expect(error.message).toContain("only a before_inference transform can")
    }))

  it.effect("seed 002: a served text that is not a plan fails planning as invalid_plan, without a re-ask", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "bad-cache",
            beforeInference: (call, prompt) =>
              call.payload.purpose === "planning" ? Hook.respond("not a plan") : Effect.succeed(prompt)
          })
        ],
        script
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote ACME", requestId: "c-12" }))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "invalid_plan", output: "not a plan" })
      expect(planPrompts(h.prompts)).toEqual([])
      expect(textPrompts(h.prompts)).toEqual([])
    }))
})
