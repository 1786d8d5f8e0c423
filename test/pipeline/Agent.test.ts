/**
 * Assembling an agent: `Agent.layer` takes every part by name — the model
 * is required — and each part given is the one used; `layerOffline` and
 * `layerTest` are presets over it.
 */
import { LanguageModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Duration, Effect, Either, Layer, Option, TestClock } from "effect"
import {
  Agent,
  Approval,
  CheckpointStore,
  ExecutionStore,
  Hook,
  OfflineModel,
  Pipeline,
  PromptBuilder,
  ScriptedModel
} from "effect-agent-pipeline"
import { expectTypeOf } from "vitest"
import { allTools } from "../../examples/shared/DemoTools.js"
import { plan, quoteStep, tradeStep } from "../support/Harness.js"

const run = (request: string, requestId?: string) =>
  Effect.flatMap(
    Pipeline.Pipeline,
    (pipeline) => pipeline.process(requestId === undefined ? { request } : { request, requestId })
  )

const text = (request: string, requestId?: string) =>
  Effect.map(
    run(request, requestId),
    (result) => (result._tag === "Completed" ? result.response.response : "suspended")
  )

describe("Agent.layer", () => {
  it.effect("the model part is the model used (a scripted model answers instead of the offline one)", () =>
    Effect.gen(function*() {
      expect(yield* text("What is the stock quote for ACME?")).toBe("SCRIPTED ANSWER")
    }).pipe(
      Effect.provide(Agent.layer({
        model: ScriptedModel.layer({ plans: [plan([quoteStep("s1")])], synthesis: "SCRIPTED ANSWER" }),
        tools: allTools
      }))
    ))

  it.effect("the model is a required part, and a misspelled part or option is a type error", () =>
    Effect.sync(() => {
      // The typecheck (npm run typecheck covers test/) fails if these stop being errors.
      // @ts-expect-error model is required
      const noModel = () => Agent.layer({ tools: allTools })
      // @ts-expect-error "hook" is not a part (it is "hooks")
      const misspelled = () => Agent.layer({ model: OfflineModel.layer, tools: allTools, hook: [] })
      // @ts-expect-error "maxPhase" is not an option (it is "maxPhases")
      const badOption = () => Agent.layerOffline({ tools: allTools, options: { maxPhase: 2 } })
      expect([typeof noModel, typeof misspelled, typeof badOption]).toEqual(["function", "function", "function"])
    }))

  it("hooks and tools with different requirements: the agent Layer requires their union", () => {
    class A extends Context.Tag("test/A")<A, { readonly a: number }>() {}
    class B extends Context.Tag("test/B")<B, { readonly b: number }>() {}
    const needsA = Hook.make({ name: "needs-a", beforePlanning: () => Effect.asVoid(A) })
    const needsB = Hook.make({ name: "needs-b", afterSynthesis: (_c, t: string) => Effect.as(B, t) })
    const layer = Agent.layerOffline({ tools: allTools, hooks: [needsA, needsB] })
    expectTypeOf<Layer.Layer.Context<typeof layer>>().toEqualTypeOf<A | B>()
    const provided = layer.pipe(Layer.provide(Layer.succeed(A, { a: 1 })), Layer.provide(Layer.succeed(B, { b: 2 })))
    expectTypeOf<Layer.Layer.Context<typeof provided>>().toEqualTypeOf<never>()
  })

  it.effect("layerOffline is the offline model: its answer lists what the tools returned", () =>
    Effect.gen(function*() {
      expect(yield* text("What is the stock quote for ACME?")).toMatch(
        /^Here is what the tools returned for .*stock_quote: symbol=ACME/s
      )
    }).pipe(Effect.provide(Agent.layerOffline({ tools: allTools }))))

  it.effect("a model Layer provided from outside does not replace the agent's model part (the README says so)", () =>
    Effect.gen(function*() {
      expect(yield* text("What is the stock quote for ACME?")).toMatch(/^Here is what the tools returned/)
    }).pipe(
      Effect.provide(
        Agent.layerOffline({ tools: allTools }).pipe(
          Layer.provide(ScriptedModel.layer({ plans: [plan([])], synthesis: "SCRIPTED" }))
        )
      )
    ))

  it.effect("the executionStore part receives the records, and the agent provides it to callers", () =>
    Effect.gen(function*() {
      yield* text("What is the stock quote for ACME?", "kept")
      const store = yield* ExecutionStore.ExecutionStore
      const [record] = (yield* store.list()).records
      expect(record?.requestId).toBe("kept")
      // The store given has a 1-minute retention: the record is gone after it.
      yield* TestClock.adjust(Duration.minutes(2))
      expect((yield* store.list()).records).toEqual([])
    }).pipe(
      Effect.provide(Agent.layerOffline({
        tools: allTools,
        executionStore: ExecutionStore.layerMemory({ retention: { normal: "1 minute", error: "1 minute" } })
      }))
    ))

  it.effect("hooks built by an Effect are registered like a list (construction runs once, at Layer build)", () => {
    let built = 0
    const hooks = Effect.sync(() => {
      built++
      return [Hook.make({ name: "shout", afterSynthesis: (_ctx, t: string) => Effect.succeed(t.toUpperCase()) })]
    })
    return Effect.gen(function*() {
      expect(yield* text("quote ACME")).toBe("QUIET")
      expect(yield* text("quote ACME")).toBe("QUIET")
      expect(built).toBe(1)
    }).pipe(
      Effect.provide(Agent.layer({
        model: ScriptedModel.layer({ plans: [plan([]), plan([])], synthesis: "quiet" }),
        tools: allTools,
        hooks
      }))
    )
  })

  it.effect("the approval, gate, promptBuilder and conversationHistory parts are the ones used", () =>
    Effect.gen(function*() {
      const result = yield* Effect.flatMap(
        Pipeline.Pipeline,
        (pipeline) =>
          pipeline.process({
            request: "buy ACME",
            requestId: "hitl",
            metadata: { conversation_turns: ["hi", "hello"] }
          })
      )
      expect(result._tag).toBe("Suspended")
      const checkpoints = yield* CheckpointStore.CheckpointStore
      if (result._tag !== "Suspended") return
      expect((yield* checkpoints.get(result.checkpoint.checkpointId))._tag).toBe("Some")
      const test = yield* Agent.TestAgent
      expect(test.prompts[0]?.prompt).toBe("CUSTOM PLANNING PROMPT (turns: 2)")
    }).pipe(
      Effect.provide(Agent.layerTest({
        tools: allTools,
        script: { plans: [plan([tradeStep("t1")])], synthesis: "never" },
        approval: { evaluate: () => Effect.succeed(Approval.suspend("trades need a human")) },
        conversationHistory: { prepare: (turns) => Option.some(`turns: ${Array.isArray(turns) ? turns.length : 0}`) },
        promptBuilder: {
          ...PromptBuilder.defaultBuilder,
          buildPlanningPrompt: (input) => `CUSTOM PLANNING PROMPT (${String(input.enrichments.conversation_history)})`
        }
      }))
    ))

  it.effect("invalid hooks fail the agent Layer with the registration error", () =>
    Effect.gen(function*() {
      const built = yield* Effect.either(Layer.build(Agent.layerOffline({
        tools: allTools,
        hooks: [
          Hook.required({ name: "gate", afterPlanning: (_c, p) => Effect.succeed(p) }),
          Hook.make({ name: "late", afterPlanning: (_c, p) => Effect.succeed(p) })
        ]
      })))
      expect(Either.isLeft(built) && built.left).toMatchObject({
        _tag: "InvalidRequiredAfterPlanningHook",
        reason: "required_not_terminal"
      })
    }).pipe(Effect.scoped))
})

