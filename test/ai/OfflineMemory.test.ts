/**
 * The offline model answers from memory: the lines of the memory hooks'
 * view (`<agent_memory>`, rendered by the real view renderer) that share
 * words with the request are quoted — best first, each event once, at most
 * three — after the step results, or alone when no step ran. Other RAG text
 * is never quoted. And end to end: an offline agent with `MemoryHooks`
 * answers a follow-up no tool can serve from what the first request recorded.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Agent, MemoryHooks, Pipeline, ToolRegistry, VectorStore } from "effect-agent-pipeline"
import { maxQuoted, relevantMemory, viewNotice } from "../../src/ai/internal/offlineMemory.js"
import * as OfflineModel from "../../src/ai/OfflineModel.js"
import type { StepResult } from "../../src/domain/ExecutionRecord.js"
import { namedLine, noticeFor, render, type ViewFields } from "../../src/hooks/internal/memoryView.js"
import { defaultBuilder } from "../../src/pipeline/PromptBuilder.js"

const event = (when: string, tool: string, entities: ReadonlyArray<string>, summary: string): ViewFields => ({
  section: "recent",
  when,
  outcome: "succeeded",
  tool,
  entities,
  summary
})

/** The memory hooks' view of `events`, exactly as the enrichment writes it (a load returns the named line). */
const view = (events: ReadonlyArray<ViewFields>, budget = 2_000): string => {
  const { text } = render("travel", events.map((fields) => ({ fields, content: namedLine(fields) })), budget)
  if (text === undefined) throw new Error("empty view")
  return text
}
/** The view's legend, when it chose the tuple form (the answer quotes it with tuple lines). */
const legendOf = (text: string): ReadonlyArray<string> =>
  text.split("\n").filter((line) => line.startsWith("Events are ["))

/** The view's entry lines, in its order, in the form (named or tuple) it chose. */
const entries = (text: string): ReadonlyArray<string> => text.split("\n").filter((line) => line.startsWith("- "))

const lisbon = event(
  "2026-11-30T10:00Z",
  "weather_forecast",
  ["Lisbon"],
  "weather_forecast({\"city\":\"Lisbon\"}) succeeded → 21°C and sunny"
)
const porto = event(
  "2026-11-30T09:00Z",
  "weather_forecast",
  ["Porto"],
  "weather_forecast({\"city\":\"Porto\"}) succeeded → 15°C, cloudy"
)
const acme = event(
  "2026-11-29T08:00Z",
  "stock_quote",
  ["ACME"],
  "stock_quote({\"symbol\":\"ACME\"}) succeeded → 123.45"
)

const weatherStep: StepResult = {
  step_id: "s1",
  namespace: "demo-tools",
  agent: "weather-service",
  capability: "weather_forecast",
  status: "succeeded",
  output: { city: "Madrid", temperatureC: 25 },
  startedAt: 0,
  duration: 1
}

const answer = (request: string, ragContext: string | undefined, steps: ReadonlyArray<StepResult> = []) =>
  OfflineModel.synthesisFromPrompt(
    defaultBuilder.buildSynthesisPrompt({
      request,
      enrichments: ragContext === undefined ? {} : { rag_context: ragContext },
      steps
    })
  )

