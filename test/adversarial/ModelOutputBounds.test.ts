/**
 * Issue 17, class 5 (and 4) — "unbounded sizes" of a model's output: a
 * 50 MB draft once gave a 150 MB record (the call's output, the raw draft
 * and the final response). Now a model call's text is bounded by the
 * model policy's `maxOutputBytes` (default 1 MiB, UTF-8 bytes):
 *
 * - a buffered answer over it fails the call — `PlanningError` /
 *   `SynthesisError` with reason `output_too_large`, not retried, not
 *   re-asked — and the record keeps the output cut at the limit, marked as
 *   truncated;
 * - a stream stops at the limit (the delta that crosses it is cut, never
 *   inside a character; what was sent stays sent) and fails the same way.
 *
 * End to end through `Agent.layer` at the default limit, and through the
 * inference seam at a small one (the policy value is what counts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Stream } from "effect"
import {
  Agent,
  type AgentResponse,
  type ExecutionRecord,
  ExecutionStore,
  Inference,
  ModelPolicy,
  Pipeline,
  type PipelineError,
  RequestScope
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import * as Flaky from "../support/FlakyModel.js"
import { plan } from "../support/Harness.js"
import { HookRuntime, PipelineHooks, RequestRecorder } from "../support/Internal.js"

const MiB = 1_048_576
const NO_STEPS = JSON.stringify(plan([]))
const bytes = (text: string) => Buffer.byteLength(text, "utf8")

const agent = (replies: ReadonlyArray<Flaky.Reply>, options: Pipeline.PipelineOptions = {}) =>
  Effect.gen(function*() {
    const model = Flaky.make(replies)
    const context = yield* Layer.build(Agent.layer({ model: model.layer, tools: allTools, options }))
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    return {
      model,
      pipeline: Context.get(context, Pipeline.Pipeline),
      record: (requestId: string) =>
        Effect.map(Effect.orDie(store.get(requestId)), (r) =>
          Option.getOrThrowWith(r, () => new Error(`no record ${requestId}`)))
    }
  })

const failureOf = <A>(exit: Exit.Exit<A, PipelineError.PipelineError>): PipelineError.PipelineError => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  return Option.getOrThrowWith(
    Exit.causeOption(exit).pipe(
      Option.flatMap((cause) => (cause._tag === "Fail" ? Option.some(cause.error) : Option.none()))
    ),
    () => new Error("expected a typed failure")
  )
}

const completed = (result: AgentResponse.PipelineResult) => {
  if (result._tag !== "Completed") throw new Error(`expected Completed, got ${result._tag}`)
  return result.response
}

const callsOf = (record: ExecutionRecord.ExecutionRecord, purpose: "planning" | "synthesis") =>
  (record.modelCalls ?? []).filter((call) => call.purpose === purpose)

/** Whether a string has a lone surrogate (half a character). */
const hasLoneSurrogate = (text: string) =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)

