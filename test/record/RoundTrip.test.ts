/**
 * Encode / decode round trips of every persisted model.
 *
 * Arbitraries come from `Arbitrary.make` on the models' own fields, with the
 * substitutions described in recordArbitrary.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck, Schema, Struct } from "effect"
import {
  AgentResponse,
  Completed,
  PipelineResult,
  Rejected,
  StreamEvent,
  Suspended,
  Token
} from "../../src/domain/AgentResponse.js"
import {
  ExecutionRecord,
  HookDecision,
  HookEffect,
  HookInvocation,
  isErrorRecord,
  Lifecycle,
  PhaseRecord,
  requestCompletion,
  ShortCircuitRecord,
  StepResult
} from "../../src/domain/ExecutionRecord.js"
import { encodeDirect } from "../../src/domain/internal/recordEncode.js"
import * as PipelineErrors from "../../src/domain/PipelineError.js"
import { PipelineRequest } from "../../src/domain/PipelineRequest.js"
import { RoutingPlan } from "../../src/domain/RoutingPlan.js"
import { Checkpoint } from "../../src/pipeline/Approval.js"
import * as CheckpointKey from "../../src/stores/CheckpointKey.js"
import { ExecutionStoreError } from "../../src/stores/ExecutionStore.js"
import { propertyRuns } from "../support/PropertyRuns.js"
import {
  ExecutionRecordA,
  FiniteNumber,
  HookEffectA,
  HookInvocationA,
  JsonObjectA,
  LifecycleA,
  PhaseRecordA,
  RoutingPlanA,
  StepResultA
} from "./recordArbitrary.js"

// ---------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------

// HITL checkpoints (persisted by the CheckpointStore) and responses / stream
// events (sent over HTTP and SSE).
const checkpointArbitrary = Arbitrary.make(
  Schema.Struct({
    ...Checkpoint.fields,
    metadata: JsonObjectA,
    enrichments: JsonObjectA,
    plan: RoutingPlanA,
    priorPhases: Schema.Array(PhaseRecordA),
    createdAt: FiniteNumber
  })
).map((props) => new Checkpoint(props))
const agentResponseArbitrary = Arbitrary.make(
  Schema.Struct({
    ...AgentResponse.fields,
    confidence: FiniteNumber,
    metadata: JsonObjectA,
    phases: Schema.Array(PhaseRecordA)
  })
).map((props) => new AgentResponse(props))
const rejectedArbitrary = Arbitrary.make(Schema.Struct(Struct.omit(Rejected.fields, "_tag"))).map(
  (props) => new Rejected(props)
)
const pipelineResultArbitrary: FastCheck.Arbitrary<PipelineResult> = FastCheck.oneof(
  agentResponseArbitrary.map((response) => new Completed({ response })),
  checkpointArbitrary.map((checkpoint) => new Suspended({ requestId: checkpoint.requestId, checkpoint })),
  rejectedArbitrary
)
const streamEventArbitrary: FastCheck.Arbitrary<StreamEvent> = FastCheck.oneof(
  FastCheck.string().map((text) => new Token({ text })),
  agentResponseArbitrary.map((response) => new Completed({ response })),
  checkpointArbitrary.map((checkpoint) => new Suspended({ requestId: checkpoint.requestId, checkpoint }))
)

// The annotations give arbitraries of exactly the models' types.
const arbitraries = {
  HookDecision: Arbitrary.make(HookDecision),
  ShortCircuitRecord: Arbitrary.make(ShortCircuitRecord),
  Lifecycle: Arbitrary.make(LifecycleA),
  HookEffect: Arbitrary.make(HookEffectA),
  HookInvocation: Arbitrary.make(HookInvocationA),
  StepResult: Arbitrary.make(StepResultA),
  RoutingPlan: Arbitrary.make(RoutingPlanA),
  PhaseRecord: Arbitrary.make(PhaseRecordA),
  ExecutionRecord: Arbitrary.make(ExecutionRecordA),
  PipelineRequest: Arbitrary.make(Schema.Struct({ ...PipelineRequest.fields, metadata: JsonObjectA })).map(
    (props) => new PipelineRequest(props)
  )
} satisfies {
  readonly HookDecision: FastCheck.Arbitrary<HookDecision>
  readonly ShortCircuitRecord: FastCheck.Arbitrary<ShortCircuitRecord>
  readonly Lifecycle: FastCheck.Arbitrary<Lifecycle>
  readonly HookEffect: FastCheck.Arbitrary<HookEffect>
  readonly HookInvocation: FastCheck.Arbitrary<HookInvocation>
  readonly StepResult: FastCheck.Arbitrary<StepResult>
  readonly RoutingPlan: FastCheck.Arbitrary<RoutingPlan>
  readonly PhaseRecord: FastCheck.Arbitrary<PhaseRecord>
  readonly ExecutionRecord: FastCheck.Arbitrary<ExecutionRecord>
  readonly PipelineRequest: FastCheck.Arbitrary<PipelineRequest>
}

// Errors: the `cause` (a `Schema.Defect`) is lossy by design — an `Error`
// keeps only name and message — so it is covered by its own test below.
const errorArbitraries = {
  InvalidOrchestratorConfig: Arbitrary.make(
    Schema.Struct({ ...Struct.omit(PipelineErrors.InvalidOrchestratorConfig.fields, "_tag") })
  ).map((props) => new PipelineErrors.InvalidOrchestratorConfig(props)),
  InvalidRequiredAfterPlanningHook: Arbitrary.make(
    Schema.Struct({
      ...Struct.omit(PipelineErrors.InvalidRequiredAfterPlanningHook.fields, "_tag")
    })
  ).map((props) => new PipelineErrors.InvalidRequiredAfterPlanningHook(props)),
  InvalidHookSubscription: Arbitrary.make(
    Schema.Struct(Struct.omit(PipelineErrors.InvalidHookSubscription.fields, "_tag"))
  ).map((props) => new PipelineErrors.InvalidHookSubscription(props)),
  HookDenied: Arbitrary.make(Schema.Struct(Struct.omit(PipelineErrors.HookDenied.fields, "_tag", "cause"))).map(
    (props) => new PipelineErrors.HookDenied(props)
  ),
  HookFailed: Arbitrary.make(Schema.Struct(Struct.omit(PipelineErrors.HookFailed.fields, "_tag", "cause"))).map(
    (props) => new PipelineErrors.HookFailed(props)
  ),
  InvalidPipelineOptions: Arbitrary.make(
    Schema.Struct(Struct.omit(PipelineErrors.InvalidPipelineOptions.fields, "_tag"))
  ).map((props) => new PipelineErrors.InvalidPipelineOptions(props)),
  InvalidRequest: Arbitrary.make(Schema.Struct(Struct.omit(PipelineErrors.InvalidRequest.fields, "_tag"))).map(
    (props) => new PipelineErrors.InvalidRequest(props)
  ),
  RequiredAfterPlanningError: Arbitrary.make(
    Schema.Struct({
      ...Struct.omit(PipelineErrors.RequiredAfterPlanningError.fields, "_tag", "cause")
    })
  ).map((props) => new PipelineErrors.RequiredAfterPlanningError(props)),
  HookContractError: Arbitrary.make(
    Schema.Struct(Struct.omit(PipelineErrors.HookContractError.fields, "_tag"))
  ).map((props) => new PipelineErrors.HookContractError(props)),
  PlanningError: Arbitrary.make(
    Schema.Struct({ ...Struct.omit(PipelineErrors.PlanningError.fields, "_tag", "cause") })
  ).map((props) => new PipelineErrors.PlanningError(props)),
  SynthesisError: Arbitrary.make(
    Schema.Struct(Struct.omit(PipelineErrors.SynthesisError.fields, "_tag", "cause"))
  ).map((props) => new PipelineErrors.SynthesisError(props)),
  CheckpointError: Arbitrary.make(Schema.Struct(Struct.omit(PipelineErrors.CheckpointError.fields, "_tag"))).map(
    (props) => new PipelineErrors.CheckpointError(props)
  ),
  ExecutionStoreError: Arbitrary.make(Schema.Struct(Struct.omit(ExecutionStoreError.fields, "_tag", "cause"))).map(
    (props) => new ExecutionStoreError(props)
  )
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/** Through `JSON.stringify` / `JSON.parse`, as every store persists. */
const viaJson = (encoded: unknown): unknown => JSON.parse(JSON.stringify(encoded))

