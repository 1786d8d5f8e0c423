/**
 * The stored body of a record (issue 20): format 2 (compact) round-trips
 * every record exactly, by the Schema's path (what the SQL stores read) and
 * by the memory store's trusted path alike; format 1 bodies (every earlier
 * version's) decode exactly as the record Schema decodes them; a body of a
 * newer format, or one whose references do not hold, is refused. And the
 * bound it exists for: the benchmark scenario's record at 16 hook units is
 * at most 6 KB of stored body.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Either, FastCheck, Option, Schema } from "effect"
import * as Scenario from "../../bench/peersScenario.js"
import { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"
import { bodyBytes, bodyText, decodeBody, encoded, StoredRecord } from "../../src/domain/internal/recordBody.js"
import { currentBodyFormat } from "../../src/domain/internal/recordCompact.js"
import { fromCompactTrusted } from "../../src/domain/internal/recordCompactDecode.js"
import { dictionary } from "../../src/domain/internal/recordDictionary.js"
import { encodeDirect } from "../../src/domain/internal/recordEncode.js"
import { Agent, ExecutionStore, Pipeline, ScriptedModel } from "../../src/index.js"
import { finiteNumber, jsonArbitrary } from "../support/JsonArbitrary.js"
import { ExecutionRecordA, HookInvocationA } from "./recordArbitrary.js"

// ---------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------

/**
 * Durations as a clock makes them: whole nanoseconds (a `TestClock`, or a
 * rounded reading), differences of two `performance.now()` readings (long
 * decimal fractions, short binary ones), and any finite number.
 */
const clockDuration = FastCheck.oneof(
  FastCheck.integer({ min: 0, max: 10_000_000_000 }).map((nanos) => nanos / 1e6),
  FastCheck.tuple(
    FastCheck.double({ min: 0, max: 1e8, noNaN: true }),
    FastCheck.double({ min: 0, max: 1e3, noNaN: true })
  ).map((
    [at, elapsed]
  ) => (at + elapsed) - at),
  finiteNumber
)
const ClockDuration = Schema.Number.annotations({ arbitrary: () => () => clockDuration })

const RecordA = Schema.Struct({
  ...ExecutionRecordA.fields,
  hookInvocations: Schema.Array(Schema.Struct({ ...HookInvocationA.fields, duration: ClockDuration }))
})

/** A text long enough to be written once. */
const longText = FastCheck.string({ minLength: 64, maxLength: 300 })

/**
 * Records whose texts repeat as a pipeline's do: an enrichment a hook
 * reported inside both prompts (once, twice, or with the prompt builder's
 * instructions before it), a draft that is also the last call's output.
 */
const records: FastCheck.Arbitrary<ExecutionRecord> = FastCheck.tuple(
  Arbitrary.make(RecordA),
  longText,
  FastCheck.string(),
  FastCheck.constantFrom("", ...dictionary)
).map(([record, text, filler, instructions]) => {
  const runs = record.hookInvocations
  if (runs.length === 0 || record.modelCalls === undefined || record.modelCalls.length === 0) return record
  const [first, ...rest] = runs
  const reporter = {
    ...first!,
    effects: [
      ...first!.effects,
      {
        effectId: "planning_enrichment:rag_context",
        schemaVersion: 1,
        name: "Planning enrichment rag_context",
        status: "succeeded" as const,
        data: { key: "rag_context", operation: "added", after: text },
        startedAt: 0
      }
    ]
  }
  const calls = record.modelCalls.map((call, i) => ({
    ...call,
    prompt: i % 2 === 0 ? `${instructions}${filler}${text}${filler}` : `${filler}${text}${text}${instructions}`
  }))
  const last = calls[calls.length - 1]!
  return {
    ...record,
    hookInvocations: [reporter, ...rest],
    modelCalls: calls,
    ...(last.output === undefined ? {} : { rawDraft: last.output })
  }
})

const viaJson = (text: string): unknown => JSON.parse(text)

const decodeFormat1 = Schema.decodeUnknownEither(ExecutionRecord)

// ---------------------------------------------------------------------------
// Format 2
// ---------------------------------------------------------------------------

