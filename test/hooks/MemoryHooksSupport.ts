/**
 * Shared by the memory hook tests: a weather tool, a language model the test
 * scripts per prompt (the summarizer's and the extraction prompts), and an
 * agent over the scripted planner with the memory hooks on a given vector
 * store.
 */
import { LanguageModel, Tool } from "@effect/ai"
import { Context, Effect, Layer, Schema, Stream } from "effect"
import {
  Agent,
  type ExecutionRecord,
  type Hook,
  Pipeline,
  type ScriptedModel,
  ToolRegistry
} from "effect-agent-pipeline"

export const Forecast = Tool.make("weather_forecast", {
  description: "Weather forecast for a city",
  parameters: { city: Schema.String },
  success: Schema.String,
  failure: Schema.String
})

/** Answers from a table; a city it does not know is an error. */
export const forecast = ToolRegistry.entry({
  namespace: "weather",
  agent: "forecaster",
  tool: Forecast,
  handler: ({ city }) =>
    city === "Atlantis"
      ? Effect.fail("no station in Atlantis")
      : Effect.succeed(city === "Lisbon" ? "21°C and sunny" : `forecast for ${city}: 15°C, cloudy`)
})

export const forecastStep = (stepId: string, city: string) => ({
  step_id: stepId,
  namespace: "weather",
  agent: "forecaster",
  capability: "weather_forecast",
  parameters: { city }
})

export const plan = (...steps: ReadonlyArray<ReturnType<typeof forecastStep>>) => ({ steps, terminal: true })

/** A language model whose text answer is `reply(prompt)`; it records every prompt. */
export const textModel = (reply: (prompt: string) => Effect.Effect<string>) =>
  Effect.gen(function*() {
    const prompts: Array<string> = []
    const service = yield* LanguageModel.make({
      generateText: (options) =>
        Effect.gen(function*() {
          const prompt = options.prompt.content.map((m) =>
            typeof m.content === "string"
              ? m.content
              : m.content.map((p) => ("text" in p && typeof p.text === "string" ? p.text : "")).join("")
          ).join("\n")
          prompts.push(prompt)
          const text = yield* reply(prompt)
          return [{ type: "text", text }, {
            type: "finish",
            reason: "stop",
            usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
          }]
        }),
      streamText: () => Stream.empty
    })
    return { service, prompts }
  })

export interface MemoryAgent {
  readonly pipeline: Pipeline.Pipeline.Service
  readonly test: Agent.TestAgent.Service
}

/** An agent over the scripted planner and the forecast tool with `hooks`; `vectors` is provided to them. */
export const makeAgent = (options: {
  readonly hooks: ReadonlyArray<Hook.Hook>
  readonly script: ScriptedModel.Script
}) =>
  Effect.gen(function*() {
    const layer = Agent.layerTest({ script: options.script, tools: [forecast], hooks: options.hooks })
    const context = yield* Layer.build(layer)
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      test: Context.get(context, Agent.TestAgent)
    } satisfies MemoryAgent
  })

/** The invocation of hook `name` in a record. */
export const invocation = (record: ExecutionRecord.ExecutionRecord, name: string) =>
  record.hookInvocations.find((i) => i.name === name)

/** The data of effect `effectId` reported by hook `name`. */
export const effectOf = (record: ExecutionRecord.ExecutionRecord, name: string, effectId: string) =>
  invocation(record, name)?.effects.find((e) => e.effectId === effectId)

/** The planning prompts (structured-output calls) the scripted model received. */
export const planningPrompts = (agent: MemoryAgent) =>
  agent.test.prompts.filter((p) => p.kind === "plan").map((p) => p.prompt)
