/**
 * Seed 004's hook uses, built on the runtime: tool-output redaction of
 * secrets and PII with per-tool exemptions (an `after_tool` transform),
 * structured audit events for each LLM call (an Around observer reporting
 * an effect per call), progress events per tool (observers of `tool_call`)
 * and governance hooks ordered after guardrails (a guardrail-denied call
 * never reaches governance).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Hook, HookEffects, type Json, type Operation } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, tradeStep, weatherStep } from "../support/Harness.js"

const SECRET = /(?:sk-[A-Za-z0-9]{8,}|\d{3}-\d{2}-\d{4})/g

/** Redacts secrets and PII in any JSON value. */
const redact = (value: Json.Json): Json.Json =>
  typeof value === "string"
    ? value.replace(SECRET, "[redacted]")
    : Array.isArray(value)
    ? value.map(redact)
    : value !== null && typeof value === "object"
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]))
    : value

/** The seed's guardrail: scans tool output; `allowTools` are exempt. */
const outputGuardrail = (allowTools: ReadonlyArray<string>) =>
  Hook.make({
    name: "output-guardrail",
    capabilities: ["tool_output_rewrite"],
    afterTool: (call, result) =>
      Effect.succeed(
        allowTools.includes(call.payload.capability) || !("output" in result)
          ? result
          : { output: redact(result.output) }
      )
  })

describe("seed 004: tool-output redaction with per-tool exemptions", () => {
  it.effect("seed 004: secrets and PII in tool output are redacted before the model sees them; an exempt tool's output is not", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          outputGuardrail(["weather_forecast"]),
          // A stand-in tool output carrying a secret and an SSN.
          Hook.make({
            name: "leaky-backend",
            priority: 10,
            afterTool: (_call, result) =>
              Effect.succeed(
                "output" in result
                  ? { output: { data: result.output, note: "key sk-ABCDEFGH12 ssn 123-45-6789" } }
                  : result
              )
          })
        ],
        script: {
          plans: [plan([quoteStep("s1"), weatherStep("w1")])],
          synthesis: (prompt) => (prompt.includes("sk-ABCDEFGH12") ? "LEAKED" : "clean")
        }
      })
      const result = yield* h.pipeline.process({ request: "quote and weather", requestId: "redact" })
      const [quote, weather] = result._tag === "Completed" ? result.response.phases[0]!.steps : []
      expect(quote?.output).toMatchObject({ note: "key [redacted] ssn [redacted]" })
      // The exempt tool's output passes untouched (an allow-list is the operator's call).
      expect(weather?.output).toMatchObject({ note: "key sk-ABCDEFGH12 ssn 123-45-6789" })
      const record = yield* h.record("redact")
      const runs = record.hookInvocations.filter((i) => i.name === "output-guardrail")
      expect(runs.map((r) => [r.stepId, r.contributionHash === undefined ? "unchanged" : "rewrote"])).toEqual([
        ["s1", "rewrote"],
        ["w1", "unchanged"]
      ])
    }))
})

describe("seed 004: audit events per LLM call", () => {
  it.effect("seed 004: every model call leaves one audit effect with its purpose, phase and outcome", () =>
    Effect.gen(function*() {
      const audit = Hook.make({
        name: "llm-audit",
        around: {
          inference: (call) =>
            HookEffects.report({ effectId: `audit:${call.callId}`, name: "LLM audit", status: "pending" }).pipe(
              Effect.as((result: Operation.Result) =>
                HookEffects.report({
                  effectId: `audit:${call.callId}`,
                  name: "LLM audit",
                  status: result.outcome === "completed" ? "succeeded" : "failed",
                  data: {
                    purpose: call.payload.purpose,
                    streamed: call.payload.streamed,
                    phase: call.coordinates.phase ?? null,
                    outcome: result.outcome,
                    prompt_chars: call.payload.prompt.length
                  }
                }).pipe(Effect.ignore)
              ),
              Effect.orDie
            )
        }
      })
      const h = yield* makeHarness({
        hooks: [audit],
        script: { plans: [plan([quoteStep("q1")], false), plan([])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "quote", requestId: "audit" })
      const record = yield* h.record("audit")
      const events = record.hookInvocations
        .filter((i) => i.stage === "around_inference")
        .flatMap((i) => i.effects)
        .map((e) => [e.status, e.data])
      expect(events).toEqual([
        ["succeeded", {
          purpose: "planning",
          streamed: false,
          phase: 1,
          outcome: "completed",
          prompt_chars: expect.any(Number)
        }],
        ["succeeded", {
          purpose: "planning",
          streamed: false,
          phase: 2,
          outcome: "completed",
          prompt_chars: expect.any(Number)
        }],
        ["succeeded", {
          purpose: "synthesis",
          streamed: false,
          phase: null,
          outcome: "completed",
          prompt_chars: expect.any(Number)
        }]
      ])
    }))
})

describe("seed 004: progress events per tool", () => {
  it.effect("seed 004: an observer of tool calls emits tool_start / tool_end progress events with the tool name, in order", () =>
    Effect.gen(function*() {
      const progress: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "progress",
            around: {
              toolCall: (call) =>
                Effect.sync(() => {
                  progress.push(`tool_start ${call.payload.capability}`)
                  return (result) =>
                    Effect.sync(() => void progress.push(`tool_end ${call.payload.capability} ${result.outcome}`))
                })
            }
          })
        ],
        options: { concurrency: 1 },
        script: { plans: [plan([quoteStep("s1"), weatherStep("w1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "quote and weather" })
      expect(progress).toEqual([
        "tool_start stock_quote",
        "tool_end stock_quote completed",
        "tool_start weather_forecast",
        "tool_end weather_forecast completed"
      ])
    }))
})

describe("seed 004: governance hooks ordered after guardrails", () => {
  it.effect("seed 004: a guardrail-denied tool call never reaches governance; governance sees only what guardrails let through", () =>
    Effect.gen(function*() {
      const governed: Array<string> = []
      const guardrail = Hook.make({
        name: "guardrail",
        guard: {
          toolCall: (call, proceed) =>
            call.payload.capability === "execute_trade" ? Hook.deny("guardrail: trades blocked") : proceed
        }
      })
      // Registered first, but ordered after the guardrail by its dependency.
      const governance = Hook.make({
        name: "governance",
        dependsOn: ["guardrail"],
        guard: {
          toolCall: (call, proceed) =>
            Effect.zipRight(Effect.sync(() => void governed.push(call.payload.capability)), proceed)
        }
      })
      const h = yield* makeHarness({
        hooks: [governance, guardrail],
        script: { plans: [plan([quoteStep("s1"), tradeStep("t1")])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "quote and buy", requestId: "governance" })
      expect(governed).toEqual(["stock_quote"])
      const steps = result._tag === "Completed" ? result.response.phases[0]!.steps : []
      expect(steps.map((s) => [s.step_id, s.status])).toEqual([["s1", "succeeded"], ["t1", "denied"]])
      const record = yield* h.record("governance")
      const trade = record.hookInvocations.filter((i) => i.stepId === "t1").map((i) => [i.name, i.status])
      // The guardrail (outer) denied; governance (inner) never ran for the trade.
      expect(trade).toEqual([["guardrail", "denied"]])
      expect(
        Option.isSome(
          Option.fromNullable(record.hookInvocations.find((i) => i.stepId === "s1" && i.name === "governance"))
        )
      ).toBe(true)
    }))
})