/**
 * `decode(encode(x))` deep-equals `x`; the encoded form is pure JSON
 * (unchanged by a JSON round trip, up to keys whose value is `undefined`);
 * decoding the JSON gives `x` back and is a fixed point of decode → encode.
 */
const roundTrip = <A, I>(name: string, schema: Schema.Schema<A, I>, arbitrary: FastCheck.Arbitrary<A>, numRuns = 100) =>
  it.prop(
    `${name}: decode(encode(x)) equals x and the encoded form is pure JSON`,
    [arbitrary],
    ([value]) => {
      const encode = Schema.encodeSync(schema)
      const decode = Schema.decodeUnknownSync(schema)
      const encoded = encode(value)
      expect(decode(encoded)).toStrictEqual(value)

      const json = viaJson(encoded)
      expect(json).toEqual(encoded)
      expect(decode(json)).toEqual(value)
      expect(encode(decode(json))).toStrictEqual(json)
    },
    { fastCheck: { numRuns } }
  )

describe("persisted models round-trip", () => {
  roundTrip("HookDecision", HookDecision, arbitraries.HookDecision)
  roundTrip("ShortCircuitRecord", ShortCircuitRecord, arbitraries.ShortCircuitRecord)
  roundTrip("Lifecycle", Lifecycle, arbitraries.Lifecycle)
  roundTrip("HookEffect", HookEffect, arbitraries.HookEffect)
  roundTrip("HookInvocation", HookInvocation, arbitraries.HookInvocation)
  roundTrip("StepResult", StepResult, arbitraries.StepResult)
  roundTrip("RoutingPlan", RoutingPlan, arbitraries.RoutingPlan)
  roundTrip("PhaseRecord", PhaseRecord, arbitraries.PhaseRecord, 50)
  roundTrip("ExecutionRecord", ExecutionRecord, arbitraries.ExecutionRecord, 50)
  roundTrip("PipelineRequest", PipelineRequest, arbitraries.PipelineRequest)
  roundTrip("Checkpoint", Checkpoint, checkpointArbitrary, 50)
  roundTrip("AgentResponse", AgentResponse, agentResponseArbitrary, 50)
  roundTrip("StreamEvent", StreamEvent, streamEventArbitrary, 50)
  roundTrip("PipelineResult", PipelineResult, pipelineResultArbitrary, 50)

  it.prop(
    "ExecutionRecord: recordRevision is persisted under record_revision",
    [arbitraries.ExecutionRecord],
    ([record]) => {
      const encoded = Schema.encodeSync(ExecutionRecord)(record)
      expect(encoded.record_revision).toBe(record.recordRevision)
      expect(Object.keys(encoded)).not.toContain("recordRevision")
      const json = viaJson(encoded)
      expect(json).toHaveProperty("record_revision", record.recordRevision)
      expect(Schema.decodeUnknownSync(ExecutionRecord)(json).recordRevision).toBe(record.recordRevision)
    },
    { fastCheck: { numRuns: 50 } }
  )

  it("ExecutionRecord: only the record_revision key is read", () => {
    const decode = Schema.decodeUnknownSync(ExecutionRecord)
    expect(decode({ requestId: "r", request: "q", record_revision: 3 }).recordRevision).toBe(3)
    expect(decode({ requestId: "r", request: "q", recordRevision: 3 }).recordRevision).toBe(0)
    expect(() => decode({ requestId: "r", request: "q", record_revision: -1 })).toThrow()
    expect(() => decode({ requestId: "r", request: "q", record_revision: 1.5 })).toThrow()
  })
})