describe("record body: format 2 (compact)", () => {
  it.prop(
    "record body: property — a record's body decodes back to the record, through the Schema and through the memory store's path",
    [records],
    ([record]) => {
      const text = bodyText(record)
      // Equal up to members set to `undefined` (JSON has no such thing), as every store's records are.
      expect(Either.getOrThrow(decodeBody(viaJson(text)))).toEqual(record)
      const { writer: _writer, ...unstamped } = record
      const trusted = fromCompactTrusted(JSON.parse(encoded(record).text))
      expect(trusted).toEqual(unstamped)
      // The trusted path gives what the Schema's does, member for member.
      const { writer: _w, ...viaSchema } = Either.getOrThrow(decodeBody(viaJson(text)))
      expect(trusted).toStrictEqual(viaSchema)
      expect(bodyBytes(record)).toBe(Buffer.byteLength(text, "utf8"))
      expect(JSON.parse(text)).toHaveProperty("v", currentBodyFormat)
    },
    { fastCheck: { numRuns: 200 } }
  )

  it.prop(
    "record body: property — the Schema encodes a record to its body and decodes the body back (StoredRecord)",
    [records],
    ([record]) => {
      const body = Schema.encodeSync(StoredRecord)(record)
      expect(body).toEqual(JSON.parse(bodyText(record)))
      expect(Schema.decodeUnknownSync(StoredRecord)(body)).toEqual(record)
    },
    { fastCheck: { numRuns: 50 } }
  )

  it("record body: a repeated long text is written once, the prompt builder's instructions not at all", () => {
    const enrichment = "memory ".repeat(100)
    const record = Schema.decodeUnknownSync(ExecutionRecord)({
      requestId: "r",
      request: "q",
      hookInvocations: [{
        name: "enrichment",
        stage: "before_planning",
        outcome: "succeeded",
        sequence: 0,
        startedAt: 0,
        duration: 0,
        effects: [{
          effectId: "planning_enrichment:rag_context",
          schemaVersion: 1,
          name: "Planning enrichment rag_context",
          status: "succeeded",
          data: { key: "rag_context", operation: "added", after: enrichment },
          startedAt: 0
        }]
      }],
      modelCalls: [0, 1].map((i) => ({
        purpose: i === 0 ? "planning" : "synthesis",
        reask: 0,
        attempt: 1,
        model: "primary",
        streamed: false,
        startedAt: 0,
        durationMs: 1,
        outcome: "succeeded",
        prompt: `${dictionary[i]}\n\n<agent_memory>\n${enrichment}\n</agent_memory>`
      }))
    })
    const text = bodyText(record)
    expect(text.split(enrichment).length - 1).toBe(1)
    expect(text).not.toContain("Plan the tool calls")
    expect(Either.getOrThrow(decodeBody(JSON.parse(text)))).toStrictEqual(record)
  })

  it("record body: a body of a newer format is refused as future_version; broken references as corrupt", () => {
    const record = Schema.decodeUnknownSync(ExecutionRecord)({ requestId: "r", request: "q" })
    const body: Record<string, unknown> = JSON.parse(bodyText(record))
    expect(decodeBody({ ...body, v: currentBodyFormat + 1 })).toEqual(
      Either.left({ reason: "future_version", detail: "body format 3 is newer than this library's 2" })
    )
    const refused = (broken: Record<string, unknown>) => {
      const result = decodeBody({ ...body, ...broken })
      return Either.isLeft(result) ? result.left.reason : "decoded"
    }
    // A run that is not whole, a name, point or text that is not there, a prompt piece that is not a text.
    expect(refused({ h: [1, 2, 3] })).toBe("corrupt")
    expect(refused({ h: "runs" })).toBe("corrupt")
    expect(refused({ phases: 5 })).toBe("corrupt")
    expect(refused({ x: [] })).toBe("corrupt")
    expect(refused({ h: [(5 * 1 + 0) * 32 + 2, 0, 0, 0], p: ["before_planning"], s: ["only"] })).toBe("corrupt")
    expect(refused({ h: [2, 0, 0, 0], p: [] })).toBe("corrupt")
    expect(refused({ rawDraft: 7 })).toBe("corrupt")
    expect(refused({ modelCalls: [{ purpose: "planning", startedAt: 0, durationMs: 0, prompt: ["a", true] }] }))
      .toBe("corrupt")
    // A point that is not a hook point: the record Schema refuses it.
    expect(refused({ h: [2, 0, 0, 0], p: ["not_a_point"], s: ["hook"] })).toBe("corrupt")
    expect(refused({})).toBe("decoded")
  })
})

// ---------------------------------------------------------------------------
// Format 1 (legacy)
// ---------------------------------------------------------------------------

