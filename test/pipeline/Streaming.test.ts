/**
 * The streaming path (seed 000 §3 "Streaming caveat", §6, C12, C13, C16):
 * tokens, then exactly one `Completed` (the post-AfterSynthesis response) or
 * one `Suspended`; tokens already sent stay sent; text deltas never split a
 * code point; a short-circuit is delivered as UTF-8-safe chunks; every exit
 * finalizes the record.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Option, Stream } from "effect"
import { AgentResponse, Approval, Hook } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, tracer } from "../support/Harness.js"
import { Utf8Chunks } from "../support/Internal.js"

type StreamEvent = AgentResponse.StreamEvent

const tokensOf = (events: ReadonlyArray<StreamEvent>): ReadonlyArray<string> =>
  events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))

const completedOf = (events: ReadonlyArray<StreamEvent>): ReadonlyArray<AgentResponse.AgentResponse> =>
  events.flatMap((e) => (e._tag === "Completed" ? [e.response] : []))

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length

/** Well-formed UTF-16: encoding to UTF-8 and back is lossless (no lone surrogate). */
const isWellFormed = (text: string): boolean => new TextDecoder().decode(new TextEncoder().encode(text)) === text

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

const collect = <E>(stream: Stream.Stream<StreamEvent, E>) =>
  Effect.map(Stream.runCollect(stream), (chunk) => Chunk.toReadonlyArray(chunk))

describe("streaming: event order", () => {
  it.effect("C12: tokens, then exactly one Completed, last", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: {
          plans: [plan([quoteStep("s1")])],
          synthesis: "hello brave world",
          chunks: ["hello", " brave", " world"]
        }
      })
      const events = yield* collect(h.pipeline.stream({ request: "quote", requestId: "s-order" }))
      expect(events.map((e) => e._tag)).toEqual(["Token", "Token", "Token", "Completed"])
      expect(tokensOf(events)).toEqual(["hello", " brave", " world"])
      const [completed] = completedOf(events)
      expect(completed?.response).toBe("hello brave world")
      expect(completed?.requestId).toBe("s-order")
      const record = yield* h.record("s-order")
      expect(record.mode).toBe("stream")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.finalResponse).toBe("hello brave world")
      expect(record.deliveredText).toBe("hello brave world")
    }))

  it.effect("C12 (streaming caveat): Completed carries the AfterSynthesis-mutated text; the tokens are the raw draft; the record keeps both", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "redact", afterSynthesis: (_c, t) => Effect.succeed(t.replace("123-45-6789", "[ssn]")) }),
          Hook.make({ name: "sign", afterSynthesis: (_c, t) => Effect.succeed(`${t} — bot`) })
        ],
        script: {
          plans: [plan([quoteStep("s1")])],
          synthesis: "your ssn is 123-45-6789",
          chunks: ["your ssn", " is 123-", "45-6789"]
        }
      })
      const events = yield* collect(h.pipeline.stream({ request: "quote", requestId: "s-mut" }))
      const draft = "your ssn is 123-45-6789"
      const final = "your ssn is [ssn] — bot"
      // Tokens already sent stay sent: they are the model's raw draft.
      expect(tokensOf(events).join("")).toBe(draft)
      expect(events.at(-1)?._tag).toBe("Completed")
      const [completed] = completedOf(events)
      expect(completed?.response).toBe(final)
      expect(completed?.rawDraft).toBe(draft)
      const record = yield* h.record("s-mut")
      expect(record.rawDraft).toBe(draft)
      expect(record.finalResponse).toBe(final)
      expect(record.hookInvocations.map((i) => [i.stage, i.name, i.outcome])).toEqual([
        ["after_synthesis", "redact", "succeeded"],
        ["after_synthesis", "sign", "succeeded"]
      ])
    }))

  it.effect("C12: the streamed and the buffered path give the same final response for the same hooks", () =>
    Effect.gen(function*() {
      const hooks = [Hook.make({ name: "upper", afterSynthesis: (_c, t: string) => Effect.succeed(t.toUpperCase()) })]
      const script = { plans: [plan([quoteStep("s1")])], synthesis: "same answer", chunks: ["same", " answer"] }
      const streamed = yield* makeHarness({ hooks, script })
      const buffered = yield* makeHarness({ hooks, script })
      const events = yield* collect(streamed.pipeline.stream({ request: "q" }))
      const result = yield* buffered.pipeline.process({ request: "q" })
      expect(result._tag).toBe("Completed")
      expect(completedOf(events)[0]?.response).toBe(result._tag === "Completed" ? result.response.response : "")
      expect(completedOf(events)[0]?.response).toBe("SAME ANSWER")
    }))
})