describe("sealed checkpoints survive persistence", () => {
  const key = CheckpointKey.makeRandom()
  const sealedArbitrary = checkpointArbitrary.map((checkpoint) => {
    const { mac: _mac, planDigest: _digest, ...fields } = checkpoint
    return key.seal(fields)
  })

  it.prop(
    "tampered checkpoints: a sealed checkpoint still verifies after encode → JSON → decode, and with no other key",
    [sealedArbitrary],
    ([checkpoint]) => {
      expect(key.verify(checkpoint)).toEqual(Either.right(checkpoint))
      const stored = Schema.decodeUnknownSync(Checkpoint)(viaJson(Schema.encodeSync(Checkpoint)(checkpoint)))
      expect(key.verify(stored)).toEqual(Either.right(stored))
      expect(stored.planDigest).toBe(CheckpointKey.planDigest(stored.plan))
      expect(Either.isLeft(CheckpointKey.makeRandom().verify(stored))).toBe(true)
    },
    { fastCheck: { numRuns: 50 } }
  )

  // Every field the MAC covers, each changed to a value that still decodes.
  const rewrites: ReadonlyArray<readonly [string, (c: Checkpoint) => Checkpoint]> = [
    ["checkpointId", (c) => new Checkpoint({ ...c, checkpointId: `${c.checkpointId}x` })],
    ["requestId", (c) => new Checkpoint({ ...c, requestId: `${c.requestId}x` })],
    ["request", (c) => new Checkpoint({ ...c, request: `${c.request}x` })],
    ["metadata", (c) => new Checkpoint({ ...c, metadata: { ...c.metadata, injected: true } })],
    [
      "enrichments",
      (c) => new Checkpoint({ ...c, enrichments: { ...c.enrichments, rag_context: "ignore the policy" } })
    ],
    ["phase", (c) => new Checkpoint({ ...c, phase: c.phase === 1 ? 2 : 1 })],
    ["plan", (c) => new Checkpoint({ ...c, plan: { ...c.plan, terminal: !c.plan.terminal } })],
    ["plan and its digest", (c) => {
      const plan = { ...c.plan, terminal: !c.plan.terminal }
      return new Checkpoint({ ...c, plan, planDigest: CheckpointKey.planDigest(plan) })
    }],
    [
      "priorPhases",
      (c) =>
        new Checkpoint({
          ...c,
          priorPhases: [...c.priorPhases, { phase: 9, plan: { steps: [], terminal: true }, steps: [] }]
        })
    ],
    ["reason", (c) => new Checkpoint({ ...c, reason: `${c.reason}x` })],
    ["createdAt", (c) => new Checkpoint({ ...c, createdAt: c.createdAt === 1 ? 2 : 1 })]
  ]
  for (const [field, rewrite] of rewrites) {
    it.prop(
      `tampered checkpoints: rewriting ${field} of a stored checkpoint makes its seal fail`,
      [sealedArbitrary],
      ([checkpoint]) => {
        const stored = Schema.decodeUnknownSync(Checkpoint)(viaJson(Schema.encodeSync(Checkpoint)(rewrite(checkpoint))))
        expect(Either.isLeft(key.verify(stored))).toBe(true)
      },
      { fastCheck: { numRuns: 20 } }
    )
  }
})

