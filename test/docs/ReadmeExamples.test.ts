/**
 * The README's examples do what the README says they do: each file under
 * `examples/readme/` is run here and its output checked. (The first agent is
 * run by the package test, from the installed tarball; the testing recipe is
 * itself a test.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Console, Effect, Option } from "effect"
import { ActivityStore, Agent, ExecutionStore, Hook, MemoryStore, Pipeline } from "effect-agent-pipeline"
import * as Activity from "../../examples/readme/activity.js"
import * as Approval from "../../examples/readme/approval.js"
import * as Assemble from "../../examples/readme/assemble.js"
import * as Decode from "../../examples/readme/decode.js"
import * as Hooks from "../../examples/readme/hooks.js"
import * as Memory from "../../examples/readme/memory.js"
import * as OperationHooks from "../../examples/readme/operation-hooks.js"
import * as Records from "../../examples/readme/records.js"
import * as RequestScope from "../../examples/readme/request-scope.js"
import * as Streaming from "../../examples/readme/streaming.js"
import * as SyncHooks from "../../examples/readme/sync-hooks.js"
import * as Tools from "../../examples/readme/tools.js"

/** Runs `effect` with `Console.log` appending to `lines`. */
const capturing = <A, E, R>(lines: Array<string>, effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.console, (base) =>
    Console.withConsole(effect, {
      ...base,
      log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.map(String).join(" ")))
    }))

const answer = (request: string) =>
  Effect.flatMap(
    Pipeline.Pipeline,
    (pipeline) =>
      Effect.map(
        pipeline.process({ request }),
        (result) => (result._tag === "Completed" ? result.response.response : "suspended")
      )
  )

