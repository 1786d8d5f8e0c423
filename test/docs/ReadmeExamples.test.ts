/**
 * The README's examples do what the README says they do: each file under
 * `examples/readme/` is run here and its output checked. (The first agent is
 * run by the package test, from the installed tarball; the testing recipe is
 * itself a test.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Console, Effect } from "effect"
import { Agent, Hook, Pipeline } from "effect-agent-pipeline"
import * as Approval from "../../examples/readme/approval.js"
import * as Assemble from "../../examples/readme/assemble.js"
import * as Decode from "../../examples/readme/decode.js"
import * as Hooks from "../../examples/readme/hooks.js"
import * as Records from "../../examples/readme/records.js"
import * as RequestScope from "../../examples/readme/request-scope.js"
import * as Streaming from "../../examples/readme/streaming.js"
import * as Tools from "../../examples/readme/tools.js"

/** Runs `effect` with `Console.log` appending to `lines`. */
const capturing = <A, E, R>(lines: Array<string>, effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.console, (base) =>
    Console.withConsole(effect, {
      ...base,
      log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.map(String).join(" ")))
    }))

const answer = (request: string) =>
  Effect.flatMap(Pipeline.Pipeline, (pipeline) =>
    Effect.map(pipeline.process({ request }), (result) => (result._tag === "Completed" ? result.response.response : "suspended")))

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
      const result = yield* Decode.answer(JSON.parse('{"request":"What is the stock quote for ACME?"}'))
      expect(result._tag).toBe("Completed")
    }).pipe(Effect.provide(Tools.AgentLive)))

  it.effect("Human in the loop: approve executes the saved plan; reject is a CheckpointError", () =>
    Effect.gen(function*() {
      expect(yield* Approval.buy("approve")).toContain("execute_trade: orderId=mock-buy-ACME-10")
    }).pipe(Effect.provide(Approval.AgentLive)))

  it.effect("Human in the loop: reject fails with CheckpointError rejected and nothing executes", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Approval.buy("reject"))
      expect(error).toMatchObject({ _tag: "CheckpointError", reason: "rejected" })
    }).pipe(Effect.provide(Approval.AgentLive)))

  it.effect("Assembling an agent: every part builds; the scripted agent answers from its script", () =>
    Effect.gen(function*() {
      expect(yield* Effect.provide(answer("What is the stock quote for ACME?"), Assemble.AgentLive)).toContain("price=123.45")
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