describe("model output bounds: buffered answers (default limit, 1 MiB)", () => {
  it("model output bounds: the default limit is 1 MiB of UTF-8", () => {
    expect(ModelPolicy.defaults.maxOutputBytes).toBe(MiB)
  })

  it.scoped("model output bounds: a 50 MB synthesis draft fails with SynthesisError output_too_large; the record keeps 1 MiB of it, marked truncated", () =>
    Effect.gen(function*() {
      const draft = "The answer is long. ".repeat(2_500_000) // 50,000,000 bytes
      const a = yield* agent([Flaky.text(NO_STEPS), Flaky.text(draft)])
      const error = failureOf(yield* Effect.exit(a.pipeline.process({ request: "q", requestId: "big-draft" })))
      expect(error).toMatchObject({ _tag: "SynthesisError", reason: "output_too_large" })
      expect(error.message).toContain(`${bytes(draft)} bytes, over the ${MiB}-byte limit (maxOutputBytes)`)
      // The typed error stays small: the output is not in it.
      expect(JSON.stringify(error).length).toBeLessThan(10_000)

      const record = yield* a.record("big-draft")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "SynthesisError" })
      const [call] = callsOf(record, "synthesis")
      expect(call).toMatchObject({ outcome: "failed", attempt: 1 })
      expect(call?.output).toBe(draft.slice(0, MiB))
      expect(call?.error).toContain("truncated")
      expect(record.rawDraft).toBeUndefined()
      expect(record.finalResponse).toBeUndefined()
      // Not retried: one synthesis call.
      expect(a.model.calls.filter((c) => c.kind === "text")).toHaveLength(1)
      // The whole record: the 1 MiB kept, its prompts and metadata — not 150 MB.
      expect(JSON.stringify(record).length).toBeLessThan(MiB + 64 * 1024)
    }))

  it.scoped("model output bounds: a 50 MB planning answer fails with PlanningError output_too_large, neither re-asked nor retried, its output not in the error", () =>
    Effect.gen(function*() {
      const answer = `{"steps":[],"reasoning":"${"x".repeat(50_000_000)}"}`
      const a = yield* agent([Flaky.text(answer)])
      const error = failureOf(yield* Effect.exit(a.pipeline.process({ request: "q", requestId: "big-plan" })))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "output_too_large", phase: 1 })
      expect(error._tag === "PlanningError" && error.output).toBeUndefined()
      expect(a.model.calls).toHaveLength(1)
      const record = yield* a.record("big-plan")
      const [call] = callsOf(record, "planning")
      expect(call?.output).toBe(answer.slice(0, MiB))
      expect(call?.error).toContain("truncated")
      expect(JSON.stringify(record).length).toBeLessThan(MiB + 64 * 1024)
    }))

  it.scoped("model output bounds: exactly 1 MiB of two-byte characters is answered; one byte more is output_too_large", () =>
    Effect.gen(function*() {
      const atLimit = "é".repeat(MiB / 2)
      expect(bytes(atLimit)).toBe(MiB)
      const ok = yield* agent([Flaky.text(NO_STEPS), Flaky.text(atLimit)])
      expect(completed(yield* ok.pipeline.process({ request: "q", requestId: "at-limit" })).response).toBe(atLimit)

      const over = yield* agent([Flaky.text(NO_STEPS), Flaky.text(`${atLimit}!`)])
      const error = failureOf(yield* Effect.exit(over.pipeline.process({ request: "q", requestId: "over-limit" })))
      expect(error).toMatchObject({ _tag: "SynthesisError", reason: "output_too_large" })
      const [call] = callsOf(yield* over.record("over-limit"), "synthesis")
      expect(call?.output).toBe(atLimit)
    }))
})

describe("model output bounds: the pipeline option", () => {
  it.scoped("model output bounds: maxModelOutputBytes sets the limit a request's model calls get", () =>
    Effect.gen(function*() {
      const a = yield* agent([Flaky.text(NO_STEPS), Flaky.text("x".repeat(101))], { maxModelOutputBytes: 100 })
      const error = failureOf(yield* Effect.exit(a.pipeline.process({ request: "q", requestId: "option-limit" })))
      expect(error).toMatchObject({ _tag: "SynthesisError", reason: "output_too_large" })
      expect(error.message).toContain("101 bytes, over the 100-byte limit")
      const [call] = callsOf(yield* a.record("option-limit"), "synthesis")
      expect(call?.output).toBe("x".repeat(100))
    }))
})

describe("model output bounds: streams (default limit, 1 MiB)", () => {
  const tokensOf = (stream: Stream.Stream<AgentResponse.StreamEvent, PipelineError.PipelineError>) =>
    Effect.gen(function*() {
      const tokens: Array<string> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(stream, (event) => Effect.sync(() => event._tag === "Token" && tokens.push(event.text)))
      )
      return { tokens, exit }
    })

  it.scoped("model output bounds: a stream stops at the limit — the crossing delta cut, what was sent stays sent — then SynthesisError output_too_large", () =>
    Effect.gen(function*() {
      const deltas = ["a".repeat(600_000), "b".repeat(600_000), "c".repeat(600_000)]
      const a = yield* agent([Flaky.text(NO_STEPS), Flaky.stream(deltas)])
      const { exit, tokens } = yield* tokensOf(a.pipeline.stream({ request: "q", requestId: "big-stream" }))
      expect(failureOf(exit)).toMatchObject({ _tag: "SynthesisError", reason: "output_too_large" })
      const delivered = tokens.join("")
      expect(bytes(delivered)).toBe(MiB)
      expect(delivered).toBe(deltas.join("").slice(0, MiB))
      expect(delivered).not.toContain("c")

      const record = yield* a.record("big-stream")
      expect(record.deliveredText).toBe(delivered)
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "SynthesisError" })
      const [call] = callsOf(record, "synthesis")
      expect(call).toMatchObject({ streamed: true, outcome: "failed", output: delivered })
      expect(call?.error).toContain("the stream was stopped at it")
      expect(call?.error).toContain("truncated")
    }))

  it.scoped("model output bounds: a stream's cut never splits a character: an emoji that does not fit is not sent at all", () =>
    Effect.gen(function*() {
      const head = "a".repeat(MiB - 2)
      const a = yield* agent([Flaky.text(NO_STEPS), Flaky.stream([head, "😀", "tail"])])
      const { exit, tokens } = yield* tokensOf(a.pipeline.stream({ request: "q", requestId: "emoji-stream" }))
      expect(failureOf(exit)).toMatchObject({ _tag: "SynthesisError", reason: "output_too_large" })
      const delivered = tokens.join("")
      expect(delivered).toBe(head)
      expect(hasLoneSurrogate(delivered)).toBe(false)
      const [call] = callsOf(yield* a.record("emoji-stream"), "synthesis")
      expect(call?.output).toBe(head)
    }))

  it.scoped("model output bounds: a stream of exactly the limit completes", () =>
    Effect.gen(function*() {
      const deltas = ["é".repeat(MiB / 4), "é".repeat(MiB / 4)]
      const a = yield* agent([Flaky.text(NO_STEPS), Flaky.stream(deltas)])
      const { exit, tokens } = yield* tokensOf(a.pipeline.stream({ request: "q", requestId: "stream-at-limit" }))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(tokens.join("")).toBe(deltas.join(""))
    }))
})

