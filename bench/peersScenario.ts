/**
 * `../shared/bench-peers`' scenario as the record benchmarks and the record
 * size test build it: one lookup tool call, two model calls (each prompt
 * carries a 1 KiB enrichment), an enrichment hook, a redaction hook and
 * `units` no-op hook units — `stages` (BeforePlanning, AfterPlanning,
 * AfterExecution: 2 + 3H runs) or `operations` (beforeInference and
 * afterInference on both calls, an Around observer of the tool call: 2 + 5H
 * runs, bench-peers' default).
 */
import { Tool } from "@effect/ai"
import { Effect, Schema, Stream } from "effect"
import { Hook, ModelProvider, ToolRegistry } from "../src/index.js"

/** The enrichment: 1 KiB that both prompts carry. */
export const CONTEXT = ("CTX-MARKER-7f3a " + "ctx ".repeat(256)).slice(0, 1024)

/** The one plan: a lookup. */
export const PLAN = {
  steps: [{ step_id: "s1", namespace: "bench", agent: "lookup", capability: "lookup", parameters: { q: "bench" } }],
  terminal: true
}

/** The model's draft (the redaction hook rewrites it). */
export const DRAFT = "The answer is: lookup-result(bench): 42 widgets. Contains SECRET token."

/** The question every request asks. */
export const REQUEST = "What does the lookup say about bench?"

/** How the no-op units hook in. */
export type UnitKind = "stages" | "operations"

const Lookup = Tool.make("lookup", {
  description: "Look up a fact.",
  parameters: { q: Schema.String },
  success: Schema.String
})

/** The lookup tool. */
export const tools = [
  ToolRegistry.entry({
    namespace: "bench",
    agent: "lookup",
    tool: Lookup,
    handler: ({ q }) => Effect.succeed(`lookup-result(${q}): 42 widgets`)
  })
]

/** The hooks: the enrichment, `units` no-op units of `kind`, the redaction. */
export const hooksOf = (units: number, kind: UnitKind): Array<Hook.Hook<never>> => {
  const noop = Hook.sync(() => undefined)
  const hooks: Array<Hook.Hook<never>> = [
    Hook.make({ name: "enrichment", beforePlanning: Hook.sync(() => ({ enrichments: { rag_context: CONTEXT } })) })
  ]
  for (let i = 0; i < units; i++) {
    hooks.push(
      kind === "stages"
        ? Hook.make({
          name: `noop_${i}`,
          beforePlanning: noop,
          afterPlanning: Hook.sync((_ctx, plan) => plan),
          afterExecution: noop
        })
        : Hook.make({
          name: `noop_${i}`,
          beforeInference: Hook.sync((_call, prompt) => prompt),
          afterInference: Hook.sync((_call, text) => text),
          around: { toolCall: noop }
        })
    )
  }
  hooks.push(
    Hook.make({ name: "redaction", afterSynthesis: Hook.sync((_ctx, text: string) => text.replace("SECRET", "[x]")) })
  )
  return hooks
}

/** A zero-latency model that keeps nothing (the record keeps its prompts and outputs). */
export const model = ModelProvider.layer(ModelProvider.make({
  generateText: (options) =>
    Effect.succeed([
      { type: "text", text: options.responseFormat.type === "json" ? JSON.stringify(PLAN) : DRAFT },
      { type: "finish", reason: "stop", usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 } }
    ]),
  streamText: () => Stream.dieMessage("not used")
}))
