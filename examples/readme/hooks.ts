import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Agent, Hook, HookEffects, Pipeline } from "effect-agent-pipeline"
import { executeTrade, QuotesLive, stockQuote } from "./tools.js"

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

const AgentLive = Agent.layerOffline({ hooks, tools: [stockQuote, executeTrade] }).pipe(Layer.provide(QuotesLive))

const ask = (request: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const result = yield* pipeline.process({ request })
    return result._tag === "Completed" ? result.response.response : "suspended"
  }).pipe(
    // The required hook's rejection is a typed error, told apart from an answer.
    Effect.catchTag("RequiredAfterPlanningError", (denied) => Effect.succeed(`denied by ${denied.hookName}`)),
    Effect.flatMap((answer) => Console.log(`${request} → ${answer}`))
  )

const main = Effect.gen(function*() {
  yield* ask("What is the stock quote for ACME?")
  yield* ask("Tell me insider news")
  yield* ask("Buy 10 shares of ACME stock")
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
