import { AiError, LanguageModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as ScriptedModel from "../../src/ai/ScriptedModel.js"
import { RoutingPlan } from "../../src/domain/RoutingPlan.js"
import { defaultBuilder } from "../../src/pipeline/PromptBuilder.js"

const stockStep = {
  step_id: "s1",
  namespace: "demo-tools",
  agent: "stock-service",
  capability: "stock_quote",
  parameters: { symbol: "ACME" }
}

const planningPrompt = (request: string) =>
  defaultBuilder.buildPlanningPrompt({ request, enrichments: {}, tools: [], phase: 1, priorResults: [] })

describe("ScriptedModel", () => {
  it.effect("returns plans in order and records every prompt", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make({
        plans: [
          { steps: [stockStep], terminal: false },
          (prompt: string) => ({ steps: [], terminal: true, reasoning: `saw ${prompt.length} chars` })
        ],
        synthesis: (prompt) => `answer to ${prompt.length} chars`
      })
      const run = Effect.gen(function*() {
        const first = yield* LanguageModel.generateObject({ prompt: planningPrompt("one"), schema: RoutingPlan })
        const second = yield* LanguageModel.generateObject({ prompt: "continue", schema: RoutingPlan })
        const text = yield* LanguageModel.generateText({ prompt: "synthesize" })
        const streamed = yield* Stream.runCollect(LanguageModel.streamText({ prompt: "stream it" }))
        return { first, second, text, streamed: Chunk.toReadonlyArray(streamed) }
      }).pipe(Effect.provideService(LanguageModel.LanguageModel, model.service))
      const { first, second, text, streamed } = yield* run

      expect(first.value.steps).toHaveLength(1)
      expect(first.value.steps[0]).toMatchObject({ ...stockStep, depends_on: [], implicit_deps: [], metadata: {} })
      expect(first.value.terminal).toBe(false)
      expect(second.value).toEqual({ steps: [], terminal: true, reasoning: "saw 8 chars" })
      expect(text.text).toBe("answer to 10 chars")
      expect(streamed.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []))).toEqual(["answer to 9 chars"])
      expect(streamed.map((p) => p.type)).toEqual(["text-start", "text-delta", "text-end", "finish"])

      expect(model.prompts).toEqual([
        { kind: "plan", prompt: planningPrompt("one") },
        { kind: "plan", prompt: "continue" },
        { kind: "text", prompt: "synthesize" },
        { kind: "stream", prompt: "stream it" }
      ])
      expect(model.plansUsed()).toBe(2)
    }))

  it.effect("fails with a typed AiError when the plans run out", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(LanguageModel.generateObject({ prompt: "plan", schema: RoutingPlan }))
      expect(AiError.isAiError(error)).toBe(true)
      expect(error._tag).toBe("UnknownError")
      expect(error.message).toContain("script exhausted")
    }).pipe(Effect.provide(ScriptedModel.layer({ plans: [], synthesis: "" }))))

  it.effect("returns a string plan verbatim, so malformed JSON fails generateObject with MalformedOutput", () =>
    Effect.gen(function*() {
      const verbatim = " {\"steps\" : [], \"terminal\": true}\n"
      const model = yield* ScriptedModel.make({ plans: [verbatim, "{not json", "{\"steps\": 3}"], synthesis: "" })
      const layer = Layer.succeed(LanguageModel.LanguageModel, model.service)
      const ok = yield* LanguageModel.generateObject({ prompt: "plan", schema: RoutingPlan }).pipe(
        Effect.provide(layer)
      )
      expect(ok.text).toBe(verbatim)
      expect(ok.value).toEqual({ steps: [], terminal: true })
      const malformed = yield* Effect.flip(
        LanguageModel.generateObject({ prompt: "plan", schema: RoutingPlan }).pipe(Effect.provide(layer))
      )
      expect(malformed._tag).toBe("MalformedOutput")
      const wrongShape = yield* Effect.flip(
        LanguageModel.generateObject({ prompt: "plan", schema: RoutingPlan }).pipe(Effect.provide(layer))
      )
      expect(wrongShape._tag).toBe("MalformedOutput")
    }))

  it.effect("fails with an AiError for an Error entry", () =>
    Effect.gen(function*() {
      const custom = new AiError.MalformedInput({ module: "test", method: "plan", description: "custom" })
      const model = yield* ScriptedModel.make({
        plans: [new Error("provider down"), () => custom, { steps: [] }],
        synthesis: ""
      })
      const layer = Layer.succeed(LanguageModel.LanguageModel, model.service)
      const generate = LanguageModel.generateObject({ prompt: "plan", schema: RoutingPlan }).pipe(Effect.provide(layer))
      const first = yield* Effect.flip(generate)
      expect(first._tag).toBe("UnknownError")
      expect(first.message).toContain("provider down")
      const second = yield* Effect.flip(generate)
      // Effect may hand back a copy of the failure (it attaches span info),
      // so compare fields rather than identity.
      expect(second._tag).toBe("MalformedInput")
      expect(second instanceof AiError.MalformedInput && second.description).toBe(custom.description)
      const third = yield* generate
      expect(third.value).toEqual({ steps: [], terminal: true })
    }))

  it.effect("streams the scripted chunks verbatim", () =>
    Effect.gen(function*() {
      const emoji = "😀"
      const chunks = ["Prix: 1", "2 €, ", emoji.slice(0, 1), emoji.slice(1), " ok"]
      const parts = yield* Stream.runCollect(LanguageModel.streamText({ prompt: "stream" }))
      const deltas = Chunk.toReadonlyArray(parts).flatMap((p) => (p.type === "text-delta" ? [p.delta] : []))
      expect(deltas).toEqual(chunks)
      expect(deltas.join("")).toBe(`Prix: 12 €, ${emoji} ok`)
    }).pipe(
      Effect.provide(
        ScriptedModel.layer({
          plans: [],
          synthesis: "ignored when chunks are given",
          chunks: ["Prix: 1", "2 €, ", "😀".slice(0, 1), "😀".slice(1), " ok"]
        })
      )
    ))
})
