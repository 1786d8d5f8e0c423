/**
 * Seed 001's tool bundles as a declared contribution: a BeforePlanning
 * hook with the `extra_tools` capability may add tools for one request.
 * The planner sees them, the executor calls them through the tool hooks,
 * the record says which were added — and no other request sees them.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Hook, PromptBuilder, ToolRegistry } from "effect-agent-pipeline"
import { stockQuote } from "../../examples/shared/DemoTools.js"
import { makeHarness, plan } from "../support/Harness.js"

const Lookup = Tool.make("account_lookup", {
  description: "Account balance for the current user",
  parameters: { account: Schema.String },
  success: Schema.Struct({ account: Schema.String, balance: Schema.Number })
})

const lookup = ToolRegistry.entry({
  namespace: "user-tools",
  agent: "accounts",
  tool: Lookup,
  handler: ({ account }) => Effect.succeed({ account, balance: 42 })
})

const lookupStep = {
  step_id: "a1",
  namespace: "user-tools",
  agent: "accounts",
  capability: "account_lookup",
  parameters: { account: "acc-1" }
}

/** Adds the lookup tool only for requests that carry a user. */
const accountTools = (capabilities?: ReadonlyArray<Hook.Capability>) =>
  Hook.make({
    name: "account-tools",
    ...(capabilities === undefined ? {} : { capabilities }),
    beforePlanning: (ctx) => Effect.succeed(ctx.metadata.user_id === undefined ? {} : { tools: [lookup] })
  })

const notToolEntries: unknown = { tools: ["account_lookup"] }

const toolsIn = (prompt: string) =>
  (PromptBuilder.readSection(prompt, "tools") ?? "").split("\n").filter((l) => l.length > 0).map((l) =>
    JSON.parse(l) as { readonly capability: string }
  ).map((t) => t.capability)

describe("seed 001 extra_tools: tools for one request", () => {
  it.effect("seed 001: a hook's tools are planned with and executed for that request only, and recorded as request_tool effects", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [stockQuote],
        hooks: [accountTools(["extra_tools"])],
        script: { plans: [plan([lookupStep]), plan([lookupStep])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({
        request: "my balance",
        requestId: "with-user",
        metadata: { user_id: "ann" }
      })
      expect(result._tag === "Completed" && result.response.phases[0]?.steps[0]).toMatchObject({
        status: "succeeded",
        output: { account: "acc-1", balance: 42 }
      })
      expect(toolsIn(h.prompts[0]!.prompt)).toEqual(["stock_quote", "account_lookup"])
      const record = yield* h.record("with-user")
      const run = record.hookInvocations.find((i) => i.name === "account-tools")
      expect(run?.effects.map((e) => e.effectId)).toEqual(["request_tool:user-tools/accounts/account_lookup"])
      expect(run?.contributionHash).toMatch(/^cyrb53:/)

      // Another request (no user) does not see the tool: the model's plan naming it is invalid.
      const error = yield* Effect.flip(h.pipeline.process({ request: "my balance", requestId: "no-user" }))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "invalid_plan" })
      const planning = h.prompts.filter((p) => p.kind === "plan")
      expect(planning).toHaveLength(2)
      expect(toolsIn(planning[1]!.prompt)).toEqual(["stock_quote"])
    }))

  it.effect("seed 001: a hook that declares capabilities without extra_tools has its tools refused (undeclared_contribution)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [stockQuote],
        hooks: [accountTools(["enrichments"])],
        script: { plans: [plan([])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "my balance", requestId: "refused", metadata: { user_id: "ann" } })
      expect(toolsIn(h.prompts[0]!.prompt)).toEqual(["stock_quote"])
      const run = (yield* h.record("refused")).hookInvocations.find((i) => i.name === "account-tools")
      expect(run).toMatchObject({ status: "failed", decision: { reason: "undeclared_contribution" } })
      expect(run?.error).toContain("\"extra_tools\"")
    }))

  it.effect("seed 001: a hook may not add a tool that is already available (registered, or added by an earlier hook)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [stockQuote],
        hooks: [
          Hook.make({ name: "shadow", beforePlanning: () => Effect.succeed({ tools: [stockQuote] }) }),
          accountTools(),
          Hook.make({ name: "again", beforePlanning: () => Effect.succeed({ tools: [lookup] }) })
        ],
        script: { plans: [plan([])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "my balance", requestId: "clash", metadata: { user_id: "ann" } })
      const record = yield* h.record("clash")
      const status = (name: string) => record.hookInvocations.find((i) => i.name === name)
      expect(status("shadow")).toMatchObject({ status: "failed" })
      expect(status("shadow")?.error).toContain("demo-tools/stock-service/stock_quote is already available")
      expect(status("account-tools")).toMatchObject({ status: "completed" })
      expect(status("again")?.error).toContain("user-tools/accounts/account_lookup is already available")
      expect(toolsIn(h.prompts[0]!.prompt)).toEqual(["stock_quote", "account_lookup"])
    }))

  it.effect("seed 001/003: a request tool's calls go through the tool hooks like any tool", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [stockQuote],
        hooks: [
          accountTools(),
          Hook.make({
            name: "no-accounts",
            guard: {
              toolCall: (call, proceed) => (call.payload.agent === "accounts" ? Hook.deny("accounts are off") : proceed)
            }
          })
        ],
        script: { plans: [plan([lookupStep])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "my balance", metadata: { user_id: "ann" } })
      expect(result._tag === "Completed" && result.response.phases[0]?.steps[0]?.status).toBe("denied")
    }))

  it.effect("seed 001: tools that are not tool entries (a JavaScript caller) are a wrong shape: the hook fails open", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [stockQuote],
        // A JavaScript hook may return anything; the runner checks the shape.
        hooks: [
          Hook.make({
            name: "bad-tools",
            beforePlanning: () => Effect.succeed(notToolEntries as Hook.BeforePlanningResult)
          })
        ],
        script: { plans: [plan([])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "my balance", requestId: "bad-tools" })
      const run = (yield* h.record("bad-tools")).hookInvocations[0]
      expect(run).toMatchObject({ status: "failed", decision: { policy: "fail_open", reason: "hook_error" } })
      expect(run?.error).toContain("tools must be an array of tool entries")
    }))
})