describe("Agent.layerTest", () => {
  const script: ScriptedModel.Script = {
    plans: [plan([quoteStep("s1")])],
    synthesis: (prompt) => `answer for a ${prompt.length}-character prompt`
  }

  it.effect("gives the prompts, the plans used and the records in one service", () =>
    Effect.gen(function*() {
      const response = yield* text("What is the stock quote for ACME?", "t-1")
      const test = yield* Agent.TestAgent
      expect(test.prompts.map((p) => p.kind)).toEqual(["plan", "text"])
      expect(response).toBe(`answer for a ${test.prompts[1]!.prompt.length}-character prompt`)
      expect(test.plansUsed()).toBe(1)
      const record = yield* test.record("t-1")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.phases[0]?.steps[0]).toMatchObject({ step_id: "s1", status: "succeeded" })
      expect((yield* test.records).map((r) => r.requestId)).toEqual(["t-1"])
    }).pipe(Effect.provide(Agent.layerTest({ tools: allTools, script }))))

  it.effect("record of an unknown request fails with NoSuchElementException", () =>
    Effect.gen(function*() {
      const test = yield* Agent.TestAgent
      const error = yield* Effect.flip(test.record("nope"))
      expect(Cause.isNoSuchElementException(error)).toBe(true)
      expect(error.message).toBe("no execution record for request nope")
    }).pipe(Effect.provide(Agent.layerTest({ tools: allTools, script }))))

  it.effect("each build has its own script position and its own records", () =>
    Effect.gen(function*() {
      const first = yield* Effect.provide(
        Effect.zipRight(text("quote ACME", "a"), Agent.TestAgent),
        Agent.layerTest({ tools: allTools, script })
      )
      const second = yield* Effect.provide(
        Effect.zipRight(text("quote ACME", "a"), Effect.flatMap(Agent.TestAgent, (t) => t.records)),
        Agent.layerTest({ tools: allTools, script })
      )
      expect(first.plansUsed()).toBe(1)
      expect(second.map((r) => r.requestId)).toEqual(["a"])
    }))

  it.effect("the scripted model is not visible as a LanguageModel outside the agent", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(Agent.layerTest({ tools: allTools, script }))
      expect(Context.getOption(context, LanguageModel.LanguageModel)._tag).toBe("None")
    }).pipe(Effect.scoped))
})
