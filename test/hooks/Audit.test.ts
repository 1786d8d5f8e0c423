/**
 * The built-in audit of model calls (issue 23, seed 004 "Audit Logging"):
 * one audit event per model call — each attempt: retries, re-asks, the
 * fallback, streamed attempts — with its outcome, and its cost from the
 * price table; the event as the effect's data. The log line, the metrics
 * and the options: Audit.delivery.test.ts; the providers: Audit.providers.test.ts.
 *
 * The model is scripted call by call (test/support/FlakyModel.ts); time is
 * the `TestClock`'s.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema, Stream, TestClock } from "effect"
import type { Json } from "effect-agent-pipeline"
import { openWatches } from "../../src/ai/internal/modelRecord.js"
import * as Audit from "../../src/hooks/Audit.js"
import * as Flaky from "../support/FlakyModel.js"
import { agent, auditEffects, dataOf, driven, GPT, NO_STEPS, PLAN_MORE } from "./AuditSupport.js"

describe("audit: one event per model call", () => {
  it.scoped("issue 23: a retried call leaves two audit effects, failed then succeeded, each with its outcome, latency and model", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.fail(Flaky.httpStatus(503)), Flaky.text(NO_STEPS), Flaky.text("answer")],
        options: { modelRetries: 1, modelRetryDelay: "100 millis" }
      })
      yield* driven(a.pipeline.process({ request: "q", requestId: "retried" }), "50 millis")
      const record = yield* a.record("retried")
      const effects = auditEffects(record)
      expect(effects.map((e) => [e.effectId, e.status, e.error])).toEqual([
        ["model_call_1", "failed", "503"],
        ["model_call_2", "succeeded", undefined],
        ["model_call_1", "succeeded", undefined]
      ])
      const events = dataOf(record)
      expect(events.map((e) => [e.purpose, e.phase, e.sequence, e.attempt, e.model, e.outcome, e.errorType])).toEqual([
        ["planning", 1, 1, 1, "primary", "failed", "503"],
        ["planning", 1, 2, 2, "primary", "succeeded", undefined],
        ["synthesis", undefined, 1, 1, "primary", "succeeded", undefined]
      ])
      // The provider-reported model id, on the calls that got an answer.
      expect(events.map((e) => e.modelId)).toEqual([undefined, "flaky-1", "flaky-1"])
      for (const e of events) expect(e.latencyMs).toBeGreaterThanOrEqual(0)
      // The same attempts as the record's model calls, one for one.
      expect(events.map((e) => [e.attempt, e.outcome])).toEqual(
        (record.modelCalls ?? []).map((c) => [c.attempt, c.outcome])
      )
    }))

  it.scoped("issue 23: once the primary gave up, the fallback model's call is audited as model \"fallback\"", () =>
    Effect.gen(function*() {
      const down = Flaky.fail(Flaky.httpStatus(503))
      const a = yield* agent({
        replies: [down, down],
        fallback: [Flaky.text(NO_STEPS, { inputTokens: 10, outputTokens: 2 }), Flaky.text("from the fallback")],
        options: { modelRetries: 0 }
      })
      yield* a.pipeline.process({ request: "q", requestId: "fallback" })
      const events = dataOf(yield* a.record("fallback"))
      expect(events.map((e) => [e.purpose, e.sequence, e.model, e.outcome])).toEqual([
        ["planning", 1, "primary", "failed"],
        ["planning", 2, "fallback", "succeeded"],
        ["synthesis", 1, "primary", "failed"],
        ["synthesis", 2, "fallback", "succeeded"]
      ])
      expect(events[1]).toMatchObject({ inputTokens: 10, outputTokens: 2, totalTokens: 12 })
    }))

  it.scoped("issue 23: a plan re-ask is a call of its own (reask 1); a model that hangs is audited timed_out", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.text("not a plan"), Flaky.text(NO_STEPS), Flaky.hang],
        options: { modelRetries: 0, modelTimeout: "1 second" }
      })
      yield* Effect.exit(driven(a.pipeline.process({ request: "q", requestId: "reask" }), "500 millis"))
      const events = dataOf(yield* a.record("reask"))
      expect(events.map((e) => [e.purpose, e.reask, e.outcome, e.errorType])).toEqual([
        ["planning", 0, "succeeded", undefined],
        ["planning", 1, "succeeded", undefined],
        ["synthesis", 0, "timed_out", "timeout"]
      ])
    }))

  it.scoped("issue 23: a streamed synthesis retried before its first token: two streamed events, failed then succeeded", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.text(NO_STEPS), Flaky.stream([], "cut"), Flaky.stream(["sun", "ny"])],
        options: { modelRetries: 1, modelRetryDelay: "10 millis" }
      })
      yield* driven(Stream.runDrain(a.pipeline.stream({ request: "q", requestId: "streamed" })), "10 millis")
      const events = dataOf(yield* a.record("streamed"))
      expect(events.map((e) => [e.purpose, e.streamed, e.attempt, e.outcome])).toEqual([
        ["planning", false, 1, "succeeded"],
        ["synthesis", true, 1, "failed"],
        ["synthesis", true, 2, "succeeded"]
      ])
      expect(events[2]).toMatchObject({ inputTokens: 7, outputTokens: 2 })
    }))

  it.scoped("issue 23: a request interrupted while the model is asked: its call is audited interrupted", () =>
    Effect.gen(function*() {
      const a = yield* agent({ replies: [Flaky.hang] })
      const fiber = yield* Effect.fork(a.pipeline.process({ request: "q", requestId: "interrupted" }))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      const events = dataOf(yield* a.record("interrupted"))
      expect(events.map((e) => [e.purpose, e.outcome, e.errorType])).toEqual([[
        "planning",
        "interrupted",
        "interrupted"
      ]])
    }))

  it.scoped("issue 23: a stream its consumer abandons is audited interrupted (and recorded so)", () =>
    Effect.gen(function*() {
      const a = yield* agent({ replies: [Flaky.text(NO_STEPS), Flaky.stream(["one ", "two "], "stall")] })
      yield* Stream.runDrain(
        Stream.take(
          Stream.filter(a.pipeline.stream({ request: "q", requestId: "abandoned" }), (e) => e._tag === "Token"),
          1
        )
      )
      const record = yield* a.record("abandoned")
      const events = dataOf(record)
      expect(events.map((e) => [e.purpose, e.outcome, e.errorType])).toEqual([
        ["planning", "succeeded", undefined],
        ["synthesis", "interrupted", "interrupted"]
      ])
      // The record's model call says so too, with the text received from the model.
      expect(record.modelCalls?.find((c) => c.streamed)).toMatchObject({
        outcome: "interrupted",
        output: expect.stringMatching(/^one /)
      })
    }))
})

describe("audit: watches", () => {
  it.scoped("issue 23: two audit hooks on one pipeline both see every call; no watch stays open once the runs ended (interrupted and abandoned ones included)", () =>
    Effect.gen(function*() {
      const second = yield* Audit.hook({ name: "second-audit", logLevel: "None" })
      const a = yield* agent({
        replies: [
          Flaky.text(NO_STEPS),
          Flaky.text("a"),
          Flaky.text(NO_STEPS),
          Flaky.stream(["x "], "stall"),
          Flaky.hang
        ],
        hooks: [second]
      })
      yield* a.pipeline.process({ request: "q", requestId: "twice" })
      const record = yield* a.record("twice")
      const outcomes = (name: string) =>
        auditEffects(record, name).map((e) => [e.effectId, (e.data as { readonly purpose?: Json.Json }).purpose])
      expect(outcomes("model-audit")).toEqual([["model_call_1", "planning"], ["model_call_1", "synthesis"]])
      expect(outcomes("second-audit")).toEqual(outcomes("model-audit"))

      const left = a.pipeline.stream({ request: "q", requestId: "left" })
      yield* Stream.runDrain(Stream.take(Stream.filter(left, (e) => e._tag === "Token"), 1))
      const fiber = yield* Effect.fork(a.pipeline.process({ request: "q", requestId: "cut" }))
      yield* TestClock.adjust("10 millis")
      yield* Fiber.interrupt(fiber)
      expect(openWatches()).toBe(0)
    }))
})

describe("audit: cost from the price table", () => {
  it.scoped("issue 23: the cost is (input × inputPerMillion + output × outputPerMillion) / 1e6, priced by the model asked for", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [
          Flaky.text(NO_STEPS, { inputTokens: 1000, outputTokens: 500 }),
          Flaky.text("answer", { inputTokens: 2_000_000, outputTokens: 250_000 })
        ],
        identity: { provider: "openai", model: "gpt-4.1-mini" },
        audit: { prices: GPT }
      })
      yield* a.pipeline.process({ request: "q", requestId: "priced" })
      const events = dataOf(yield* a.record("priced"))
      expect(events.map((e) => [e.provider, e.requestedModel, e.modelId, e.price, e.cost, e.currency])).toEqual([
        // 1000 × 0.4 + 500 × 1.6 = 1200 per million
        ["openai", "gpt-4.1-mini", "flaky-1", "gpt-4.1-mini", 0.0012, "USD"],
        // 2e6 × 0.4 + 250e3 × 1.6 = 1.2e6 per million
        ["openai", "gpt-4.1-mini", "flaky-1", "gpt-4.1-mini", 1.2, "USD"]
      ])
      expect(events.every((e) => e.costUnavailable === undefined)).toBe(true)
    }))

  it.scoped("issue 23: a reported id that is a dated snapshot of a priced model is priced as that model; the currency is the table's", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.text(NO_STEPS, { inputTokens: 3, outputTokens: 1 }), Flaky.text("a", { inputTokens: 0 })],
        // No identity: only the reported id, `flaky-1`, names the model.
        audit: {
          prices: {
            flaky: { inputPerMillion: 2, outputPerMillion: 4 },
            fl: { inputPerMillion: 9, outputPerMillion: 9 }
          },
          currency: "EUR"
        }
      })
      yield* a.pipeline.process({ request: "q", requestId: "dated" })
      const events = dataOf(yield* a.record("dated"))
      expect(events[0]).toMatchObject({ price: "flaky", cost: 10 / 1e6, currency: "EUR" })
      // No output count reported: no cost, and why.
      expect(events[1]).toMatchObject({ costUnavailable: "no_usage" })
      expect(events[1]?.cost).toBeUndefined()
    }))

  it.scoped("issue 23: a model the table does not price has no cost, and the event says so (unknown_model)", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [
          Flaky.text(NO_STEPS, { inputTokens: 5, outputTokens: 5 }),
          Flaky.text("a", { inputTokens: 5, outputTokens: 5 })
        ],
        identity: { provider: "anthropic", model: "claude-sonnet-4" },
        audit: { prices: GPT }
      })
      yield* a.pipeline.process({ request: "q", requestId: "unpriced" })
      const record = yield* a.record("unpriced")
      const events = dataOf(record)
      expect(events.map((e) => [e.costUnavailable, e.cost, e.price])).toEqual([
        ["unknown_model", undefined, undefined],
        ["unknown_model", undefined, undefined]
      ])
      expect(auditEffects(record)[0]?.summary).toContain("no cost (unknown_model)")
    }))
})

describe("audit: effects data", () => {
  it.scoped("issue 23: an effect's data is the event as JSON, and encodes back to itself", () =>
    Effect.gen(function*() {
      const a = yield* agent({
        replies: [Flaky.text(PLAN_MORE), Flaky.text(NO_STEPS), Flaky.text("a")],
        identity: { provider: "openai", model: "gpt-4.1-mini", serverAddress: "127.0.0.1", serverPort: 8080 },
        audit: { prices: GPT }
      })
      yield* a.pipeline.process({ request: "quote ACME", requestId: "data" })
      const record = yield* a.record("data")
      const effects = auditEffects(record)
      expect(effects.map((e) => (e.data as { readonly phase?: Json.Json }).phase ?? null)).toEqual([1, 2, null])
      for (const effect of effects) {
        const event = Schema.decodeUnknownSync(Audit.AuditEvent)(effect.data)
        expect(Schema.encodeSync(Audit.AuditEvent)(event)).toEqual(effect.data)
        expect(effect.startedAt).toBe(event.startedAt)
        expect(effect.duration).toBe(event.latencyMs)
      }
      // The run each effect belongs to is the audit hook's around_inference run.
      expect(
        record.hookInvocations.filter((i) => i.name === "model-audit").map((i) => [i.stage, i.effects.length])
      ).toEqual([["around_inference", 1], ["around_inference", 1], ["around_inference", 1]])
    }))
})