describe("README examples", () => {
  it.effect("Defining tools: the handler's service is provided and its result reaches the answer", () =>
    Effect.gen(function*() {
      expect(yield* answer("What is the stock quote for ACME?")).toContain("stock_quote: symbol=ACME, price=123.45")
    }).pipe(Effect.provide(Tools.AgentLive)))

  it.effect("Hooks: enrichment, short-circuit, audit effect, redaction and the required boundary", () =>
    Effect.gen(function*() {
      expect(yield* Hooks.ask("What is the stock quote for ACME?")).toContain("price=123.45")
      expect(yield* Hooks.ask("Tell me insider news")).toBe("Not allowed.")

      // Reading records: the evidence of both requests, newest first.
      const lines: Array<string> = []
      const pipeline = yield* Pipeline.Pipeline
      const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId: "acme" })
      expect(result._tag).toBe("Completed")
      yield* capturing(lines, Records.printEvidence("acme"))
      yield* capturing(lines, Records.printEvidence("nope"))
      expect(lines[0]).toMatch(/^acme: succeeded, revision [1-9]\d*, mode pipeline$/)
      expect(lines.slice(1)).toEqual([
        "  phase 1 step s1 stock_quote: succeeded",
        "  before_planning rag-retriever: succeeded (no decision recorded)",
        `    effect planning_enrichment:rag_context: succeeded {"key":"rag_context","operation":"added","after":"- notes about What is the stock quote for ACME?"}`,
        "  before_planning policy: succeeded (no decision recorded)",
        "  after_planning allowed-operations: succeeded (fail_closed/continue/accepted)",
        "  after_execution audit: succeeded (no decision recorded)",
        `    effect audit-write: succeeded {"step_count":1}`,
        "  after_synthesis redact: succeeded (no decision recorded)",
        "nope: no record (unknown, expired, or recording off)"
      ])
    }).pipe(Effect.provide(Hooks.AgentLive)))

  it.effect("Synchronous handlers: plain functions count model calls, rewrite the answer and are recorded like any hook", () =>
    Effect.gen(function*() {
      const before = SyncHooks.calls()
      const response = yield* answer("What is the stock quote for ACME?")
      expect(response).toContain("Acme Corp.")
      expect(response).not.toContain("ACME")
      // Planning and synthesis: two model calls.
      expect(SyncHooks.calls() - before).toBe(2)
      const store = yield* ExecutionStore.ExecutionStore
      const [record] = (yield* store.list({ limit: 1 })).records
      expect(record!.hookInvocations.map((i) => [i.stage, i.name, i.status])).toEqual([
        ["before_inference", "light", "completed"],
        ["around_tool_execution", "light", "completed"],
        ["before_inference", "light", "completed"],
        ["after_synthesis", "light", "completed"]
      ])
    }).pipe(Effect.provide(SyncHooks.AgentLive)))

  it.effect("Reading records: a short-circuited request says who answered", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      yield* pipeline.process({ request: "Tell me insider news", requestId: "insider" })
      const lines: Array<string> = []
      yield* capturing(lines, Records.printEvidence("insider"))
      expect(lines).toContain("  short-circuited by policy (authoritative)")
      expect(lines).toContain("  before_planning policy: succeeded (fail_closed/short_circuit/authoritative)")
    }).pipe(Effect.provide(Hooks.AgentLive)))

  it.effect("Results and streaming: buffered, streamed, and typed errors caught by tag", () =>
    Effect.gen(function*() {
      const buffered: Array<string> = []
      yield* capturing(buffered, Streaming.buffered)
      expect(buffered[0]).toMatch(/^Here is what the tools returned .* \(confidence 1, 1 phase\)$/s)
      expect(buffered[1]).toMatch(/^the model's draft before AfterSynthesis hooks: Here is what/)

      const streamed: Array<string> = []
      yield* capturing(streamed, Streaming.safely)
      const tokens = streamed.filter((l) => l.startsWith("token: "))
      expect(tokens.length).toBeGreaterThan(1)
      const final = streamed.at(-1)!
      expect(final).toMatch(/^final: Here is what the tools returned/)
      const joined = tokens.map((t) => JSON.parse(t.slice("token: ".length)) as string).join("")
      expect(`final: ${joined}`).toBe(final)
    }).pipe(Effect.provide(Streaming.AgentLive)))

  it.effect("Results and streaming: safely turns a PlanningError into a line", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      yield* capturing(lines, Streaming.safely)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^the model did not produce a valid plan: /)
    }).pipe(Effect.provide(Agent.layerTest({ tools: [], script: { plans: ["not a plan"], synthesis: "" } }))))

  it.effect("The request: decode refuses an unknown field by name, and a valid body is answered", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(Decode.answer({ request: "quote ACME", requestID: "x" }))
      expect(refused).toMatchObject({ _tag: "InvalidRequest", reason: "unexpected_field", path: "requestID" })
      const result = yield* Decode.answer(JSON.parse("{\"request\":\"What is the stock quote for ACME?\"}"))
      expect(result._tag).toBe("Completed")
    }).pipe(Effect.provide(Tools.AgentLive)))

  it.effect("Human in the loop: approve executes the saved plan", () =>
    Effect.gen(function*() {
      expect(yield* Approval.buy("approve")).toContain("execute_trade: orderId=mock-buy-ACME-10")
      const store = yield* ExecutionStore.ExecutionStore
      expect(Option.getOrUndefined(yield* store.get("trade-1"))?.lifecycle?.status).toBe("succeeded")
    }).pipe(Effect.provide(Approval.AgentLive)))

  it.effect("Human in the loop: reject ends Rejected (not an error), nothing executes, and the record says rejected", () =>
    Effect.gen(function*() {
      expect(yield* Approval.buy("reject")).toBe("rejected: trades need a human")
      const store = yield* ExecutionStore.ExecutionStore
      const record = Option.getOrUndefined(yield* store.get("trade-1"))
      expect(record?.lifecycle?.status).toBe("rejected")
      expect(record?.phases).toEqual([])
      expect(record?.finalResponse).toBeUndefined()
    }).pipe(Effect.provide(Approval.AgentLive)))

  it.effect("Assembling an agent: every part builds; the scripted agent answers from its script", () =>
    Effect.gen(function*() {
      expect(yield* Effect.provide(answer("What is the stock quote for ACME?"), Assemble.AgentLive)).toContain(
        "price=123.45"
      )
      expect(yield* Effect.provide(answer("anything"), Assemble.ScriptedAgent)).toBe("Nothing to do.")
    }))

  it.effect("The request scope: the lease's release is announced pending and completed when the request ends", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      yield* pipeline.process({ request: "anything", requestId: "lease" })
      const test = yield* Agent.TestAgent
      const record = yield* test.record("lease")
      const effect = record.hookInvocations[0]?.effects.find((e) => e.effectId === "lease-release")
      expect(effect?.status).toBe("succeeded")
    }).pipe(
      Effect.provide(Agent.layerTest({
        tools: [],
        hooks: [RequestScope.lease, Hook.make({ name: "noop", afterSynthesis: (_c, t) => Effect.succeed(t) })],
        script: { plans: [{ steps: [] }], synthesis: "done" }
      }))
    ))
})

