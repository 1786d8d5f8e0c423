/**
 * Adversarial class 5, "unbounded sizes" — the record size cap (issue 17):
 * a record over `maxBytes` of stored body is cut down where its bulk lives
 * (model-call prompts and outputs, the raw draft, delivered text, the final
 * response, step outputs), largest first, before it is written; what was cut
 * is marked in place and in `diagnostics`; the evidence that is not bulk —
 * the lifecycle, the hook runs, step statuses — is kept whole.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { type ExecutionRecord } from "effect-agent-pipeline"
import { encodeBody } from "../../src/domain/internal/recordEncode.js"
import { fitRecord, measure, measured } from "../../src/domain/internal/recordSize.js"
import { RequestRecorder } from "../support/Internal.js"

/** A record's size as the cap counts it: its stored body (what a store writes), in UTF-8 bytes. */
const jsonBytes = (record: ExecutionRecord.ExecutionRecord) => new TextEncoder().encode(encodeBody(record)).length

const base = (extra: Partial<ExecutionRecord.ExecutionRecord> = {}): ExecutionRecord.ExecutionRecord => ({
  schemaVersion: 1,
  requestId: "big",
  recordRevision: 1,
  mode: "pipeline",
  request: "quote ACME",
  metadata: {},
  lifecycle: { status: "succeeded", startedAt: 1, endedAt: 2 },
  phases: [],
  hookInvocations: [
    {
      name: "audit",
      stage: "after_execution",
      outcome: "succeeded",
      status: "completed",
      sequence: 0,
      startedAt: 1,
      duration: 0,
      effects: []
    }
  ],
  diagnostics: [],
  ...extra
})

const step = (id: string, output: unknown): ExecutionRecord.StepResult => ({
  step_id: id,
  namespace: "demo-tools",
  agent: "stock-service",
  capability: "stock_quote",
  status: "succeeded",
  output: output as ExecutionRecord.StepResult["output"],
  startedAt: 1,
  duration: 1
})

const bigRecord = (draftBytes: number, outputs: ReadonlyArray<number>) =>
  base({
    rawDraft: "d".repeat(draftBytes),
    finalResponse: "r".repeat(draftBytes),
    modelCalls: [{
      purpose: "synthesis",
      attempt: 1,
      reask: 0,
      model: "primary",
      streamed: false,
      startedAt: 1,
      durationMs: 1,
      outcome: "succeeded",
      prompt: "p".repeat(draftBytes),
      output: "o".repeat(draftBytes)
    }],
    phases: [{
      phase: 1,
      plan: { steps: [], terminal: true },
      steps: outputs.map((bytes, i) => step(`s${i}`, { blob: "x".repeat(bytes) }))
    }]
  })

describe("unbounded sizes: the record size cap", () => {
  it.effect("unbounded sizes: a 50 MB draft never makes a 150 MB record — the written record fits the cap, cut and marked as such", () =>
    Effect.sync(() => {
      const record = bigRecord(50 * 1_048_576, [])
      const fitted = fitRecord(record, 1_048_576)
      expect(jsonBytes(fitted)).toBeLessThanOrEqual(1_048_576)
      expect(fitted.rawDraft).toMatch(/… \[truncated: \d+ bytes over the record size limit\]$/)
      expect(fitted.diagnostics.at(-1)).toMatch(/^record truncated: .* \(maxRecordBytes\)/)
      // What is not bulk is kept whole.
      expect(fitted.lifecycle).toEqual(record.lifecycle)
      expect(fitted.hookInvocations).toEqual(record.hookInvocations)
    }))

  it.effect("unbounded sizes: a record within the cap is written as it is (the same object)", () =>
    Effect.sync(() => {
      const record = bigRecord(1000, [1000])
      expect(fitRecord(record, 1_048_576)).toBe(record)
    }))

  it.effect("unbounded sizes: property — whatever the bulk, the fitted record fits whenever its non-bulk part does, and every step keeps its status", () =>
    Effect.sync(() => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 200_000 }),
          fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 6 }),
          fc.integer({ min: 8_192, max: 400_000 }),
          (draft, outputs, cap) => {
            const record = bigRecord(draft, outputs)
            const fitted = fitRecord(record, cap)
            // The non-bulk part of these records is about 1 KB, under every cap tried.
            expect(jsonBytes(fitted)).toBeLessThanOrEqual(cap)
            expect(fitted.phases[0]!.steps.map((s) => [s.step_id, s.status])).toEqual(
              record.phases[0]!.steps.map((s) => [s.step_id, s.status])
            )
          }
        ),
        { numRuns: 60 }
      )
    }))

  it.effect("unbounded sizes: the recorder writes the cut record, and keeps only the cut one in memory", () =>
    Effect.gen(function*() {
      const written: Array<ExecutionRecord.ExecutionRecord> = []
      const recorder = RequestRecorder.make((record) => Effect.sync(() => void written.push(record)), base(), {
        maxBytes: 64 * 1024
      })
      yield* recorder.modify((r) => ({ ...r, rawDraft: "d".repeat(5 * 1_048_576) }))
      yield* recorder.finalize({ status: "succeeded", startedAt: 1, endedAt: 3 })
      const last = written.at(-1)!
      expect(jsonBytes(last)).toBeLessThanOrEqual(64 * 1024)
      expect(last.diagnostics.some((d) => d.startsWith("record truncated:"))).toBe(true)
      expect(recorder.current().rawDraft!.length).toBeLessThan(64 * 1024)
    }))
})