describe("record body: format 1 (every earlier version's) decodes as before", () => {
  it.prop(
    "record body: property — a format 1 body decodes exactly as the record Schema decodes it",
    [records],
    ([record]) => {
      const legacy = viaJson(JSON.stringify(encodeDirect(record)))
      expect(decodeBody(legacy)).toStrictEqual(Either.mapLeft(decodeFormat1(legacy), () => "unreachable"))
      expect(Either.getOrThrow(decodeBody(legacy))).toEqual(record)
    },
    { fastCheck: { numRuns: 100 } }
  )

  // A format 1 body with one member replaced by any JSON (a record or not).
  const damaged = FastCheck.tuple(records, FastCheck.nat(), jsonArbitrary(3)).map(([record, at, value]) => {
    const legacy: Record<string, unknown> = JSON.parse(JSON.stringify(encodeDirect(record)))
    const keys = Object.keys(legacy)
    return { ...legacy, [keys[at % keys.length]!]: value }
  })

  it.prop(
    "record body: property — a damaged format 1 body is a record for the new decoder exactly when it is one for the record Schema",
    [damaged],
    ([json]) => {
      const before = decodeFormat1(json)
      const after = decodeBody(json)
      expect(Either.isRight(after)).toBe(Either.isRight(before))
      if (Either.isRight(before)) expect(after).toStrictEqual(before)
      else expect(Either.isLeft(after) && after.left.reason).toBe("corrupt")
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("record body: a version 0 record (no schemaVersion, outcome-only hook runs) decodes as it always did", () => {
    const legacy = {
      requestId: "legacy-1",
      request: "What is ACME's quote?",
      record_revision: 4,
      phases: [{
        phase: 1,
        plan: {
          steps: [{ step_id: "s1", namespace: "n", agent: "a", capability: "c", parameters: {} }],
          terminal: true
        },
        steps: [{
          step_id: "s1",
          namespace: "n",
          agent: "a",
          capability: "c",
          status: "succeeded",
          output: 42,
          startedAt: 1,
          duration: 0.30000000000000004
        }]
      }],
      hookInvocations: [{
        name: "notes",
        stage: "before_planning",
        outcome: "failed",
        sequence: 0,
        startedAt: 1,
        duration: 2.5,
        error: "boom",
        decision: { policy: "fail_open", action: "continue", reason: "hook_error" }
      }],
      finalResponse: "42"
    }
    const decoded = Either.getOrThrow(decodeBody(legacy))
    expect(decoded).toStrictEqual(Schema.decodeUnknownSync(ExecutionRecord)(legacy))
    expect(decoded.schemaVersion).toBe(0)
    expect(decoded.recordRevision).toBe(4)
    expect(decoded.lifecycle).toBeUndefined()
    expect(decoded.hookInvocations[0]).toStrictEqual({ ...legacy.hookInvocations[0], effects: [] })
    expect(decoded.phases[0]!.plan.steps[0]).toStrictEqual({
      step_id: "s1",
      namespace: "n",
      agent: "a",
      capability: "c",
      parameters: {},
      depends_on: [],
      implicit_deps: [],
      metadata: {}
    })
    // Written again, it is format 2, and decodes to the same record.
    expect(Either.getOrThrow(decodeBody(JSON.parse(bodyText(decoded))))).toStrictEqual(decoded)
  })
})

// ---------------------------------------------------------------------------
// The bound (issue 20): the benchmark scenario at 16 hook units
// ---------------------------------------------------------------------------

/**
 * The record of one request of `../shared/bench-peers`' scenario
 * (`bench/peersScenario.ts`) with `units` no-op hook units of `kind`, its
 * model scripted.
 */
const benchRecord = (units: number, kind: Scenario.UnitKind) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make({ plans: [Scenario.PLAN], synthesis: Scenario.DRAFT })
    const hooks = Scenario.hooksOf(units, kind)
    const tools = Scenario.tools
    return yield* Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      const store = yield* ExecutionStore.ExecutionStore
      yield* pipeline.process({ request: Scenario.REQUEST, requestId: "bench-record-0001" })
      return Option.getOrThrow(yield* store.get("bench-record-0001"))
    }).pipe(Effect.provide(Agent.layer({ model: model.layer, tools, hooks })))
  })

/**
 * Its durations as a live clock makes them (`TestClock` durations are all
 * 0, which flatters the size): differences of `performance.now()` readings
 * an hour into the process, a few microseconds apart, each different.
 */
const withLiveDurations = (record: ExecutionRecord): ExecutionRecord => {
  const at = 3_600_000.123456789
  return {
    ...record,
    hookInvocations: record.hookInvocations.map((run, i) => ({
      ...run,
      duration: (at + 0.000271 + i * 0.0000137) - at
    }))
  }
}

describe("record body: the bound at 16 hook units (issue 20)", () => {
  for (const kind of ["stages", "operations"] as const) {
    it.effect(`record body: the benchmark scenario's record at H=16 (${kind}) is at most 6 KB of stored body`, () =>
      Effect.gen(function*() {
        const record = yield* benchRecord(16, kind)
        expect(record.hookInvocations.length).toBe(kind === "stages" ? 50 : 82)
        expect(record.modelCalls?.every((call) => call.prompt?.includes(Scenario.CONTEXT))).toBe(true)
        const live = withLiveDurations(record)
        expect(live.hookInvocations.every((run) => !Number.isInteger(run.duration * 1e6))).toBe(true)
        for (const r of [record, live]) {
          expect(bodyBytes(r)).toBeLessThanOrEqual(6 * 1024)
          expect(Either.getOrThrow(decodeBody(JSON.parse(bodyText(r))))).toStrictEqual(r)
        }
        // The plain JSON of the same record, for scale: more than twice the body.
        expect(Buffer.byteLength(JSON.stringify(encodeDirect(live)))).toBeGreaterThan(2 * bodyBytes(live))
      }))
  }
})