describe("streaming: UTF-8 safety", () => {
  it.effect("a surrogate pair split across model deltas is never emitted half-way", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: {
          plans: [plan([quoteStep("s1")])],
          synthesis: "caf\u00e9 \uD83D\uDE00 ok",
          chunks: ["caf", "\u00e9 ", "\uD83D", "\uDE00", " ok"]
        }
      })
      const events = yield* collect(h.pipeline.stream({ request: "q", requestId: "s-utf" }))
      const tokens = tokensOf(events)
      expect(tokens.length).toBeGreaterThan(0)
      for (const text of tokens) {
        expect(text.length).toBeGreaterThan(0)
        expect(isHigh(text.charCodeAt(text.length - 1)), JSON.stringify(text)).toBe(false)
        expect(isLow(text.charCodeAt(0)), JSON.stringify(text)).toBe(false)
        expect(isWellFormed(text), JSON.stringify(text)).toBe(true)
      }
      expect(tokens.join("")).toBe("café 😀 ok")
      expect(completedOf(events)[0]?.response).toBe("café 😀 ok")
      expect((yield* h.record("s-utf")).rawDraft).toBe("café 😀 ok")
    }))

  it.effect("several split pairs in a row (one code unit per delta) are each re-joined", () =>
    Effect.gen(function*() {
      const text = "😀👍🏽漢字🎉"
      const h = yield* makeHarness({
        script: { plans: [plan([quoteStep("s1")])], synthesis: text, chunks: text.split("") }
      })
      const tokens = tokensOf(yield* collect(h.pipeline.stream({ request: "q" })))
      for (const t of tokens) expect(isWellFormed(t), JSON.stringify(t)).toBe(true)
      expect(tokens.join("")).toBe(text)
    }))

  it.effect("C4/seed §6: a streamed short-circuit is delivered in UTF-8-safe chunks of at most shortCircuitChunkBytes, then Completed with confidence 1", () =>
    Effect.gen(function*() {
      const answer = "拒否されました 😀😀 Ünïcödé 🎉👍🏽 policy says no 漢字かな"
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "rag", beforePlanning: () => Effect.succeed({ enrichments: { tenant: "t1" } }) }),
          Hook.make({
            name: "policy",
            beforePlanning: () =>
              Effect.succeed({ decision: { kind: "authoritative" as const, shortCircuit: { response: answer } } })
          })
        ],
        options: { shortCircuitChunkBytes: 8 }
      })
      const events = yield* collect(h.pipeline.stream({ request: "anything", requestId: "s-sc" }))
      const tokens = tokensOf(events)
      expect(tokens.length).toBeGreaterThan(1)
      for (const t of tokens) {
        expect(utf8Bytes(t), JSON.stringify(t)).toBeLessThanOrEqual(8)
        expect(t.length).toBeGreaterThan(0)
        expect(isWellFormed(t), JSON.stringify(t)).toBe(true)
      }
      expect(tokens.join("")).toBe(answer)
      expect(tokens).toEqual(Utf8Chunks.chunkUtf8(answer, 8))
      expect(events.map((e) => e._tag)).toEqual([...tokens.map(() => "Token"), "Completed"])
      const [completed] = completedOf(events)
      expect(completed?.response).toBe(answer)
      expect(completed?.confidence).toBe(1)
      expect(completed?.metadata).toEqual({ tenant: "t1" })
      expect(completed?.shortCircuit).toEqual({ hookName: "policy", kind: "authoritative", reason: "authoritative" })
      // Planning, execution and synthesis were skipped.
      expect(h.prompts).toEqual([])
      const record = yield* h.record("s-sc")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.finalResponse).toBe(answer)
      expect(record.phases).toEqual([])
    }))

  it.effect("a streamed short-circuit uses the default chunk size (64 bytes) when none is configured", () =>
    Effect.gen(function*() {
      const answer = "é".repeat(100) // 200 bytes
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "p", beforePlanning: () => Effect.succeed({ shortCircuit: { response: answer } }) })]
      })
      const tokens = tokensOf(yield* collect(h.pipeline.stream({ request: "q" })))
      expect(tokens.map(utf8Bytes)).toEqual([64, 64, 64, 8])
      expect(tokens.join("")).toBe(answer)
    }))
})