describe("unbounded sizes: measuring a record", () => {
  it.effect("unbounded sizes: property — a record's measured size is the UTF-8 size of its stored body, exactly (multi-byte text, escapes and every number included)", () =>
    Effect.sync(() => {
      const text = fc.array(fc.constantFrom("a", "Z", "é", "ß", "漢", "😀", " ", "-", "_"), { maxLength: 80 }).map((
        cs
      ) => cs.join(""))
      const { value } = fc.letrec((tie) => ({
        value: fc.oneof(
          { depthSize: "small" },
          text,
          fc.integer(),
          fc.integer({ min: -1e14, max: 1e14 }).map((n) => n * 13),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.boolean(),
          fc.constant(null),
          fc.array(tie("value"), { maxLength: 4 }),
          fc.dictionary(text, tie("value"), { maxKeys: 4 })
        )
      }))
      fc.assert(
        fc.property(value, text, (output, draft) => {
          const record = base({
            rawDraft: draft,
            phases: [{ phase: 1, plan: { steps: [], terminal: true }, steps: [step("s1", output)] }]
          })
          // A fresh object each time: nothing remembered.
          const fitted = fitRecord({ ...record }, 0)
          const measured = Number(/record truncated: (\d+) bytes/.exec(fitted.diagnostics.at(-1) ?? "")?.[1]) + 0
          expect(measured).toBe(jsonBytes(record))
        }),
        { numRuns: 300 }
      )
    }))
})

describe("unbounded sizes: measuring hook runs", () => {
  it.effect("unbounded sizes: property — a record's hook runs are measured exactly, as their part of the stored body", () =>
    Effect.sync(() => {
      const str = fc.string({ maxLength: 30 })
      const num = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true, min: 0, max: 1e6 }))
      const effect = fc.record({
        effectId: str.filter((s) => s.length > 0),
        schemaVersion: fc.constant(1),
        name: str,
        status: fc.constantFrom("pending" as const, "succeeded" as const, "failed" as const),
        data: fc.option(fc.dictionary(str, fc.oneof(str, fc.integer(), fc.boolean())), { nil: undefined }),
        startedAt: fc.integer({ min: 0 }),
        error: fc.option(str, { nil: undefined })
      }, { requiredKeys: ["effectId", "schemaVersion", "name", "status", "startedAt"] })
      const run = fc.record({
        name: str,
        stage: fc.constantFrom("before_planning" as const, "guard_tool_call" as const, "after_inference" as const),
        outcome: fc.constantFrom("succeeded" as const, "failed" as const, "pending" as const, "skipped" as const),
        status: fc.constantFrom("completed" as const, "timed_out" as const, "denied" as const),
        sequence: fc.nat(),
        phase: fc.nat(),
        operation: fc.constantFrom("inference" as const, "tool_call" as const),
        callId: str,
        stepId: str,
        execution: fc.constantFrom("blocking" as const, "deadline" as const, "background" as const),
        attempts: fc.nat(),
        contributionHash: str,
        skipReason: fc.constantFrom("disabled" as const, "dependency_failed" as const),
        startedAt: num,
        duration: num,
        error: str,
        abandoned: fc.boolean(),
        runId: str,
        decision: fc.record({
          policy: fc.constantFrom("fail_open" as const, "fail_closed" as const),
          action: fc.constantFrom("continue" as const, "terminate" as const, "deny" as const),
          reason: fc.constantFrom("hook_error" as const, "timed_out" as const, "proceed_misuse" as const)
        }),
        effects: fc.array(effect, { maxLength: 3 })
      }, { requiredKeys: ["name", "stage", "outcome", "sequence", "startedAt", "duration", "effects"] })
      const runs = fc.array(run, { maxLength: 12 })
      fc.assert(
        fc.property(runs, (hookInvocations) => {
          const record = base({ hookInvocations })
          const fitted = fitRecord({ ...record }, 0)
          const measured = Number(/record truncated: (\d+) bytes/.exec(fitted.diagnostics.at(-1) ?? "")?.[1])
          expect(measured).toBe(jsonBytes(record))
        }),
        { numRuns: 300 }
      )
    }))
})

describe("unbounded sizes: a written record's remembered size", () => {
  it.effect("unbounded sizes: the size remembered with a stamped record (what a byte-capped store reads) is the size measured afresh", () =>
    Effect.gen(function*() {
      const written: Array<ExecutionRecord.ExecutionRecord> = []
      const recorder = RequestRecorder.make({
        save: (record) => Effect.sync(() => (written.push(record), "written" as const)),
        update: () => Effect.succeed("written" as const)
      }, base())
      yield* recorder.modify((r) => ({ ...r, rawDraft: "dé漢😀".repeat(100) }))
      yield* recorder.finalize({ status: "succeeded", startedAt: 1, endedAt: 3 })
      yield* recorder.modify((r) => ({ ...r, diagnostics: ["late"] }))
      expect(written.length).toBe(2)
      for (const record of written) {
        expect(record.writer).toBeDefined()
        expect(measured(record)).toBe(measure({ ...record }))
      }
    }))
})
