/**
 * Class 5 of issue 17 — "unbounded sizes" — pinned for what enters the
 * pipeline: tool results (`maxToolResultBytes`), request metadata and hook
 * enrichments are measured while they are copied, and the copy stops as
 * soon as a value passes its limit — so a value that shares one sub-object
 * a trillion times costs at most the limit's worth of work. And every
 * pipeline option has an upper bound.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, FastCheck as fc, Layer, Schema } from "effect"
import {
  type AgentResponse,
  Hook,
  Json,
  PipelineOptions,
  PipelineRequest,
  PlanValidation,
  ToolCalls,
  ToolRegistry
} from "effect-agent-pipeline"
import { stockQuote } from "../../examples/shared/DemoTools.js"
import { makeHarness, NAMESPACE, plan, quoteStep } from "../support/Harness.js"
import { HookRuntime, PipelineHooks } from "../support/Internal.js"
import { jsonArbitrary } from "../support/JsonArbitrary.js"

const MiB = PipelineRequest.mebibyte

const Blob = Tool.make("blob", {
  description: "Returns what the test gives it",
  parameters: { size: Schema.Number },
  success: Schema.Unknown
})

const blobTool = (produce: (size: number) => unknown): ToolRegistry.ToolEntry<never> =>
  ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "blob-service",
    tool: Blob,
    handler: ({ size }) => Effect.sync(() => produce(size))
  })

const blobStep = (stepId: string, size: number) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "blob-service",
  capability: "blob",
  parameters: { size }
})

/** A string whose JSON text (with its quotes) is exactly `bytes` long. */
const jsonTextOf = (bytes: number): string => "x".repeat(bytes - 2)

/**
 * `[v, v]` nested `levels` deep over one leaf: 2^levels leaves in JSON, a
 * few dozen objects in memory (a "billion laughs" value).
 */
const sharedBomb = (levels: number, leaf: unknown = "x"): unknown => {
  let value: unknown = leaf
  for (let i = 0; i < levels; i++) value = [value, value]
  return value
}

const completed = (result: AgentResponse.PipelineResult): AgentResponse.AgentResponse => {
  if (result._tag !== "Completed") throw new Error(`expected Completed, got ${result._tag}`)
  return result.response
}

const TOO_LARGE = (limit: number) =>
  `invalid_result: result too large: its JSON text is over the limit of ${limit} bytes (PipelineOptions.maxToolResultBytes); it was not kept`

const callEntry = (value: unknown, maxResultBytes?: number) =>
  Effect.runSync(Effect.either(
    blobTool(() => value).call({ size: 0 }, maxResultBytes === undefined ? undefined : { maxResultBytes })
  ))

