import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Agent, Hook, HookGroup, Pipeline } from "effect-agent-pipeline"
import { executeTrade, QuotesLive, stockQuote } from "./tools.js"

// A group is a named set of hooks: every operation hook call of its hooks
// gets the group's name as `meta.group`.
const guardrails = HookGroup.make("guardrails", [
  Hook.make({
    name: "no-trades",
    capabilities: ["deny"],
    guard: {
      toolCall: (call, proceed, meta) =>
        call.payload.capability === "execute_trade"
          ? Effect.zipRight(Console.log(`[${meta.group}] denied ${call.payload.capability}`), Hook.deny("no trades"))
          : proceed
    }
  })
])

const audit = HookGroup.make("audit", [
  Hook.make({
    name: "tool-audit",
    around: {
      toolCall: (call, meta) =>
        Effect.succeed((result) => Console.log(`[${meta.group}] ${call.payload.capability}: ${result.outcome}`))
    }
  })
])

// A group goes wherever a hook list goes; merge combines groups in order.
const AgentLive = Agent.layerOffline({
  tools: [stockQuote, executeTrade],
  hooks: HookGroup.merge(guardrails, audit)
}).pipe(Layer.provide(QuotesLive))

// Names are unique: the same group twice fails registration, typed.
const Twice = Agent.layerOffline({ tools: [], hooks: HookGroup.merge(audit, audit) })

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({ request: "Buy 10 shares of ACME stock", requestId: "groups-1" })
  const refused = yield* Effect.flip(Layer.build(Twice).pipe(Effect.scoped))
  yield* Console.log(`${refused._tag}: ${refused.message}`)
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
