/**
 * What a caller may send, and what happens to everything else: typed input
 * at the call site, the one decode function for JSON from the wire
 * (unknown fields refused and named), size limits on the request text,
 * the metadata and the enrichments hooks build up, and validated options.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, Logger, Stream } from "effect"
import {
  Agent,
  type AgentResponse,
  Hook,
  PipelineContext,
  PipelineError,
  PipelineOptions,
  PipelineRequest,
  PromptBuilder
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { makeHarness, plan, quoteStep, untypedInput } from "../support/Harness.js"

const MiB = PipelineRequest.mebibyte

const completedText = (result: AgentResponse.PipelineResult): string | undefined =>
  result._tag === "Completed" ? result.response.response : undefined

/** Collects log lines (level and message) written while the effect runs. */
const capturingLogs = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
  )

describe("typed input", () => {
  it.effect("a misspelled field is a type error at the call site, and refused at run time by name", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
      // The typecheck (npm run typecheck covers test/) fails if this stops being an error.
      // @ts-expect-error requestID is not a field of a request
      const misspelled = h.pipeline.process({ request: "quote ACME", requestID: "r-1" })
      const error = yield* Effect.flip(misspelled)
      expect(error).toMatchObject({ _tag: "InvalidRequest", reason: "unexpected_field", path: "requestID" })
      expect(error.message).toBe(
        "invalid request at requestID: unknown field \"requestID\" (a request has \"request\", \"metadata\", \"requestId\")"
      )
      expect(h.prompts).toEqual([])
      expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
    }))

  it.effect("a constructed PipelineRequest and its plain-object form are both accepted", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: { plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")])], synthesis: "done" }
      })
      const constructed = new PipelineRequest.PipelineRequest({
        request: "quote ACME",
        requestId: PipelineContext.RequestId.make("a")
      })
      expect(completedText(yield* h.pipeline.process(constructed))).toBe("done")
      const plain: PipelineRequest.Input = { request: "quote ACME", requestId: "b", metadata: { tier: "gold" } }
      expect(completedText(yield* h.pipeline.process(plain))).toBe("done")
      expect((yield* h.record("b")).metadata).toEqual({ tier: "gold" })
    }))
})

describe("PipelineRequest.decode (JSON from the wire)", () => {
  it.effect("decodes a JSON body into a request with defaults", () =>
    Effect.gen(function*() {
      const request = yield* PipelineRequest.decode(JSON.parse("{\"request\":\"quote ACME\",\"requestId\":\"r-1\"}"))
      expect(request).toBeInstanceOf(PipelineRequest.PipelineRequest)
      expect(request).toMatchObject({ request: "quote ACME", requestId: "r-1", metadata: {} })
    }))

  it.effect("names every unknown field, with the first as the path", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        PipelineRequest.decode({ request: "quote", requestID: "r-1", meta: { a: 1 } })
      )
      expect(error.reason).toBe("unexpected_field")
      expect(error.path).toBe("requestID")
      expect(error.detail).toBe(
        "unknown fields \"requestID\", \"meta\" (a request has \"request\", \"metadata\", \"requestId\")"
      )
    }))

  it.effect("a malformed body gets the first failing path and a one-line detail; the full tree stays in issues", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        PipelineRequest.decode({ request: 7, metadata: { user: { tags: ["a", "b", () => 1] } } })
      )
      expect(error.reason).toBe("malformed")
      expect(error.path).toBe("request")
      expect(error.message).toBe("invalid request at request: Expected string, actual 7")
      expect(error.issues).toContain("metadata")
      expect(error.issues).toContain("request")
      const nested = yield* Effect.flip(
        PipelineRequest.decode({ request: "x", metadata: { user: { tags: ["a", () => 1] } } })
      )
      expect(nested.path).toBe("metadata.user.tags[1]")
      expect(nested.detail).toBe("a function is not a JSON value")
    }))

  it.effect("a huge offending value is not copied into the one-line detail", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(PipelineRequest.decode({ request: "x".repeat(100_000), requestId: 42 }))
      expect(error.path).toBe("requestId")
      expect(error.detail.length).toBeLessThanOrEqual(300)
    }))
})