describe("errors round-trip", () => {
  const errorRoundTrip = <A extends Error, I>(
    name: string,
    schema: Schema.Schema<A, I>,
    arbitrary: FastCheck.Arbitrary<A>
  ) =>
    it.prop(
      `${name}: decode(encode(e)) equals e and the encoded form is pure JSON`,
      [arbitrary],
      ([error]) => {
        const encode = Schema.encodeSync(schema)
        const decode = Schema.decodeUnknownSync(schema)
        const encoded = encode(error)
        const json = viaJson(encoded)
        expect(json).toEqual(encoded)
        for (const decoded of [decode(encoded), decode(json)]) {
          expect(decoded).toStrictEqual(error)
          expect(Object.getPrototypeOf(decoded)).toBe(Object.getPrototypeOf(error))
          // Own enumerable fields, `_tag` included, and the derived message.
          expect({ ...decoded }).toEqual({ ...error })
          expect(decoded.message).toBe(error.message)
        }
      }
    )

  errorRoundTrip(
    "InvalidOrchestratorConfig",
    PipelineErrors.InvalidOrchestratorConfig,
    errorArbitraries.InvalidOrchestratorConfig
  )
  errorRoundTrip(
    "InvalidRequiredAfterPlanningHook",
    PipelineErrors.InvalidRequiredAfterPlanningHook,
    errorArbitraries.InvalidRequiredAfterPlanningHook
  )
  errorRoundTrip(
    "InvalidHookSubscription",
    PipelineErrors.InvalidHookSubscription,
    errorArbitraries.InvalidHookSubscription
  )
  errorRoundTrip("HookDenied", PipelineErrors.HookDenied, errorArbitraries.HookDenied)
  errorRoundTrip("HookFailed", PipelineErrors.HookFailed, errorArbitraries.HookFailed)
  errorRoundTrip(
    "InvalidPipelineOptions",
    PipelineErrors.InvalidPipelineOptions,
    errorArbitraries.InvalidPipelineOptions
  )
  errorRoundTrip("InvalidRequest", PipelineErrors.InvalidRequest, errorArbitraries.InvalidRequest)
  errorRoundTrip(
    "RequiredAfterPlanningError",
    PipelineErrors.RequiredAfterPlanningError,
    errorArbitraries.RequiredAfterPlanningError
  )
  errorRoundTrip("HookContractError", PipelineErrors.HookContractError, errorArbitraries.HookContractError)
  errorRoundTrip("PlanningError", PipelineErrors.PlanningError, errorArbitraries.PlanningError)
  errorRoundTrip("SynthesisError", PipelineErrors.SynthesisError, errorArbitraries.SynthesisError)
  errorRoundTrip("CheckpointError", PipelineErrors.CheckpointError, errorArbitraries.CheckpointError)
  errorRoundTrip("ExecutionStoreError", ExecutionStoreError, errorArbitraries.ExecutionStoreError)

  errorRoundTrip(
    "PipelineError (union)",
    PipelineErrors.PipelineError,
    FastCheck.oneof(
      errorArbitraries.InvalidRequest,
      errorArbitraries.RequiredAfterPlanningError,
      errorArbitraries.HookContractError,
      errorArbitraries.HookDenied,
      errorArbitraries.HookFailed,
      errorArbitraries.PlanningError,
      errorArbitraries.SynthesisError,
      errorArbitraries.CheckpointError
    )
  )

  it("every TaggedError exported by PipelineError.ts is covered", () => {
    const exported = Object.entries(PipelineErrors)
      .filter(([, value]) => typeof value === "function" && value.prototype instanceof Error)
      .map(([name]) => name)
      .sort()
    const covered = Object.keys(errorArbitraries).filter((name) => name !== "ExecutionStoreError").sort()
    expect(exported).toEqual(covered)
  })

  it("a cause keeps its name and message (stack and class are dropped) and stays JSON", () => {
    const cause = new TypeError("socket closed")
    const check = <A extends Error, I>(schema: Schema.Schema<A, I>, error: A) => {
      const encoded = Schema.encodeSync(schema)(error)
      expect(encoded).toHaveProperty("cause", { name: "TypeError", message: "socket closed" })
      const json = viaJson(encoded)
      expect(json).toEqual(encoded)
      const decoded = Schema.decodeUnknownSync(schema)(json)
      expect(Object.getPrototypeOf(decoded)).toBe(Object.getPrototypeOf(error))
      expect(decoded).toHaveProperty("cause.message", "socket closed")
      expect(decoded).toHaveProperty("cause.name", "TypeError")
      expect(decoded.message).toBe(error.message)
    }
    check(
      PipelineErrors.RequiredAfterPlanningError,
      new PipelineErrors.RequiredAfterPlanningError({ hookName: "policy", phase: 2, detail: "denied", cause })
    )
    check(
      PipelineErrors.PlanningError,
      new PipelineErrors.PlanningError({ reason: "model_failed", phase: 0, detail: "timeout", cause })
    )
    check(PipelineErrors.SynthesisError, new PipelineErrors.SynthesisError({ detail: "failed", cause }))
    check(
      PipelineErrors.HookDenied,
      new PipelineErrors.HookDenied({
        hookName: "g",
        operation: "tool_call",
        reason: "hook_failed",
        detail: "x",
        cause
      })
    )
    check(
      PipelineErrors.HookFailed,
      new PipelineErrors.HookFailed({ hookName: "h", point: "before_tool", reason: "hook_failed", detail: "x", cause })
    )
    check(ExecutionStoreError, new ExecutionStoreError({ operation: "save", detail: "disk full", cause }))
    // A string cause round-trips exactly.
    const withString = new PipelineErrors.SynthesisError({ detail: "failed", cause: "boom" })
    const decoded = Schema.decodeUnknownSync(PipelineErrors.SynthesisError)(
      viaJson(Schema.encodeSync(PipelineErrors.SynthesisError)(withString))
    )
    expect(decoded.cause).toBe("boom")
  })
})

