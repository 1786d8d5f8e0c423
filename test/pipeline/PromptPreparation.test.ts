/**
 * Prompt-value preparation (seed 000 §5.2–5.3, C7): the configured preparer
 * reaches the known string enrichments of every prompt — planning, each
 * continuation (phase 2+, a resumed request's too), synthesis (streamed and
 * workflow mode too), default and custom builders alike — and nothing else:
 * hooks and the record keep the values the hooks wrote. The identity default
 * changes no prompt by a byte; a preparer that throws or returns a non-string
 * leaves that value out and the request goes on, with a diagnostic.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, Layer, Stream } from "effect"
import {
  Agent,
  Approval,
  CheckpointStore,
  ExecutionStore,
  Hook,
  type Json,
  Pipeline,
  PromptBuilder,
  PromptPreparation,
  type ScriptedModel
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { plan, quoteStep, tradeStep } from "../support/Harness.js"

interface Setup {
  readonly script: ScriptedModel.Script
  readonly hooks?: ReadonlyArray<Hook.Hook<never>>
  readonly promptValues?: PromptPreparation.PromptValuePreparer.Service
  readonly promptBuilder?: PromptBuilder.PromptBuilder.Service
  readonly approval?: Approval.ApprovalPolicy["Type"]
}

/** An agent over the scripted model and the demo tools; the prompts it received and its records. */
const agent = (setup: Setup) =>
  Effect.gen(function*() {
    const context = yield* Effect.scoped(Layer.build(Agent.layerTest({
      tools: allTools,
      hooks: setup.hooks ?? [],
      script: setup.script,
      promptValues: setup.promptValues,
      promptBuilder: setup.promptBuilder,
      approval: setup.approval
    })))
    const test = Context.get(context, Agent.TestAgent)
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      checkpoints: Context.get(context, CheckpointStore.CheckpointStore),
      store: Context.get(context, ExecutionStore.ExecutionStore),
      prompts: test.prompts,
      record: (requestId: string) => Effect.orDie(test.record(requestId))
    }
  })

/** A BeforePlanning hook that writes the given enrichments. */
const writes = (enrichments: Json.JsonObject): Hook.Hook<never> =>
  Hook.make({ name: "writer", beforePlanning: () => Effect.succeed({ enrichments }) })

const raw: Json.JsonObject = {
  rag_context: "raw memory",
  conversation_history: "user: raw history",
  activity_coordination: "raw coordination",
  user_profile: "<user_profile>raw profile</user_profile>",
  tenant: "raw tenant"
}

/** Prepares by rewriting "raw" to "prepared", counting its calls by key. */
const rewriting = () => {
  const calls: Array<string> = []
  const preparer = PromptPreparation.make((value, key) => {
    calls.push(key)
    return value.replaceAll("raw", "prepared")
  })
  return { preparer, calls }
}

const expectPrepared = (prompt: string) => {
  expect(PromptBuilder.readSection(prompt, "agent_memory")).toBe("prepared memory")
  expect(PromptBuilder.readSection(prompt, "conversation_history")).toBe("user: prepared history")
  expect(PromptBuilder.readSection(prompt, "agent_coordination")).toBe("prepared coordination")
  expect(prompt).toContain("<user_profile>prepared profile</user_profile>")
  expect(prompt).not.toContain("raw")
}

const twoPhases = { plans: [plan([quoteStep("s1")], false), plan([quoteStep("s2", "INIT")])], synthesis: "answer" }

describe("PromptPreparation.prepare", () => {
  it("prepares the four known string values, with their key, and nothing else", () => {
    const seen: Array<string> = []
    const { enrichments, failures } = PromptPreparation.prepare(
      { ...raw, activity_coordination: { agents: ["raw-1"] }, user_profile: 7 },
      PromptPreparation.make((value, key) => {
        seen.push(key)
        return `${key}:${value.length}`
      })
    )
    expect(failures).toEqual([])
    expect(seen).toEqual(["rag_context", "conversation_history"])
    expect(enrichments).toEqual({
      rag_context: "rag_context:10",
      conversation_history: "conversation_history:17",
      activity_coordination: { agents: ["raw-1"] },
      user_profile: 7,
      tenant: "raw tenant"
    })
  })

  it("the identity returns the enrichments themselves; the input is never changed", () => {
    expect(PromptPreparation.prepare(raw, PromptPreparation.identity).enrichments).toBe(raw)
    const input = { ...raw }
    PromptPreparation.prepare(input, PromptPreparation.make(() => ""))
    expect(input).toEqual(raw)
  })

  it("a value the preparer throws on or answers with a non-string is left out, with a typed failure", () => {
    const untyped = (value: string, key: PromptPreparation.Key): unknown =>
      key === "rag_context"
        ? (() => {
          throw new Error("embedding service down")
        })()
        : key === "conversation_history"
        ? { text: value }
        : `ok ${value}`
    const { enrichments, failures } = PromptPreparation.prepare(
      raw,
      PromptPreparation.make(untyped as (value: string, key: PromptPreparation.Key) => string)
    )
    expect(enrichments).toEqual({
      activity_coordination: "ok raw coordination",
      user_profile: "ok <user_profile>raw profile</user_profile>",
      tenant: "raw tenant"
    })
    expect(failures).toEqual([
      { key: "rag_context", reason: "threw", detail: "Error: embedding service down" },
      { key: "conversation_history", reason: "not_a_string", detail: "returned an object" }
    ])
    expect(PromptPreparation.failureText(failures[0]!)).toBe(
      "prompt value preparation failed for rag_context (threw: Error: embedding service down); " +
        "the value is left out of the prompts"
    )
  })
})