describe("OfflineModel answers from memory", () => {
  it("the notice it recognizes is the one the memory view opens with", () => {
    expect(noticeFor("travel").startsWith(viewNotice)).toBe(true)
    expect(view([lisbon]).split("\n")[0]).toBe(noticeFor("travel"))
  })

  it("no step ran: the memory lines that share words with the request are the answer, quoted verbatim", () => {
    const memory = view([lisbon, porto, acme])
    const text = answer("Remind me what you found out about Lisbon.", memory)
    expect(text).toBe(
      [
        "No tool ran for \"Remind me what you found out about Lisbon.\". From earlier requests (recorded before this one, possibly outdated):",
        ...legendOf(memory),
        entries(memory)[0]
      ].join("\n")
    )
    expect(entries(memory)[0]).toContain("21°C and sunny")
  })

  it("steps ran: the memory lines come after the step results, under their own heading", () => {
    const memory = view([lisbon, porto, acme])
    const text = answer("Weather forecast in Madrid, and how was Porto?", memory, [weatherStep])
    const lines = text.split("\n")
    expect(lines[0]).toBe(
      "Here is what the tools returned for \"Weather forecast in Madrid, and how was Porto?\" (1 step: 1 succeeded):"
    )
    expect(lines[1]).toBe("- weather_forecast: city=Madrid, temperatureC=25")
    expect(lines[2]).toBe("From earlier requests (recorded before this one, possibly outdated):")
    // Porto shares three stems (weather, forecast, porto), Lisbon two: best first; ACME none.
    expect(lines.slice(3)).toEqual([...legendOf(memory), entries(memory)[1], entries(memory)[0]])
  })

  it("nothing in memory matches: the answer is the step listing alone, or the no-tool answer", () => {
    const memory = view([acme])
    expect(answer("Weather forecast in Madrid", memory, [weatherStep])).toBe(
      answer("Weather forecast in Madrid", undefined, [weatherStep])
    )
    expect(answer("Remind me about Lisbon", memory)).toBe("I could not find a tool for: \"Remind me about Lisbon\".")
  })

  it("other RAG text in <agent_memory> is never quoted, before or after the view", () => {
    const rag = `- Lisbon notes: bring a jacket\n\n${view([porto])}\n\nLisbon desk notes: quotes are delayed`
    expect(answer("Anything about Lisbon?", rag)).toBe("I could not find a tool for: \"Anything about Lisbon?\".")
    expect(answer("Lisbon notes", "- Lisbon notes: bring a jacket")).toBe(
      "I could not find a tool for: \"Lisbon notes\"."
    )
  })

  it("at most three lines, ties in the view's order (newest first); the same event at two times is quoted once", () => {
    const cities = ["Faro", "Braga", "Evora", "Coimbra"].map((city, i) =>
      event(`2026-11-30T0${i}:00Z`, "weather_forecast", [city], `weather_forecast({"city":"${city}"}) succeeded`)
    )
    const again = { ...cities[0]!, when: "2026-11-30T23:00Z" }
    const memory = view([again, ...cities])
    const { lines } = relevantMemory(memory, "What was the weather?")
    expect(maxQuoted).toBe(3)
    // entries: again (23:00), Faro (00:00, the same event: skipped), Braga, Evora, Coimbra
    expect(lines).toEqual([entries(memory)[0], entries(memory)[2], entries(memory)[3]])
  })

  it("the view's own field names do not count as shared words", () => {
    expect(relevantMemory(view([lisbon]), "Give me a summary of the outcome, time and entities").lines).toEqual([])
  })

  it("the tuple form is quoted with the view's legend, which explains its fields", () => {
    const many = Array.from(
      { length: 12 },
      (_, i) =>
        event(`2026-11-30T${String(i).padStart(2, "0")}:00Z`, "weather_forecast", [`City${i}`], `forecast ${i} sunny`)
    )
    const memory = view(many)
    const legend = "Events are [time | outcome | tool | entities | summary]."
    expect(memory.split("\n")[1]).toBe(legend)
    expect(relevantMemory(memory, "Which City7 forecast?").lines[0]).toBe(
      "- [2026-11-30T07:00Z | succeeded | weather_forecast | City7 | forecast 7 sunny]"
    )
    const lines = answer("Anything about City7?", memory).split("\n")
    expect(lines.slice(1)).toEqual([
      legend,
      "- [2026-11-30T07:00Z | succeeded | weather_forecast | City7 | forecast 7 sunny]"
    ])
    // The named form needs no legend.
    expect(relevantMemory(view([lisbon]), "Lisbon").legend).toBeUndefined()
  })

  it("a long memory line is cut at 500 characters", () => {
    const long = event("2026-11-30T10:00Z", "notes", ["Lisbon"], `Lisbon ${"x".repeat(900)}`)
    const text = answer("Lisbon?", view([long], 4_000))
    const quoted = text.split("\n")[1]!
    expect(quoted.length).toBe(501)
    expect(quoted.endsWith("…")).toBe(true)
  })
})

const Forecast = Tool.make("weather_forecast", {
  description: "Weather forecast (temperature, conditions) for a city",
  parameters: { city: Schema.String },
  success: Schema.Struct({ city: Schema.String, conditions: Schema.String })
})

const forecast = ToolRegistry.entry({
  namespace: "demo-tools",
  agent: "weather-service",
  tool: Forecast,
  handler: ({ city }) => Effect.succeed({ city, conditions: city === "Lisbon" ? "sunny" : "cloudy" })
})

describe("an offline agent with the memory hooks", () => {
  it.scoped("answers a follow-up no tool serves from the event the first request recorded", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        Agent.layerOffline({
          tools: [forecast],
          hooks: Effect.map(MemoryHooks.build({ domain: "travel", summarizer: "heuristic" }), (m) => m.hooks)
        }).pipe(Layer.provide(VectorStore.layerMemory()))
      )
      const pipeline = yield* Effect.provide(Pipeline.Pipeline, context)
      const first = yield* pipeline.process({ request: "What's the weather forecast in Lisbon?" })
      expect(first._tag === "Completed" && first.response.response).toContain("conditions=sunny")
      const followUp = yield* pipeline.process({ request: "Remind me what you found out about Lisbon." })
      if (followUp._tag !== "Completed") throw new Error("not completed")
      const lines = followUp.response.response.split("\n")
      expect(lines[0]).toContain("From earlier requests")
      expect(lines).toHaveLength(2)
      expect(lines[1]).toMatch(/^- time=\S+; outcome=succeeded; tool=weather_forecast; entities=Lisbon; summary=/)
      expect(lines[1]).toContain("\"conditions\":\"sunny\"")
    }))
})