describe("README examples: activity coordination", () => {
  it.effect("Activity coordination: the request sees the other agent, its own signal is gone afterwards, both owner effects completed", () =>
    Effect.gen(function*() {
      const store = yield* ActivityStore.ActivityStore
      yield* store.announce(
        {
          signalId: "courier:r7",
          domain: "weather",
          agent: "courier",
          requestId: "r7",
          summary: "planning deliveries in Lisbon"
        },
        "1 minute"
      )
      const pipeline = yield* Pipeline.Pipeline
      const result = yield* pipeline.process({
        request: "What's the weather forecast in Lisbon?",
        requestId: "forecast",
        metadata: { activity_domain: "weather" }
      })
      expect(result._tag).toBe("Completed")
      expect((yield* store.listActive("weather")).map((s) => s.signalId)).toEqual(["courier:r7"])
      const records = yield* ExecutionStore.ExecutionStore
      const record = Option.getOrThrow(yield* records.get("forecast"))
      const effects = record.hookInvocations.find((i) => i.name === "activity-announcement")?.effects ?? []
      expect(effects.map((e) => [e.effectId, e.status])).toEqual([
        ["activity_signal_renewal", "succeeded"],
        ["activity_signal_cleanup", "succeeded"],
        ["activity_signal", "succeeded"],
        ["activity_context", "succeeded"],
        ["planning_enrichment:activity_coordination", "succeeded"]
      ])
    }).pipe(Effect.provide(Activity.AgentLive)))
})

describe("README examples: the hook runtime", () => {
  it.effect("Operation hooks: the trade is denied at its step, quotes pass, every hook run is recorded", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      const result = yield* pipeline.process({ request: "Buy 10 shares of ACME stock", requestId: "ops" })
      expect(result._tag).toBe("Completed")
      const store = yield* ExecutionStore.ExecutionStore
      const record = Option.getOrThrow(yield* store.get("ops"))
      const trade = record.phases[0]?.steps.find((s) => s.capability === "execute_trade")
      expect(trade?.status).toBe("denied")
      expect(trade?.error).toContain("trades need a human")
      for (const step of record.phases[0]?.steps ?? []) {
        if (step.capability !== "execute_trade") expect(step.status).toBe("succeeded")
      }
      const points = record.hookInvocations.map((i) => `${i.stage}:${i.name}:${i.status}`)
      expect(points).toContain("guard_tool_call:no-trades:denied")
      expect(points).toContain("guard_inference:no-trades:completed")
      expect(points).toContain("guard_request:run-budget:completed")
    }).pipe(Effect.provide(OperationHooks.AgentLive)))

  it.effect("Retrieval and memory: the RAG hook's context reaches the prompt; stored memory is scrubbed; anonymous users are denied", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      yield* pipeline.process({
        request: "What's the weather forecast in Lisbon? Mail me at ann@example.com",
        requestId: "mem-1",
        metadata: { user_id: "ann" }
      })
      const memory = yield* MemoryStore.MemoryStore
      const stored = yield* memory.load("ann", "", 10)
      expect(stored.map((r) => r.content)).toEqual(["What's the weather forecast in Lisbon? Mail me at [email]"])
      yield* pipeline.process({ request: "What's the weather forecast in Lisbon?", requestId: "mem-2" })
      const store = yield* ExecutionStore.ExecutionStore
      const record = Option.getOrThrow(yield* store.get("mem-2"))
      const denied = record.hookInvocations.find((i) => i.stage === "guard_memory_store")
      expect(denied).toMatchObject({ name: "privacy", status: "denied" })
      const rag = record.hookInvocations.find((i) => i.stage === "before_planning" && i.name === "rag")
      expect(rag?.effects.find((e) => e.effectId === "planning_enrichment:rag_context")?.data).toMatchObject({
        after: "- Lisbon forecasts are for today, in Celsius."
      })
    }).pipe(Effect.provide(Memory.AgentLive)))
})