describe("streaming: hook failures after the tokens were sent", () => {
  it.effect("C12: a failing AfterSynthesis hook on the stream keeps the previous string", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "a", afterSynthesis: (_c, t) => Effect.succeed(`${t} [a]`) }),
          Hook.make({ name: "broken", afterSynthesis: () => Effect.fail(new Error("guard offline")) }),
          Hook.make({ name: "c", afterSynthesis: (_c, t) => Effect.succeed(`${t} [c]`) })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "draft", chunks: ["dr", "aft"] }
      })
      const events = yield* collect(h.pipeline.stream({ request: "q", requestId: "s-fail" }))
      expect(tokensOf(events).join("")).toBe("draft")
      expect(completedOf(events).map((r) => r.response)).toEqual(["draft [a] [c]"])
      const record = yield* h.record("s-fail")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.finalResponse).toBe("draft [a] [c]")
      const broken = record.hookInvocations.find((i) => i.name === "broken")
      expect(broken?.outcome).toBe("failed")
      expect(broken?.error).toBe("guard offline")
      expect(broken?.decision).toEqual({ policy: "fail_open", action: "continue", reason: "hook_error" })
    }))

  it.effect("C13 (streaming): a panicking AfterSynthesis hook fails the stream with the defect after the tokens were emitted; the failed record keeps the raw draft and has no final response", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "boom", afterSynthesis: () => Effect.die(new Error("kaboom")) })],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "sent already", chunks: ["sent", " already"] }
      })
      const received: Array<StreamEvent> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(
          h.pipeline.stream({ request: "q", requestId: "s-panic" }),
          (e) => Effect.sync(() => received.push(e))
        )
      )
      // The tokens reached the consumer before the failure.
      expect(received.map((e) => e._tag)).toEqual(["Token", "Token"])
      expect(tokensOf(received).join("")).toBe("sent already")
      // The original defect propagates (not converted to a typed error).
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit)) return
      expect(Cause.isDie(exit.cause)).toBe(true)
      expect(Option.isNone(Cause.failureOption(exit.cause))).toBe(true)
      const defect = Cause.dieOption(exit.cause)
      expect(Option.isSome(defect) && defect.value instanceof Error && defect.value.message).toBe("kaboom")

      const record = yield* h.record("s-panic")
      expect(record.lifecycle?.status).toBe("failed")
      expect(record.lifecycle?.errorTag).toBe("Defect")
      expect(record.lifecycle?.errorMessage).toContain("kaboom")
      expect(record.rawDraft).toBe("sent already")
      expect(record.finalResponse).toBeUndefined()
      expect(record.phases).toHaveLength(1)
      const boom = record.hookInvocations.find((i) => i.name === "boom")
      expect(boom?.decision).toEqual({ policy: "fail_open", action: "propagate_panic", reason: "panic" })
    }))
})

