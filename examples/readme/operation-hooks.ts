/**
 * README "Operation hooks": guards, observers and transforms on model and
 * tool calls, and a whole-run wrap.
 */
import { executeTrade, stockQuote } from "../shared/DemoTools.js"
// #region readme
import { Effect, Schedule } from "effect"
import { Agent, Hook } from "effect-agent-pipeline"

// A guard decides whether an operation runs: proceed, wrap it, or deny it.
const noTrades = Hook.make({
  name: "no-trades",
  capabilities: ["deny"],
  guard: {
    toolCall: (call, proceed) =>
      call.payload.capability === "execute_trade" ? Hook.deny("trades need a human") : proceed,
    // A flaky model: retry each call up to twice, then give up after 30 seconds.
    inference: (_call, proceed) =>
      proceed.pipe(
        Effect.retry(Schedule.recurs(2)),
        Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => "model timeout" })
      )
  }
})

// An Around observer sees every run begin and end; it cannot change the outcome.
const modelAudit = Hook.make({
  name: "model-audit",
  execution: Hook.fireAndRecord, // never delays the request
  around: {
    inference: (call) =>
      Effect.succeed((result) =>
        Effect.log(
          `${call.payload.purpose} call ${call.callId}: ${result.outcome} in ${result.endedAt - call.startedAt} ms`
        )
      )
  }
})

// Transforms chain rewrites of an operation's input or output.
const redactAccounts = Hook.make({
  name: "redact-accounts",
  capabilities: ["tool_output_rewrite"],
  afterTool: (_call, result) =>
    Effect.succeed(
      "output" in result
        ? { output: JSON.parse(JSON.stringify(result.output).replace(/\d{8,}/g, "[account]")) }
        : result
    )
})

// A guard on `request` wraps the whole run.
const runBudget = Hook.make({
  name: "run-budget",
  guard: {
    request: (_call, proceed) => Effect.timeoutFail(proceed, { duration: "2 minutes", onTimeout: () => "run budget" })
  }
})

export const AgentLive = Agent.layerOffline({
  tools: [stockQuote, executeTrade],
  hooks: [noTrades, modelAudit, redactAccounts, runBudget]
})
// #endregion readme
