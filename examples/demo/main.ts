/**
 * `npm start`: an example agent on the embedded defaults (offline model,
 * records in the SQLite file `./data/agent.db`, no network; `AGENT_STORE`
 * picks another store, `AGENT_MODEL` a real model — README "Model providers"). It registers a few hooks — context
 * injection, an authoritative short-circuit for a blocked topic, an audit
 * hook that reports an effect, a redaction hook and the required
 * plan-policy boundary — runs sample requests, and prints each answer with
 * its evidence: the hooks that ran, their decisions and their effects.
 * A second run first shows what the earlier runs left in the store.
 *
 * With `OTEL_EXPORTER_OTLP_ENDPOINT` set (e.g. `http://localhost:4318`, a
 * Jaeger all-in-one), its spans and metrics are exported over OTLP/HTTP as
 * `OTEL_SERVICE_NAME` (default `effect-agent-pipeline`); unset, it stays
 * offline.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option } from "effect"
import { Agent, ExecutionRecord, ExecutionStore, Hook, HookEffects, Pipeline } from "effect-agent-pipeline"
import * as Telemetry from "effect-agent-pipeline/otel"
import { allTools } from "../shared/DemoTools.js"
import { allowedOperations } from "../plan-policy/PlanPolicy.js"

const hooks = [
  Hook.make({
    name: "desk-context",
    beforePlanning: (ctx) =>
      Effect.succeed({
        enrichments: {
          rag_context: `Desk notes for ${String(ctx.metadata.user_id ?? "anonymous")}: quotes are delayed 15 minutes.`
        }
      })
  }),
  Hook.make({
    name: "blocked-topics",
    beforePlanning: (ctx) =>
      Effect.succeed(
        /insider/i.test(ctx.request)
          ? {
            decision: {
              kind: "authoritative" as const,
              shortCircuit: { response: "I can't help with insider information.", source: "policy" }
            }
          }
          : undefined
      )
  }),
  Hook.make({
    name: "application-audit",
    afterExecution: (_ctx, results) =>
      HookEffects.report({
        effectId: "audit-write",
        name: "Application audit write",
        status: "succeeded",
        data: { step_count: results.steps.length },
        summary: "audit writer acknowledged"
      }).pipe(Effect.ignore)
  }),
  Hook.make({
    name: "redact-order-ids",
    afterSynthesis: (_ctx, response) => Effect.succeed(response.replace(/mock-[a-z]+-[A-Z]+-\d+/g, "[order]"))
  }),
  allowedOperations([
    { namespace: "demo-tools", agent: "stock-service", capability: "stock_quote" },
    { namespace: "demo-tools", agent: "weather-service", capability: "weather_forecast" },
    { namespace: "demo-tools", agent: "fx-service", capability: "convert_currency" }
  ])
]

const samples = [
  "What is the stock quote for ACME?",
  "What's the weather forecast in Lisbon?",
  "Buy 10 shares of ACME stock",
  "Tell me insider news about ACME",
  "Convert 100 USD to EUR"
]

const describeEvidence = (record: ExecutionRecord.ExecutionRecord) =>
  record.hookInvocations.map((inv) => {
    const decision = inv.decision ? ` decision=${inv.decision.policy}/${inv.decision.action}/${inv.decision.reason}` : ""
    const effects = inv.effects.length > 0 ? ` effects=[${inv.effects.map((e) => `${e.effectId}:${e.status}`).join(", ")}]` : ""
    const error = inv.error ? ` error="${inv.error}"` : ""
    return `    ${inv.stage}.${inv.name} → ${inv.outcome}${decision}${effects}${error}`
  })

const program = Effect.gen(function*() {
  const telemetry = yield* Telemetry.settings
  if (Option.isSome(telemetry)) {
    yield* Console.log(`Exporting traces and metrics to ${telemetry.value.endpoint} as ${telemetry.value.serviceName}.`)
  }
  const pipeline = yield* Pipeline.Pipeline
  const store = yield* ExecutionStore.ExecutionStore
  const earlier = yield* store.list({ limit: 5 })
  if (earlier.records.length === 0) {
    yield* Console.log("No records from earlier runs in the store.")
  } else {
    yield* Console.log("Records from earlier runs (newest first):")
    for (const record of earlier.records) {
      yield* Console.log(
        `  ${record.requestId}: ${ExecutionRecord.requestCompletion(record)}, ${record.hookInvocations.length} hook invocations — ${record.request}`
      )
    }
  }
  // Request ids are unique per run: a stored record keeps its id.
  const run = new Date().toISOString().replace(/[-:.TZ]/g, "").slice(0, 14)
  for (const [i, request] of samples.entries()) {
    const requestId = `demo-${run}-${i + 1}`
    yield* Console.log(`\n▶ ${request}`)
    const outcome = yield* Effect.either(pipeline.process({ request, requestId, metadata: { user_id: "demo-user" } }))
    if (outcome._tag === "Right") {
      if (outcome.right._tag === "Completed") {
        const r = outcome.right.response
        yield* Console.log(`  answer (confidence ${r.confidence.toFixed(2)}): ${r.response.replace(/\n/g, "\n    ")}`)
      } else {
        yield* Console.log(`  suspended at checkpoint ${outcome.right.checkpoint.checkpointId}`)
      }
    } else {
      yield* Console.log(`  denied: ${outcome.left._tag}: ${outcome.left.message}`)
    }
    const record = yield* store.get(requestId)
    if (Option.isSome(record)) {
      yield* Console.log(
        `  evidence: completion=${ExecutionRecord.requestCompletion(record.value)} revision=${record.value.recordRevision} phases=${record.value.phases.length}`
      )
      for (const line of describeEvidence(record.value)) yield* Console.log(line)
    }
  }
})

// Telemetry outermost: its exporters flush after the agent has shut down.
program.pipe(
  Effect.provide(Agent.layerConfig({ hooks, tools: allTools })),
  Effect.provide(Telemetry.layerConfig),
  NodeRuntime.runMain
)