describe("size limits", () => {
  it.effect("a 10 MB request → InvalidRequest too_large with the limit; nothing planned or recorded; a warning diagnostic", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const h = yield* makeHarness({ script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
      const huge = "quote ACME ".repeat(Math.ceil((10 * MiB) / 11))
      const error = yield* Effect.flip(
        h.pipeline.process({ request: huge, requestId: "huge" }).pipe(Effect.provide(capturingLogs(logs)))
      )
      expect(error).toMatchObject({ _tag: "InvalidRequest", reason: "too_large", path: "request", limit: MiB })
      expect(error.message).toBe(
        `invalid request at request: is ${huge.length} bytes, over the limit of ${MiB} bytes (PipelineOptions.maxRequestBytes)`
      )
      expect(h.prompts).toEqual([])
      expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
      expect(logs).toEqual([`WARN request refused: ${error.message}`])
    }))

  it.effect("the request limit counts UTF-8 bytes, and a request exactly at the limit is accepted", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" },
        options: { maxRequestBytes: 12 }
      })
      // "€" is 3 bytes: 4 of them are exactly 12 bytes, 5 are 15.
      expect(completedText(yield* h.pipeline.process({ request: "€€€€" }))).toBe("done")
      const error = yield* Effect.flip(h.pipeline.process({ request: "€€€€€" }))
      expect(error).toMatchObject({ reason: "too_large", path: "request", limit: 12 })
      expect(error.message).toContain("is 15 bytes")
    }))

  it.effect("oversized metadata → too_large at metadata; stream and workflow mode refuse it the same way", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: { plans: [], synthesis: "done" },
        options: { maxMetadataBytes: 64 }
      })
      const metadata = { notes: "n".repeat(100) }
      const buffered = yield* Effect.flip(h.pipeline.process({ request: "quote", metadata }))
      expect(buffered).toMatchObject({ reason: "too_large", path: "metadata", limit: 64 })
      // {"notes":"nnn…"} is 112 bytes: the copy stops measuring once past the limit.
      expect(buffered.message).toBe(
        "invalid request at metadata: is over the limit of 64 bytes (PipelineOptions.maxMetadataBytes)"
      )
      const streamed = yield* Effect.flip(Stream.runCollect(h.pipeline.stream({ request: "quote", metadata })))
      expect(streamed).toMatchObject({ reason: "too_large", path: "metadata" })
      const workflow = yield* Effect.flip(
        h.pipeline.executePlanWithSynthesis({ request: "quote", metadata }, plan([quoteStep("s1")]))
      )
      expect(workflow).toMatchObject({ reason: "too_large", path: "metadata" })
      expect(h.prompts).toEqual([])
      expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
    }))

  it.effect("PipelineRequest.decode applies the limits it is given (the defaults when none)", () =>
    Effect.gen(function*() {
      const body = { request: "x".repeat(2 * MiB) }
      expect((yield* Effect.flip(PipelineRequest.decode(body))).limit).toBe(MiB)
      const raised = yield* PipelineRequest.decode(body, { maxRequestBytes: 4 * MiB, maxMetadataBytes: MiB })
      expect(raised.request.length).toBe(2 * MiB)
    }))
})

describe("the enrichment limit", () => {
  const sized = (name: string, key: string, bytes: number) =>
    Hook.make({ name, beforePlanning: () => Effect.succeed({ enrichments: { [key]: "e".repeat(bytes) } }) })

  it.effect("C4/C14: a hook whose enrichments would exceed maxEnrichmentBytes fails open; earlier enrichments stay", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          sized("small", "rag_context", 100),
          sized("huge", "user_profile", 2 * MiB),
          sized("after", "extra", 10)
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "enrich" })
      expect(completedText(result)).toBe("done")
      const record = yield* h.record("enrich")
      const [small, huge, after] = record.hookInvocations
      expect(small).toMatchObject({ name: "small", outcome: "succeeded" })
      expect(huge).toMatchObject({
        name: "huge",
        outcome: "failed",
        decision: { policy: "fail_open", action: "continue", reason: "hook_error" }
      })
      // One value over the whole limit is refused while it is copied (the copy stops there).
      expect(huge?.error).toBe(
        `enrichment user_profile alone is over the limit of ${MiB} bytes (PipelineOptions.maxEnrichmentBytes); the hook's changes were dropped`
      )
      expect(huge?.effects).toEqual([])
      expect(after).toMatchObject({ name: "after", outcome: "succeeded" })
      const prompt = h.prompts.find((p) => p.kind === "plan")!.prompt
      expect(PromptBuilder.readSection(prompt, "agent_memory")).toBe("e".repeat(100))
      expect(prompt).not.toContain("e".repeat(1000))
    }))

  it.effect("removing an enrichment makes room: the limit is on the total after the hook's changes", () =>
    Effect.gen(function*() {
      const swap = Hook.make({
        name: "swap",
        beforePlanning: () =>
          Effect.succeed({ enrichments: { rag_context: "s".repeat(600) }, remove: ["user_profile"] })
      })
      const h = yield* makeHarness({
        hooks: [sized("first", "user_profile", 600), swap],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" },
        options: { maxEnrichmentBytes: 1000 }
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "swap" })
      const record = yield* h.record("swap")
      expect(record.hookInvocations.map((i) => [i.name, i.outcome])).toEqual([["first", "succeeded"], [
        "swap",
        "succeeded"
      ]])
      const prompt = h.prompts.find((p) => p.kind === "plan")!.prompt
      expect(PromptBuilder.readSection(prompt, "agent_memory")).toBe("s".repeat(600))
      expect(prompt).not.toContain("e".repeat(600))
    }))
})

