import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionRecord, ExecutionStore, Hook, HookEffects, Pipeline } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

const printEvidence = (requestId: string) =>
  Effect.gen(function*() {
    const store = yield* ExecutionStore.ExecutionStore
    const found = yield* store.get(requestId)
    if (Option.isNone(found)) return yield* Console.log(`${requestId}: no record (unknown, expired, or recording off)`)
    const record = found.value
    // "succeeded" | "failed" | "interrupted" | "suspended" | "rejected" | "running" | "unknown" (legacy record)
    const completion = ExecutionRecord.requestCompletion(record)
    yield* Console.log(`${record.requestId}: ${completion}, mode ${record.mode}`)
    if (record.lifecycle?.status === "failed") {
      yield* Console.log(`  failed with ${record.lifecycle.errorTag}: ${record.lifecycle.errorMessage}`)
    }
    for (const phase of record.phases) {
      for (const step of phase.steps) {
        yield* Console.log(`  phase ${phase.phase} step ${step.step_id} ${step.capability}: ${step.status}`)
      }
    }
    for (const hook of record.hookInvocations) {
      // A missing decision means "not recorded", never "succeeded".
      const decision = hook.decision === undefined
        ? "no decision recorded"
        : `${hook.decision.policy}/${hook.decision.action}/${hook.decision.reason}`
      yield* Console.log(
        `  ${hook.stage} ${hook.name}: ${hook.outcome} (${decision})${hook.error ? ` ${hook.error}` : ""}`
      )
      for (const effect of hook.effects) {
        yield* Console.log(`    effect ${effect.effectId}: ${effect.status} ${JSON.stringify(effect.data ?? null)}`)
      }
    }
    if (record.shortCircuit !== undefined) {
      yield* Console.log(`  short-circuited by ${record.shortCircuit.hookName} (${record.shortCircuit.reason})`)
    }
  })

const hooks = [
  Hook.make({
    name: "notes",
    beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "Quotes are delayed 15 minutes." } })
  }),
  Hook.make({
    name: "policy",
    beforePlanning: (ctx) =>
      Effect.succeed(
        ctx.request.includes("insider")
          ? { decision: { kind: "authoritative", shortCircuit: { response: "Not allowed.", source: "policy" } } }
          : undefined
      )
  }),
  // Work a hook starts is reported as an effect: pending first, then its outcome.
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
  // The required plan boundary records its decision on every plan it judges.
  Hook.required({
    name: "quotes-only",
    afterPlanning: (_ctx, plan) =>
      plan.steps.every((s) => s.capability === "stock_quote")
        ? Effect.succeed(plan)
        : Effect.fail(new Error("only quotes are allowed"))
  })
]

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId: "acme" })
  yield* pipeline.process({ request: "Tell me insider news", requestId: "insider" })
  for (const id of ["acme", "insider", "nope"]) yield* printEvidence(id)
}).pipe(Effect.provide(Agent.layerOffline({ tools: [stockQuote], hooks }).pipe(Layer.provide(QuotesLive))))

NodeRuntime.runMain(main)
