/**
 * `npm start`: an example agent on the embedded defaults (offline model,
 * records in the SQLite file `./data/agent.db`, no network; `AGENT_STORE`
 * picks another store, `AGENT_MODEL` a real model — README "Model providers"). It registers a few hooks — context
 * injection, an authoritative short-circuit for a blocked topic, an audit
 * hook that reports an effect, a redaction hook and the required
 * plan-policy boundary — runs sample requests, and prints each answer with
 * its evidence: the hooks that ran, their decisions and their effects.
 * Currency conversions need a human: they suspend at a checkpoint, sealed
 * with the key kept beside the database (`./data/agent.db.checkpoint-key`,
 * created on the first run). A second run first shows what the earlier runs
 * left in the store, then approves the conversions they left waiting —
 * echoing the plan digest the "approver" was shown.
 *
 * With `OTEL_EXPORTER_OTLP_ENDPOINT` set (e.g. `http://localhost:4318`, a
 * Jaeger all-in-one), its spans and metrics are exported over OTLP/HTTP as
 * `OTEL_SERVICE_NAME` (default `effect-agent-pipeline`); unset, it stays
 * offline.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option } from "effect"
import {
  Agent,
  Approval,
  CheckpointStore,
  ExecutionRecord,
  ExecutionStore,
  Hook,
  HookEffects,
  Pipeline
} from "effect-agent-pipeline"
import * as Telemetry from "effect-agent-pipeline/otel"
import { allowedOperations } from "../plan-policy/PlanPolicy.js"
import { allTools } from "../shared/DemoTools.js"

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

// A human signs off currency conversions (the plan is shown with its digest).
const approval: Approval.ApprovalPolicy["Type"] = {
  evaluate: (_ctx, plan) =>
    Effect.succeed(
      plan.steps.some((s) => s.capability === "convert_currency")
        ? Approval.suspend("currency conversions need a human")
        : Approval.approve
    )
}

const samples = [
  "What is the stock quote for ACME?",
  "What's the weather forecast in Lisbon?",
  "Buy 10 shares of ACME stock",
  "Tell me insider news about ACME",
  "Convert 100 USD to EUR"
]

const describeEvidence = (record: ExecutionRecord.ExecutionRecord) =>
  record.hookInvocations.map((inv) => {
    const decision = inv.decision
      ? ` decision=${inv.decision.policy}/${inv.decision.action}/${inv.decision.reason}`
      : ""
    const effects = inv.effects.length > 0
      ? ` effects=[${inv.effects.map((e) => `${e.effectId}:${e.status}`).join(", ")}]`
      : ""
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
        `  ${record.requestId}: ${
          ExecutionRecord.requestCompletion(record)
        }, ${record.hookInvocations.length} hook invocations — ${record.request}`
      )
    }
  }
  // What earlier runs left waiting for a human: show the approver the plan
  // and its digest, then approve with the digest they saw.
  const checkpoints = yield* CheckpointStore.CheckpointStore
  const waiting = yield* store.list({ status: ["suspended"], limit: 5 })
  for (const record of waiting.records) {
    if (record.checkpointId === undefined) continue
    const found = yield* Effect.either(checkpoints.get(record.checkpointId))
    if (found._tag === "Left" || Option.isNone(found.right)) {
      yield* Console.log(`\n▶ ${record.requestId} waited at ${record.checkpointId}, which cannot be read back`)
      continue
    }
    const checkpoint = found.right.value
    const steps = checkpoint.plan.steps.map((s) => `${s.capability}(${JSON.stringify(s.parameters)})`).join(", ")
    yield* Console.log(
      `\n▶ approving ${record.requestId} (${checkpoint.reason}): ${steps}, plan ${checkpoint.planDigest.slice(0, 12)}…`
    )
    const resumed = yield* Effect.either(
      pipeline.resume(checkpoint.checkpointId, "approve", { planDigest: checkpoint.planDigest })
    )
    if (resumed._tag === "Left") yield* Console.log(`  not resumed: ${resumed.left._tag}: ${resumed.left.message}`)
    else if (resumed.right._tag === "Completed") {
      yield* Console.log(`  answer: ${resumed.right.response.response.replace(/\n/g, "\n    ")}`)
    } else yield* Console.log(`  ${resumed.right._tag}`)
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
        const { checkpointId, planDigest, reason } = outcome.right.checkpoint
        yield* Console.log(
          `  suspended (${reason}) at checkpoint ${checkpointId}, plan ${
            planDigest.slice(0, 12)
          }…; the next run approves it`
        )
      }
    } else {
      yield* Console.log(`  denied: ${outcome.left._tag}: ${outcome.left.message}`)
    }
    const record = yield* store.get(requestId)
    if (Option.isSome(record)) {
      yield* Console.log(
        `  evidence: completion=${
          ExecutionRecord.requestCompletion(record.value)
        } revision=${record.value.recordRevision} phases=${record.value.phases.length}`
      )
      for (const line of describeEvidence(record.value)) yield* Console.log(line)
    }
  }
})

// Telemetry outermost: its exporters flush after the agent has shut down.
program.pipe(
  Effect.provide(Agent.layerConfig({ hooks, tools: allTools, approval })),
  Effect.provide(Telemetry.layerConfig),
  NodeRuntime.runMain
)