describe("unbounded sizes: tool results (maxToolResultBytes)", () => {
  it.effect("unbounded sizes: a 1.5 MiB tool result fails only its step with invalid_result (too large) under the 1 MiB default; the record does not keep it; the request completes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [stockQuote, blobTool((size) => ({ data: "d".repeat(size) }))],
        script: { plans: [plan([blobStep("big", 1.5 * MiB), quoteStep("q1")])], synthesis: "done" }
      })
      const response = completed(yield* h.pipeline.process({ request: "q", requestId: "big-result" }))
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status, s.error])).toEqual([
        ["big", "failed", TOO_LARGE(MiB)],
        ["q1", "succeeded", undefined]
      ])
      const record = yield* h.record("big-result")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.phases[0]!.steps[0]!.output).toBeUndefined()
      // The oversized output is nowhere in the record.
      expect(JSON.stringify(record).length).toBeLessThan(64 * 1024)
    }))

  it.effect("unbounded sizes: a tool result just under the 1 MiB default is kept whole", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [blobTool((size) => jsonTextOf(size))],
        script: { plans: [plan([blobStep("at", MiB)])], synthesis: "done" }
      })
      const response = completed(yield* h.pipeline.process({ request: "q", requestId: "at-limit" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("succeeded")
      expect((response.phases[0]!.steps[0]!.output as string).length).toBe(MiB - 2)
    }))

  it("unbounded sizes: a result of exactly maxResultBytes of JSON is kept; one byte more is refused (the registry's boundary)", () => {
    expect(Either.isRight(callEntry(jsonTextOf(1024), 1024))).toBe(true)
    const over = callEntry(jsonTextOf(1025), 1024)
    expect(Either.isLeft(over) && over.left.message).toBe(TOO_LARGE(1024))
    // Multi-byte text is measured in UTF-8 bytes: 341 × "€" + quotes = 1025 bytes.
    expect(Either.isLeft(callEntry("€".repeat(341), 1024))).toBe(true)
    expect(Either.isRight(callEntry("€".repeat(340), 1024))).toBe(true)
  })

  it("unbounded sizes: a result is refused exactly when its JSON text (Json.encodedSize) is over the limit (property, 500 runs)", () => {
    fc.assert(
      fc.property(jsonArbitrary(6), fc.integer({ min: 1, max: 400 }), (value, limit) => {
        const result = callEntry(value, limit)
        const size = Json.encodedSize(value)
        expect(Either.isRight(result)).toBe(size <= limit)
        if (Either.isLeft(result)) expect(result.left.message).toBe(TOO_LARGE(limit))
      }),
      { numRuns: 500 }
    )
  })

  it("unbounded sizes: a result sharing one sub-object 2^40 times is refused as too large after at most the limit's worth of work", () => {
    const refused = callEntry(sharedBomb(40), 64 * 1024)
    expect(Either.isLeft(refused) && refused.left.message).toBe(TOO_LARGE(64 * 1024))
  })

  it.effect("unbounded sizes: the tool caller the pipeline builds (ToolCalls.make) applies the limit it is given to every registry's results", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(PipelineHooks.layer([]))
      const { operations } = Context.get(context, HookRuntime.HookRuntime)
      const registry = yield* ToolRegistry.make([blobTool((size) => jsonTextOf(size))])
      const call = ToolCalls.make(registry, operations, Duration.seconds(5), 2048)
      const request = (size: number) => ({
        namespace: NAMESPACE,
        agent: "blob-service",
        capability: "blob",
        parameters: { size },
        coordinates: { requestId: "tc" }
      })
      expect(yield* call(request(2048))).toMatchObject({ status: "succeeded" })
      expect(yield* call(request(2049))).toEqual({ status: "failed", error: TOO_LARGE(2048) })
    }).pipe(Effect.scoped))
})

describe("unbounded sizes: values are measured while copied (Json.snapshot)", () => {
  it("unbounded sizes: the size Json.snapshot measures is Json.encodedSize, and it refuses exactly past maxBytes (property, 1000 runs)", () => {
    fc.assert(
      fc.property(jsonArbitrary(6), fc.integer({ min: 1, max: 300 }), (value, maxBytes) => {
        const size = Json.encodedSize(value)
        const unbounded = Json.snapshot(value, { maxBytes: Number.MAX_SAFE_INTEGER })
        expect(Either.isRight(unbounded) && unbounded.right.bytes).toBe(size)
        expect(Either.isRight(unbounded) && unbounded.right.value).toStrictEqual(value)
        const bounded = Json.snapshot(value, { maxBytes })
        expect(Either.isRight(bounded)).toBe(size <= maxBytes)
        if (Either.isLeft(bounded)) expect(bounded.left.kind).toBe("too_large")
      }),
      { numRuns: 1000 }
    )
  })

  it.effect("unbounded sizes: request metadata sharing one object 2^40 times is InvalidRequest too_large, refused after at most maxMetadataBytes of work", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(PipelineRequest.decode({ request: "q", metadata: { bomb: sharedBomb(40) } }))
      expect(error).toMatchObject({
        reason: "too_large",
        path: "metadata",
        limit: MiB,
        detail: `is over the limit of ${MiB} bytes (PipelineOptions.maxMetadataBytes)`
      })
    }))

  it.effect("unbounded sizes: an enrichment sharing one object 2^40 times fails that hook open (over maxEnrichmentBytes); the request completes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "bomb",
            beforePlanning: () => Effect.succeed({ enrichments: { rag_context: sharedBomb(40) as Json.Json } })
          })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      expect(completed(yield* h.pipeline.process({ request: "q", requestId: "enrich-bomb" })).response).toBe("done")
      const run = (yield* h.record("enrich-bomb")).hookInvocations[0]!
      expect(run).toMatchObject({
        outcome: "failed",
        decision: { policy: "fail_open", action: "continue", reason: "hook_error" }
      })
      expect(run.error).toBe(
        `enrichment rag_context alone is over the limit of ${MiB} bytes (PipelineOptions.maxEnrichmentBytes); the hook's changes were dropped`
      )
    }))

  it("unbounded sizes: a plan given as a value that shares one step's parameters 2^40 times is refused past maxPlanBytes (16 MiB)", () => {
    const params = { blob: sharedBomb(40, "y".repeat(1000)) as Json.Json }
    const refused = PlanValidation.validate(
      { steps: [{ ...quoteStep("s1"), parameters: params }] },
      { hasTool: () => true, priorStepIds: new Set() }
    )
    expect(PlanValidation.maxPlanBytes).toBe(16 * MiB)
    expect(Either.isLeft(refused) && refused.left.message).toBe(
      `invalid plan (decode): the plan is over ${16 * MiB} bytes of JSON`
    )
  })
})