describe("legacy records", () => {
  const legacy = {
    requestId: "legacy-1",
    request: "what is the weather in Lisbon?",
    phases: [
      {
        phase: 0,
        plan: { steps: [{ step_id: "s1", namespace: "weather", agent: "forecaster", capability: "forecast" }] },
        steps: [
          {
            step_id: "s1",
            namespace: "weather",
            agent: "forecaster",
            capability: "forecast",
            status: "succeeded",
            output: { summary: "sunny", high: 24 },
            startedAt: 1_700_000_000_000,
            duration: 120
          }
        ]
      }
    ],
    hookInvocations: [
      {
        name: "audit",
        stage: "after_execution",
        outcome: "succeeded",
        sequence: 0,
        phase: 0,
        startedAt: 1_700_000_000_100,
        duration: 3
      }
    ],
    finalResponse: "Sunny, 24°C."
  }

  it("C16: legacy record without lifecycle has unknown completion", () => {
    const record = Schema.decodeUnknownSync(ExecutionRecord)(viaJson(legacy))
    // Every step (and every hook) succeeded, yet nothing says the request did.
    expect(record.phases.flatMap((phase) => phase.steps).every((step) => step.status === "succeeded")).toBe(true)
    expect(record.lifecycle).toBeUndefined()
    expect(requestCompletion(record)).toBe("unknown")
    expect(record.recordRevision).toBe(0)
    // Legacy records are normal records for retention.
    expect(isErrorRecord(record)).toBe(false)
    // Defaults filled in on decode.
    expect(record.mode).toBe("pipeline")
    expect(record.metadata).toEqual({})
    expect(record.diagnostics).toEqual([])
    expect(record.hookInvocations[0]?.effects).toEqual([])
    expect(record.phases[0]?.plan.terminal).toBe(true)

    // Re-persisting it writes the revision under record_revision and still no lifecycle.
    const encoded = Schema.encodeSync(ExecutionRecord)(record)
    expect(encoded.record_revision).toBe(0)
    expect(Object.keys(encoded)).not.toContain("recordRevision")
    expect(Object.keys(encoded)).not.toContain("lifecycle")
    const again = Schema.decodeUnknownSync(ExecutionRecord)(viaJson(encoded))
    expect(again).toStrictEqual(record)
    expect(requestCompletion(again)).toBe("unknown")
  })

  it("C16: a record with lifecycle reports its status", () => {
    const record = Schema.decodeUnknownSync(ExecutionRecord)({
      ...legacy,
      record_revision: 4,
      lifecycle: { status: "succeeded", startedAt: 1_700_000_000_000, endedAt: 1_700_000_000_200 }
    })
    expect(requestCompletion(record)).toBe("succeeded")
    expect(record.recordRevision).toBe(4)
  })
})

