/**
 * Adversarial class 5, "unbounded sizes" — the record size cap (issue 17):
 * a record over `maxBytes` of JSON text is cut down where its bulk lives
 * (model-call prompts and outputs, the raw draft, delivered text, the final
 * response, step outputs), largest first, before it is written; what was cut
 * is marked in place and in `diagnostics`; the evidence that is not bulk —
 * the lifecycle, the hook runs, step statuses — is kept whole.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { type ExecutionRecord, RequestRecorder } from "effect-agent-pipeline"
import { fitRecord } from "../../src/domain/internal/recordSize.js"

const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length

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
    { name: "audit", stage: "after_execution", outcome: "succeeded", status: "completed", sequence: 0, startedAt: 1, duration: 0, effects: [] }
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