describe("pipeline options are validated", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["a zero concurrency", { concurrency: 0 }, "concurrency", "must be an integer from 1 to 1024"],
    ["a fractional maxPhases", { maxPhases: 1.5 }, "maxPhases", "Expected an integer, actual 1.5"],
    [
      "a chunk size below 4 bytes",
      { shortCircuitChunkBytes: 2 },
      "shortCircuitChunkBytes",
      "must be an integer from 4 to 1048576"
    ],
    ["a negative request limit", { maxRequestBytes: -1 }, "maxRequestBytes", "must be an integer from 1 to 1073741824"],
    ["recording as a string", { recording: "yes" }, "recording", "Expected boolean, actual \"yes\""],
    ...[0, -1, "soon", "Infinity", Infinity].map((lease) =>
      [
        `a checkpoint claim lease of ${JSON.stringify(String(lease))}`,
        { checkpointClaimLease: lease },
        "checkpointClaimLease",
        "must be a duration above zero and at most 24 hours (a Duration, milliseconds, or a string like \"5 minutes\")"
      ] as const
    ),
    ...["999 millis", 0, "Infinity", "later"].map((lease) =>
      [
        `a record lease of ${JSON.stringify(String(lease))}`,
        { recordLease: lease },
        "recordLease",
        "must be a duration from 1 second to 24 hours (a Duration, milliseconds, or a string like \"5 minutes\")"
      ] as const
    ),
    [
      "an unknown option",
      { maxPhase: 2 },
      "maxPhase",
      "unknown option (options are maxPhases, concurrency, recording, shortCircuitChunkBytes, maxRequestBytes, maxMetadataBytes, maxEnrichmentBytes, maxToolResultBytes, maxModelOutputBytes, maxRecordBytes, recordLease, checkpointClaimLease, modelTimeout, modelRetries, modelRetryDelay, modelMaxRetryDelay, planReasks, toolTimeout, modelCalls, hookTimeout, hookGracePeriod)"
    ]
  ]
  for (const [label, options, option, detail] of cases) {
    it.effect(`${label} fails the agent Layer with InvalidPipelineOptions`, () =>
      Effect.gen(function*() {
        const built = yield* Effect.either(
          Layer.build(Agent.layerOffline({ tools: allTools, options: options as PipelineOptions.PipelineOptions }))
        )
        expect(Either.isLeft(built)).toBe(true)
        if (Either.isRight(built)) return
        expect(built.left).toBeInstanceOf(PipelineError.InvalidPipelineOptions)
        expect(built.left).toMatchObject({ option, detail })
      }).pipe(Effect.scoped))
  }

  it("resolve fills in every default", () => {
    expect(PipelineOptions.resolve(undefined)).toEqual(Either.right(PipelineOptions.defaults))
    expect(PipelineOptions.resolve({ concurrency: 8 })).toEqual(
      Either.right({ ...PipelineOptions.defaults, concurrency: 8 })
    )
    expect(PipelineOptions.defaults).toEqual({
      maxPhases: 3,
      concurrency: 4,
      recording: true,
      shortCircuitChunkBytes: 64,
      maxRequestBytes: MiB,
      maxMetadataBytes: MiB,
      maxEnrichmentBytes: MiB,
      maxToolResultBytes: MiB,
      maxModelOutputBytes: MiB,
      maxRecordBytes: 16 * MiB,
      recordLease: Duration.seconds(30),
      checkpointClaimLease: Duration.minutes(5),
      modelTimeout: Duration.seconds(60),
      modelRetries: 2,
      modelRetryDelay: Duration.millis(500),
      modelMaxRetryDelay: Duration.seconds(30),
      planReasks: 1,
      toolTimeout: Duration.seconds(30),
      modelCalls: "full",
      hookTimeout: Duration.seconds(30),
      hookGracePeriod: Duration.seconds(1)
    })
  })

  it("a checkpoint claim lease is decoded once: a string, milliseconds or a Duration", () => {
    const leaseOf = (lease: Duration.DurationInput) =>
      Either.map(
        PipelineOptions.resolve({ checkpointClaimLease: lease }),
        (r) => Duration.toMillis(r.checkpointClaimLease)
      )
    expect(leaseOf("15 minutes")).toEqual(Either.right(900_000))
    expect(leaseOf(1_500)).toEqual(Either.right(1_500))
    expect(leaseOf(Duration.seconds(30))).toEqual(Either.right(30_000))
  })

  it.effect("an untyped caller's options go through the same check", () =>
    Effect.gen(function*() {
      const built = yield* Effect.either(
        Layer.build(Agent.layerOffline({ tools: allTools, options: untypedOptions({ concurrency: "4" }) }))
      )
      expect(Either.isLeft(built) && built.left._tag).toBe("InvalidPipelineOptions")
    }).pipe(Effect.scoped))

  it.effect("process still decodes what an untyped caller passes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ script: { plans: [], synthesis: "done" } })
      const error = yield* Effect.flip(h.pipeline.process(untypedInput({ request: "q", extra: true })))
      expect(error).toMatchObject({ reason: "unexpected_field", path: "extra" })
    }))
})

/** Options as a JavaScript caller could pass them. */
const untypedOptions = (options: unknown): PipelineOptions.PipelineOptions => options as PipelineOptions.PipelineOptions