describe("unbounded sizes: every pipeline option has an upper bound", () => {
  const detailOf = (options: unknown) => {
    const resolved = PipelineOptions.resolve(options as PipelineOptions.PipelineOptions)
    return Either.isLeft(resolved) ? [resolved.left.option, resolved.left.detail] : undefined
  }

  it("unbounded sizes: modelRetries: 1e6 (once accepted) fails with InvalidPipelineOptions naming the range", () => {
    expect(detailOf({ modelRetries: 1e6 })).toEqual(["modelRetries", "must be an integer from 0 to 10"])
    expect(detailOf({ planReasks: 11 })).toEqual(["planReasks", "must be an integer from 0 to 10"])
  })

  for (const [option, { max, min }] of Object.entries(PipelineOptions.integerBounds)) {
    it(`unbounded sizes: ${option} accepts ${min} and ${max}, and refuses ${min - 1} and ${max + 1}`, () => {
      const range = `must be an integer from ${min} to ${max}`
      expect(detailOf({ [option]: max })).toBeUndefined()
      expect(detailOf({ [option]: min })).toBeUndefined()
      expect(detailOf({ [option]: max + 1 })).toEqual([option, range])
      expect(detailOf({ [option]: min - 1 })).toEqual([option, range])
      expect(detailOf({ [option]: Number.POSITIVE_INFINITY })?.[0]).toBe(option)
    })
  }

  for (const [option, range] of Object.entries(PipelineOptions.durationBounds)) {
    it(`unbounded sizes: ${option} accepts ${Duration.format(range.max)} and refuses one millisecond more (and a non-finite duration)`, () => {
      expect(detailOf({ [option]: range.max })).toBeUndefined()
      const refused = detailOf({ [option]: Duration.sum(range.max, Duration.millis(1)) })
      expect(refused?.[0]).toBe(option)
      expect(refused?.[1]).toBe(
        `must be a duration ${range.text} (a Duration, milliseconds, or a string like "5 minutes")`
      )
      expect(detailOf({ [option]: "Infinity" })?.[0]).toBe(option)
      expect(
        detailOf({ [option]: range.inclusive ? Duration.subtract(range.min, Duration.millis(1)) : range.min })?.[0]
      ).toBe(option)
    })
  }

  it("unbounded sizes: the byte limits default to 1 MiB (16 MiB for the record) and maxModelOutputBytes becomes the model policy's maxOutputBytes", () => {
    expect(PipelineOptions.defaults).toMatchObject({
      maxToolResultBytes: MiB,
      maxModelOutputBytes: MiB,
      maxRecordBytes: 16 * MiB
    })
    const resolved = PipelineOptions.resolve({ maxModelOutputBytes: 4096 })
    expect(Either.isRight(resolved) && PipelineOptions.modelPolicy(resolved.right).maxOutputBytes).toBe(4096)
    expect(PipelineOptions.modelPolicy(PipelineOptions.defaults).maxOutputBytes).toBe(MiB)
  })
})
