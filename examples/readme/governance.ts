import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { Agent, Hook, HookGroup, Pipeline } from "effect-agent-pipeline"
import { executeTrade } from "./tools.js"

// A tool-call guard that says when it runs, then refuses (with a reason) or lets the call through.
const gate = (name: string, refuse: (args: Record<string, unknown>) => string | undefined, options: {
  readonly priority?: number
  readonly dependsOn?: ReadonlyArray<string>
} = {}) =>
  Hook.make({
    name,
    ...options,
    capabilities: ["deny"],
    guard: {
      toolCall: (call, proceed, meta) => {
        const reason = refuse(call.payload.parameters)
        const said = Console.log(`  ${meta.group}/${name}`)
        return reason === undefined ? Effect.zipRight(said, proceed) : Effect.zipRight(said, Hook.deny(reason))
      }
    }
  })

// Guardrails first: a higher priority puts their guards outermost.
const guardrails = HookGroup.make("guardrails", [
  gate("symbol-allowlist", (args) => args["symbol"] === "ACME" ? undefined : "symbol not allowed", { priority: 100 })
])

// Governance after every guardrail (dependsOn), in a documented order:
// step-up → trade-limit → audit. A call a guardrail denied never reaches it.
const governance = HookGroup.make("governance", [
  gate("step-up", () => undefined, { dependsOn: ["symbol-allowlist"] }),
  gate("trade-limit", (args) => Number(args["quantity"] ?? 0) > 5 ? "over the trade limit" : undefined, {
    dependsOn: ["step-up"]
  }),
  gate("audit", () => undefined, { dependsOn: ["trade-limit"] })
])

// Registration order does not matter: priority and dependsOn decide.
const AgentLive = Agent.layerOffline({ tools: [executeTrade], hooks: HookGroup.merge(governance, guardrails) })

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  for (const request of ["Buy 10 shares of ACME stock", "Buy 2 shares of EVIL stock", "Buy 2 shares of ACME stock"]) {
    yield* Console.log(request)
    const result = yield* pipeline.process({ request })
    if (result._tag !== "Completed") continue
    for (const step of result.response.phases.flatMap((phase) => phase.steps)) {
      yield* Console.log(`  → ${step.capability}: ${step.status}${step.error === undefined ? "" : ` (${step.error})`}`)
    }
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