describe("streaming: exits", () => {
  it.effect("C16: a stream abandoned by its consumer after the first token finalizes the record (never left running)", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [tracer("t", calls)],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "one two three", chunks: ["one", " two", " three"] }
      })
      const events = yield* collect(h.pipeline.stream({ request: "q", requestId: "s-take" }).pipe(Stream.take(1)))
      expect(events.map((e) => e._tag)).toEqual(["Token"])
      const record = yield* h.record("s-take")
      expect(record.lifecycle?.status).not.toBe("running")
      expect(record.lifecycle?.endedAt).toBeTypeOf("number")
      // The request never reached AfterSynthesis: nothing claims a final response.
      expect(calls).not.toContain("after_synthesis:t")
      expect(record.finalResponse).toBeUndefined()
      // Earlier evidence is kept.
      expect(record.phases).toHaveLength(1)
      expect(record.hookInvocations.map((i) => i.stage)).toEqual([
        "before_planning",
        "after_planning",
        "after_execution"
      ])
    }))

  it.effect("C16: a stream abandoned before Completed is recorded as interrupted, not succeeded", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: { plans: [plan([quoteStep("s1")])], synthesis: "one two three", chunks: ["one", " two", " three"] }
      })
      yield* collect(h.pipeline.stream({ request: "q", requestId: "s-take2" }).pipe(Stream.take(1)))
      const record = yield* h.record("s-take2")
      // A "succeeded" record without a final response (AfterSynthesis never ran)
      // would misreport a partial delivery as a completed request.
      expect(record.lifecycle?.status).toBe("interrupted")
      // What the consumer received is kept.
      expect(record.deliveredText).toBe("one")
    }))

  it.effect("C16: a stream whose consuming fiber is interrupted mid-synthesis is recorded as interrupted", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: { plans: [plan([quoteStep("s1")])], synthesis: "ab", chunks: ["a", "b"] }
      })
      const exit = yield* Effect.exit(
        Stream.runForEach(
          h.pipeline.stream({ request: "q", requestId: "s-int" }),
          (e) => e._tag === "Token" ? Effect.interrupt : Effect.void
        )
      )
      expect(Exit.isInterrupted(exit)).toBe(true)
      const record = yield* h.record("s-int")
      expect(record.lifecycle?.status).toBe("interrupted")
      expect(record.finalResponse).toBeUndefined()
    }))

  it.effect("HITL: a suspension on the stream emits a single Suspended event and records the checkpoint", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [tracer("t", calls)],
        approval: { evaluate: () => Effect.succeed(Approval.suspend("trades need a human")) },
        script: { plans: [plan([quoteStep("s1")])], synthesis: "never streamed" }
      })
      const events = yield* collect(h.pipeline.stream({ request: "q", requestId: "s-hitl" }))
      expect(events.map((e) => e._tag)).toEqual(["Suspended"])
      const suspended = events[0]
      if (suspended?._tag !== "Suspended") return expect.unreachable()
      expect(suspended.requestId).toBe("s-hitl")
      expect(suspended.checkpoint.reason).toBe("trades need a human")
      expect(suspended.checkpoint.plan.steps.map((s) => s.step_id)).toEqual(["s1"])
      // Nothing was executed or synthesized.
      expect(h.prompts.map((p) => p.kind)).toEqual(["plan"])
      expect(calls).toEqual(["before_planning:t", "after_planning:t"])
      const record = yield* h.record("s-hitl")
      expect(record.lifecycle?.status).toBe("suspended")
      expect(record.checkpointId).toBe(suspended.checkpoint.checkpointId)
      expect(record.phases).toEqual([])
      expect(Option.isSome(yield* Effect.orDie(h.checkpoints.get(suspended.checkpoint.checkpointId)))).toBe(true)
    }))

  it.effect("a streamed request whose planning fails ends the stream with the typed error and a failed record", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ script: { plans: ["not json"], synthesis: "x" } })
      const error = yield* Effect.flip(collect(h.pipeline.stream({ request: "q", requestId: "s-planfail" })))
      expect(error._tag).toBe("PlanningError")
      const record = yield* h.record("s-planfail")
      expect(record.lifecycle?.status).toBe("failed")
      expect(record.lifecycle?.errorTag).toBe("PlanningError")
    }))
})