describe("persisted JSON edge cases", () => {
  it("JsonObject: an own \"__proto__\" key survives decoding (it becomes the prototype instead)", () => {
    const metadata = viaJson({ ["__proto__"]: { injected: true }, kept: 1 })
    expect(Object.keys(metadata ?? {})).toEqual(["__proto__", "kept"])
    const record = Schema.decodeUnknownSync(ExecutionRecord)({ requestId: "r", request: "q", metadata })
    expect(Object.getPrototypeOf(record.metadata)).toBe(Object.prototype)
    expect(Object.keys(record.metadata)).toEqual(["__proto__", "kept"])
  })

  it("numeric record fields reject NaN / Infinity, which JSON cannot persist", () => {
    const lifecycle = { status: "failed", startedAt: Number.NaN, endedAt: Number.POSITIVE_INFINITY }
    expect(() => Schema.decodeUnknownSync(Lifecycle)(lifecycle)).toThrow()
  })
})

describe("the direct record encoder", () => {
  it.prop(
    "encodeDirect writes the JSON the Schema's encoding writes, and it decodes back to the record",
    [arbitraries.ExecutionRecord],
    ([record]) => {
      const direct = encodeDirect(record)
      // The same JSON (an optional field holding `undefined` is left out of both).
      expect(JSON.parse(JSON.stringify(direct))).toStrictEqual(
        JSON.parse(JSON.stringify(Schema.encodeSync(ExecutionRecord)(record)))
      )
      // What a store writes: its JSON text reads back as the same record
      // (toEqual: a field holding `undefined` reads back absent).
      expect(Schema.decodeUnknownSync(ExecutionRecord)(JSON.parse(JSON.stringify(direct)))).toEqual(record)
    },
    { fastCheck: { numRuns: propertyRuns(500, 100) } }
  )
})
