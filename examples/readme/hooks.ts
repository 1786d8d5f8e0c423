/**
 * README "Hooks": one hook per stage — enrichment, an authoritative
 * short-circuit, an audit effect, a redaction — and the required,
 * fail-closed plan boundary registered last.
 */
import { QuotesLive, stockQuote } from "./tools.js"
// #region readme
import { Effect, Layer } from "effect"
import { Agent, Hook, HookEffects, Pipeline } from "effect-agent-pipeline"

const hooks = [
  // BeforePlanning: enrich (rendered as <agent_memory> in the planning prompt)…
  Hook.make({
    name: "rag-retriever",
    beforePlanning: (ctx) => Effect.succeed({ enrichments: { rag_context: `- notes about ${ctx.request}` } })
  }),
  // …or end the request with an authoritative answer (the first accepted short-circuit wins).
  Hook.make({
    name: "policy",
    beforePlanning: (ctx) =>
      Effect.succeed(
        ctx.request.includes("insider")
          ? { decision: { kind: "authoritative", shortCircuit: { response: "Not allowed.", source: "policy" } } }
          : undefined
      )
  }),
  // AfterExecution: observe-only; report work the hook started as an effect.
  Hook.make({
    name: "audit",
    afterExecution: (_ctx, results) =>
      HookEffects.report({
        effectId: "audit-write",
        name: "Audit write",
        status: "succeeded",
        data: { step_count: results.steps.length }
      }).pipe(Effect.ignore)
  }),
  // AfterSynthesis: chained string transforms.
  Hook.make({
    name: "redact",
    afterSynthesis: (_ctx, text) => Effect.succeed(text.replace(/\d{3}-\d{2}-\d{4}/g, "[ssn]"))
  }),
  // The one required, fail-closed AfterPlanning boundary, registered last.
  Hook.required({
    name: "allowed-operations",
    afterPlanning: (_ctx, plan) =>
      plan.steps.every((s) => s.capability === "stock_quote")
        ? Effect.succeed(plan)
        : Effect.fail(new Error("only quotes are allowed"))
  })
]

export const AgentLive = Agent.layerOffline({ hooks, tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))

export const ask = (request: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const result = yield* pipeline.process({ request })
    return result._tag === "Completed" ? result.response.response : "suspended"
  }).pipe(
    // The required hook's rejection is a typed error, told apart from an answer.
    Effect.catchTag("RequiredAfterPlanningError", (denied) => Effect.succeed(`denied by ${denied.hookName}`))
  )
// #endregion readme