describe("model output bounds: the policy's value is what counts (inference seam, maxOutputBytes 16)", () => {
  const seam = (replies: ReadonlyArray<Flaky.Reply>) =>
    Effect.gen(function*() {
      const model = Flaky.make(replies)
      const context = yield* Layer.build(
        Inference.layerWith({ ...ModelPolicy.defaults, maxOutputBytes: 16 }).pipe(
          Layer.provideMerge(Layer.merge(model.layer, PipelineHooks.layer<never>([])))
        )
      )
      const recorder = RequestRecorder.make(() => Effect.void, {
        schemaVersion: 1,
        requestId: "seam",
        recordRevision: 0,
        mode: "pipeline",
        request: "q",
        metadata: {},
        phases: [],
        hookInvocations: [],
        diagnostics: []
      })
      const request: Inference.InferenceRequest = {
        prompt: "q",
        coordinates: { requestId: "seam", phase: 1 }
      }
      // The calls record on the request the fiber works for.
      yield* Effect.locallyScoped(RequestScope.currentRequest, {
        scope: yield* Effect.scope,
        requestId: "seam",
        recorder,
        operations: Context.get(context, HookRuntime.HookRuntime).operations
      })
      return { inference: Context.get(context, Inference.Inference), request, recorder }
    })

  it.scoped("model output bounds: 16 bytes answer; 17 bytes is SynthesisError output_too_large, the record's output cut at 16", () =>
    Effect.gen(function*() {
      const ok = yield* seam([Flaky.text("0123456789abcdef")])
      expect(yield* ok.inference.complete(ok.request)).toBe("0123456789abcdef")

      const over = yield* seam([Flaky.text("0123456789abcdefX")])
      const error = yield* Effect.flip(over.inference.complete(over.request))
      expect(error).toMatchObject({ _tag: "SynthesisError", reason: "output_too_large" })
      expect(error.message).toContain("17 bytes, over the 16-byte limit")
      expect(over.recorder.current().modelCalls?.[0]).toMatchObject({ outcome: "failed", output: "0123456789abcdef" })
    }))

  it.scoped("model output bounds: a plan over 16 bytes is PlanningError output_too_large; a three-byte character is never cut in half", () =>
    Effect.gen(function*() {
      const s = yield* seam([Flaky.text("{\"x\":\"abcdefghi€€\"}")])
      const error = yield* Effect.flip(s.inference.plan(s.request))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "output_too_large" })
      // 15 bytes of ASCII, then "€" (3 bytes) does not fit: the record keeps the 15.
      expect(s.recorder.current().modelCalls?.[0]?.output).toBe("{\"x\":\"abcdefghi")
    }))

  it.scoped("model output bounds: a stream at limit 16 delivers 16 bytes and stops", () =>
    Effect.gen(function*() {
      const s = yield* seam([Flaky.stream(["0123456789", "abcdefghij", "klm"])])
      const parts: Array<Inference.StreamPart> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(s.inference.stream(s.request), (part) => Effect.sync(() => parts.push(part)))
      )
      expect(Exit.isFailure(exit) && failureOf(exit)).toMatchObject({
        _tag: "SynthesisError",
        reason: "output_too_large"
      })
      expect(parts).toEqual([{ _tag: "Delta", text: "0123456789" }, { _tag: "Delta", text: "abcdef" }])
      expect(s.recorder.current().modelCalls?.[0]).toMatchObject({ streamed: true, output: "0123456789abcdef" })
    }))
})