describe("prompt-value preparation in the pipeline", () => {
  it.effect("C7: reaches the planning, the phase-2 continuation and the synthesis prompt; not the hooks or the record", () =>
    Effect.gen(function*() {
      const { calls, preparer } = rewriting()
      const seenByHooks: Array<Json.JsonObject> = []
      const peek = Hook.make({
        name: "peek",
        afterExecution: (ctx) => Effect.sync(() => void seenByHooks.push(ctx.enrichments))
      })
      const a = yield* agent({ hooks: [writes(raw), peek], promptValues: preparer, script: twoPhases })
      const result = yield* a.pipeline.process({ request: "quote ACME then INIT", requestId: "prep-1" })
      expect(result._tag).toBe("Completed")

      expect(a.prompts.map((p) => p.kind)).toEqual(["plan", "plan", "text"])
      for (const { prompt } of a.prompts) expectPrepared(prompt)
      // The continuation prompt is a phase-2 prompt (it carries phase 1's results).
      expect(a.prompts[1]!.prompt).toContain("<step_results>")
      // Prepared once per request snapshot, each known string value once.
      expect(calls).toEqual(["rag_context", "conversation_history", "activity_coordination", "user_profile"])
      // Hooks see the values as written.
      expect(seenByHooks).toEqual([raw])

      const record = yield* a.record("prep-1")
      const effects = record.hookInvocations.flatMap((i) => i.effects)
      const ragEffect = effects.find((e) => e.effectId === "planning_enrichment:rag_context")
      expect(ragEffect?.data).toMatchObject({ key: "rag_context", operation: "added", after: "raw memory" })
      expect(JSON.stringify(effects)).not.toContain("prepared")
      // The recorded prompts are what the model saw.
      expect(record.modelCalls?.map((c) => c.prompt)).toEqual(a.prompts.map((p) => p.prompt))
      expect(record.diagnostics).toEqual([])
    }))

  it.effect("C7: the identity default leaves every prompt byte-identical; an identity function changes none either", () =>
    Effect.gen(function*() {
      const hooks = [writes({ ...raw, activity_coordination: { agents: 2 } })]
      const input = { request: "quote ACME then INIT", metadata: { conversation_history: "user: hello <b>" } }
      const promptsOf = (promptValues?: PromptPreparation.PromptValuePreparer.Service) =>
        Effect.gen(function*() {
          const a = yield* agent({ hooks, script: twoPhases, ...(promptValues ? { promptValues } : {}) })
          yield* a.pipeline.process(input)
          return a.prompts.map((p) => p.prompt)
        })
      const unconfigured = yield* promptsOf()
      expect(unconfigured).toHaveLength(3)
      expect(yield* promptsOf(PromptPreparation.identity)).toEqual(unconfigured)
      expect(yield* promptsOf(PromptPreparation.make((value) => value))).toEqual(unconfigured)
      // A non-string known value is rendered as before: the preparer never sees it.
      expect(PromptBuilder.readSection(unconfigured[0]!, "agent_coordination")).toBe("{\"agents\":2}")
    }))

  it.effect("C7: a custom builder gets the prepared values in every phase", () =>
    Effect.gen(function*() {
      const seen: Array<Json.Json | undefined> = []
      const builder: PromptBuilder.PromptBuilder.Service = {
        buildPlanningPrompt: (
          input
        ) => (seen.push(input.enrichments.rag_context), PromptBuilder.defaultBuilder.buildPlanningPrompt(input)),
        buildContinuationPrompt: (
          input
        ) => (seen.push(input.enrichments.rag_context), PromptBuilder.defaultBuilder.buildContinuationPrompt(input)),
        buildSynthesisPrompt: (
          input
        ) => (seen.push(input.enrichments.rag_context), PromptBuilder.defaultBuilder.buildSynthesisPrompt(input))
      }
      const a = yield* agent({
        hooks: [writes(raw)],
        promptValues: rewriting().preparer,
        promptBuilder: builder,
        script: twoPhases
      })
      yield* a.pipeline.process({ request: "quote ACME then INIT" })
      expect(seen).toEqual(["prepared memory", "prepared memory", "prepared memory"])
    }))

  it.effect("C7: a preparer that throws or returns a non-string leaves the value out; the request completes", () =>
    Effect.gen(function*() {
      const failing = (value: string, key: PromptPreparation.Key): unknown => {
        if (key === "rag_context") throw new Error("boom")
        if (key === "activity_coordination") return null
        return value.replaceAll("raw", "prepared")
      }
      const a = yield* agent({
        hooks: [writes(raw)],
        promptValues: PromptPreparation.make(failing as (value: string, key: PromptPreparation.Key) => string),
        script: twoPhases
      })
      const result = yield* a.pipeline.process({ request: "quote ACME then INIT", requestId: "prep-fail" })
      expect(result._tag).toBe("Completed")
      expect(a.prompts).toHaveLength(3)
      for (const { prompt } of a.prompts) {
        expect(prompt).not.toContain("<agent_memory>")
        expect(prompt).not.toContain("<agent_coordination>")
        expect(prompt).not.toContain("raw")
        expect(PromptBuilder.readSection(prompt, "conversation_history")).toBe("user: prepared history")
      }
      const record = yield* a.record("prep-fail")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.diagnostics).toEqual([
        "prompt value preparation failed for rag_context (threw: Error: boom); the value is left out of the prompts",
        "prompt value preparation failed for activity_coordination (not_a_string: returned null); " +
        "the value is left out of the prompts"
      ])
      // The hook's effect keeps what it wrote.
      const effects = record.hookInvocations.flatMap((i) => i.effects)
      expect(effects.find((e) => e.effectId === "planning_enrichment:rag_context")?.data)
        .toMatchObject({ after: "raw memory" })
    }))

  it.effect("the streamed synthesis prompt is prepared too", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        hooks: [writes(raw)],
        promptValues: rewriting().preparer,
        script: { plans: [plan([quoteStep("s1")])], synthesis: "answer" }
      })
      const events = yield* Stream.runCollect(a.pipeline.stream({ request: "quote ACME" }))
      expect(Chunk.last(events).pipe((o) => o._tag === "Some" && o.value._tag)).toBe("Completed")
      expect(a.prompts.map((p) => p.kind)).toEqual(["plan", "stream"])
      for (const { prompt } of a.prompts) expectPrepared(prompt)
    }))

  it.effect("workflow mode runs no hooks, yet its synthesis prompt is built from prepared values", () =>
    Effect.gen(function*() {
      const a = yield* agent({ promptValues: rewriting().preparer, script: { plans: [], synthesis: "answer" } })
      yield* a.pipeline.executePlanWithSynthesis(
        { request: "quote ACME", metadata: { rag_context: "raw memory" } },
        plan([quoteStep("s1")])
      )
      expect(a.prompts.map((p) => p.kind)).toEqual(["text"])
      expect(PromptBuilder.readSection(a.prompts[0]!.prompt, "agent_memory")).toBe("prepared memory")
      expect(a.prompts[0]!.prompt).not.toContain("raw")
    }))

  it.effect("C7: a resumed request prepares the checkpoint's snapshot: its continuation and synthesis prompts", () =>
    Effect.gen(function*() {
      const { calls, preparer } = rewriting()
      const a = yield* agent({
        hooks: [writes(raw)],
        promptValues: preparer,
        approval: {
          evaluate: (_ctx, p) =>
            Effect.succeed(
              p.steps.some((s) => s.capability === "execute_trade") ? Approval.suspend("trade") : Approval.approve
            )
        },
        script: { plans: [plan([tradeStep("t1")], false), plan([quoteStep("s2")])], synthesis: "done" }
      })
      const suspended = yield* a.pipeline.process({ request: "buy ACME, then quote it", requestId: "prep-hitl" })
      if (suspended._tag !== "Suspended") throw new Error(`expected Suspended, got ${suspended._tag}`)
      // The checkpoint keeps the snapshot as written.
      expect(suspended.checkpoint.enrichments).toEqual(raw)
      const resumed = yield* a.pipeline.resume(suspended.checkpoint.checkpointId, "approve")
      expect(resumed._tag).toBe("Completed")
      expect(a.prompts.map((p) => p.kind)).toEqual(["plan", "plan", "text"])
      for (const { prompt } of a.prompts) expectPrepared(prompt)
      expect(a.prompts[1]!.prompt).toContain("<step_results>")
      // Once for the request, once more for the resume.
      expect(calls).toHaveLength(8)
    }))
})
