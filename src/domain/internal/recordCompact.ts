/**
 * The compact stored body of an execution record (body format 2, issue 20):
 * what the stores keep of a record, at a third to a quarter of its plain
 * JSON — without leaving anything out. Every field of the record is kept
 * exactly (numbers bit for bit); what shrinks is how it is written:
 *
 * - hook runs are one flat list of numbers (`h`, seven per run): their
 *   names and points written once per record (`s`) and referred to by
 *   index; the phase / operation / call / step a run ran for one shared
 *   context (`c`); start times counted from the request's start (`b`); the
 *   few members most runs lack (a decision, effects, an error…) apart, by
 *   run index (`x`);
 * - a run's duration that is a whole number of nanoseconds (the clock's
 *   resolution) is written as that integer; any other as it is (never a
 *   whole number then, so the two cannot be confused);
 * - a long text written more than once — an enrichment a hook reported and
 *   the prompts carry, a draft that is also a model call's output — is
 *   written once (`t`) and referred to by index, also inside a prompt (a
 *   prompt is then a list of pieces); the default prompt builder's
 *   instructions are entries of a static dictionary (`recordDictionary.ts`);
 * - fields equal to their defaults are left out.
 *
 * Body format 1 — the record Schema's own encoded form — is what every
 * earlier version stored; `recordBody.ts` reads both. A body is format 2
 * when it has `"v": 2`; the record's own `schemaVersion` is a field of it.
 * The writer stamp is never part of the encoded text here (the pipeline
 * stamps every snapshot it writes; the stamp is added to the text).
 *
 * This module holds what the encoder (`recordCompactEncode.ts`, its texts
 * in `recordCompactTexts.ts`) and the decoder (`recordCompactDecode.ts`)
 * share.
 */
import type { HookInvocation } from "../ExecutionRecord.js"

/**
 * The body format this library writes, and the newest it reads.
 */
export const currentBodyFormat = 2

// ---------------------------------------------------------------------------
// Codes
// ---------------------------------------------------------------------------

export const outcomes = ["succeeded", "failed", "pending", "skipped"] as const
export const statuses = ["started", "backgrounded", "completed", "failed", "timed_out", "denied", "skipped"] as const
const outcomeCodes: Record<string, number> = Object.fromEntries(outcomes.map((o, i) => [o, i * 8]))
const statusCodes: Record<string, number> = Object.fromEntries(statuses.map((s, i) => [s, i + 1]))

/** A run's outcome and status in one small number: outcome * 8 + (status index + 1, 0 when absent). */
export const statusCode = (run: HookInvocation): number =>
  outcomeCodes[run.outcome]! + (run.status === undefined ? 0 : statusCodes[run.status]!)

// Below 2^53 nanoseconds (104 days in milliseconds) the integer is exact.
const maxNanos = 9_007_199_254

/** A duration's whole number of nanoseconds, when that is exactly the value (`k / 1e6`). */
export const durationNanos = (ms: number): number | undefined => {
  if (!(ms > -maxNanos && ms < maxNanos)) return undefined
  const nanos = Math.round(ms * 1e6)
  return nanos / 1e6 === ms && !Object.is(ms, -0) ? nanos : undefined
}

// ---------------------------------------------------------------------------
// Shared by the encoder and the decoder
// ---------------------------------------------------------------------------

/**
 * Numbers per run in `h`: name, point and status code in one
 * (`(name * points + point) * 32 + code`); sequence and context in one
 * (`sequence * (contexts + 1) + context`); start; duration.
 */
export const stride = 4

/** Texts at least this long are candidates for writing once. */
export const longText = 64

/** A table of strings, each written once, referred to by index. */
export class Table {
  readonly items: Array<string> = []
  private readonly index = new Map<string, number>()
  of(value: string): number {
    let i = this.index.get(value)
    if (i === undefined) {
      i = this.items.length
      this.items.push(value)
      this.index.set(value, i)
    }
    return i
  }
  /** `index + 1` of a present string, 0 for an absent one (so absent costs one digit). */
  optional(value: string | undefined): number {
    return value === undefined ? 0 : this.of(value) + 1
  }
  find(value: string): number | undefined {
    return this.index.get(value)
  }
}
