/**
 * A record's size cap (issue 17, "bounded sizes"): a record is written only
 * if its stored body fits `maxBytes`; one that does not is cut down where the
 * bulk of a record lives — model-call prompts and outputs, the raw draft,
 * the delivered text, the final response, step outputs — largest first, each cut
 * marked in place, and a diagnostic says what was cut. Everything else (the
 * lifecycle, the hook runs and their decisions, step statuses) is kept.
 *
 * A record is measured once per write, as the size of its stored body (the
 * compact format 2, `recordBody.ts`): the recorder measures what it writes
 * and remembers the size with the object ({@link measured}), and encoding
 * it there leaves the store that writes it the text to write.
 */
import type { ExecutionRecord, HookInvocation, StepResult } from "../ExecutionRecord.js"
import type { ModelCall } from "../ModelCall.js"
import { bodyBytes, shareEncoding } from "./recordBody.js"
import { byteLength } from "./utf8Chunks.js"

// The walk below estimates a record's plain JSON size without building any
// text: the measure of a record too large to encode (see `measure`).

/**
 * A string's UTF-8 size. Short strings (most of a record: names, ids,
 * enums) are counted here — a call into the native count costs more than
 * the loop — long ones natively.
 */
const stringBytes = (text: string): number => {
  const length = text.length
  if (length > 64) return byteLength(text)
  let bytes = length
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    // Two bytes below U+0800, three above; a surrogate pair is four (two per half).
    if (code >= 0x80) bytes += code < 0x800 || (code >= 0xd800 && code <= 0xdfff) ? 1 : 2
  }
  return bytes
}

/** The digits of a whole number below 10^16. */
const digits = (n: number): number => {
  let count = 1
  for (let bound = 10; n >= bound && count < 16; bound *= 10) count++
  return count
}

/**
 * A number's JSON length: exact for whole numbers (no text built below
 * 10^15); for any
 * other, 24 — the longest a double's JSON form can be (`-1.2345678901234567e-100`):
 * formatting one costs more than the estimate is worth (a record's
 * fractional numbers are its durations, a few dozen).
 */
const numberBytes = (n: number): number => {
  if (Number.isInteger(n)) return Math.abs(n) < 1e15 ? (n < 0 ? digits(-n) + 1 : digits(n)) : String(n).length
  return 24
}

// `"key":` sizes of the keys met so far (a record's keys are few; user data
// may bring many, so the cache stops growing at a bound).
const keySizes = new Map<string, number>()
const keyBytes = (key: string): number => {
  const known = keySizes.get(key)
  if (known !== undefined) return known
  const size = stringBytes(key) + 3
  if (keySizes.size < 1024) keySizes.set(key, size)
  return size
}

/**
 * The UTF-8 size of a value's compact JSON text, as `JSON.stringify` would
 * write it (`undefined` members are left out, as there) — a close upper
 * estimate: escapes are not counted, a fractional number counts 24 bytes. Records are acyclic (every
 * value in them was checked as JSON where it entered).
 */
const sizeOf = (value: unknown): number => {
  switch (typeof value) {
    case "string":
      return stringBytes(value) + 2
    case "number":
      return numberBytes(value)
    case "boolean":
      return value ? 4 : 5
    case "object": {
      if (value === null) return 4
      if (Array.isArray(value)) {
        let size = value.length > 0 ? value.length + 1 : 2
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i]
          size += item === undefined ? 4 : sizeOf(item)
        }
        return size
      }
      let size = 2
      let members = 0
      for (const key in value) {
        const member = (value as Record<string, unknown>)[key]
        if (member === undefined) continue
        size += keyBytes(key) + sizeOf(member)
        members++
      }
      return members > 0 ? size + members - 1 : size
    }
    default:
      return 0
  }
}

/** `"key":` */
const keyCost = (key: string): number => key.length + 3

const statusKey = keyCost("status")
const phaseKey = keyCost("phase")
const operationKey = keyCost("operation")
const callIdKey = keyCost("callId")
const stepIdKey = keyCost("stepId")
const executionKey = keyCost("execution")
const attemptsKey = keyCost("attempts")
const contributionHashKey = keyCost("contributionHash")
const skipReasonKey = keyCost("skipReason")
const errorKey = keyCost("error")
const abandonedKey = keyCost("abandoned")
const runIdKey = keyCost("runId")
// `"decision":{"policy":"","action":"","reason":""},` without the three values.
const decisionCost = keyCost("decision") + 2 + keyCost("policy") + keyCost("action") + keyCost("reason") + 3 * 2 + 2 + 1
// `{"name":"","stage":"","outcome":"","sequence":,"startedAt":,"duration":,"effects":}` without the values.
const requiredCost = 2 + ["name", "stage", "outcome", "sequence", "startedAt", "duration", "effects"]
  .reduce((sum, key) => sum + keyCost(key), 0) +
  3 * 2 + 6

/** `"key":"value",` for an optional string member. */
const stringMember = (key: number, value: string | undefined): number =>
  value === undefined ? 0 : key + stringBytes(value) + 3

/** `"key":value,` for an optional number member. */
const numberMember = (key: number, value: number | undefined): number =>
  value === undefined ? 0 : key + numberBytes(value) + 1

/**
 * One hook run's size, member by member: a record holds many of them (four
 * per hook per request at the stages alone), all of one shape — reading
 * known members costs a fraction of a generic walk. Its effects' data is
 * walked.
 */
const invocationBytes = (run: HookInvocation): number => {
  let size = requiredCost + stringBytes(run.name) + stringBytes(run.stage) + stringBytes(run.outcome) +
    numberBytes(run.sequence) + numberBytes(run.startedAt) + numberBytes(run.duration) + sizeOf(run.effects)
  size += stringMember(statusKey, run.status)
  size += numberMember(phaseKey, run.phase)
  size += stringMember(operationKey, run.operation)
  size += stringMember(callIdKey, run.callId)
  size += stringMember(stepIdKey, run.stepId)
  size += stringMember(executionKey, run.execution)
  size += numberMember(attemptsKey, run.attempts)
  size += stringMember(contributionHashKey, run.contributionHash)
  size += stringMember(skipReasonKey, run.skipReason)
  size += stringMember(errorKey, run.error)
  size += run.abandoned === undefined ? 0 : abandonedKey + (run.abandoned ? 4 : 5) + 1
  size += stringMember(runIdKey, run.runId)
  const decision = run.decision
  if (decision !== undefined) {
    size += decisionCost + stringBytes(decision.policy) + stringBytes(decision.action) + stringBytes(decision.reason)
  }
  return size
}

/** The size of a record, its hook runs measured member by member. */
const recordBytes = (record: ExecutionRecord): number => {
  const runs = record.hookInvocations
  let size = 0
  for (let i = 0; i < runs.length; i++) size += invocationBytes(runs[i]!)
  // The rest of the record, its hook runs as an empty list (`[]`), plus the runs and their commas.
  return sizeOf({ ...record, hookInvocations: [] }) + size + (runs.length > 0 ? runs.length - 1 : 0)
}

// Sizes of records as they were written: a record is immutable once built.
const sizes = new WeakMap<object, number>()

/**
 * The size a record was measured at when it was written, if it was
 * (`undefined`: measure it yourself).
 */
export const measured = (record: object): number | undefined => sizes.get(record)

/**
 * The size of `record`'s stored body (format 2, `recordBody.ts`), measured
 * now and remembered with it. Measuring encodes the body: the store that
 * writes the record reads the same text. A record too large to be a
 * JavaScript string is estimated by a walk instead (its plain JSON size, an
 * upper bound): over any size limit, it is cut down.
 */
export const measure = (record: ExecutionRecord): number => {
  const known = sizes.get(record)
  if (known !== undefined) return known
  let size: number
  try {
    size = bodyBytes(record)
  } catch {
    size = recordBytes(record)
  }
  sizes.set(record, size)
  return size
}

/** `"writer":{"id":"…","seq":…}` with the comma before it, without the id and the number. */
const writerCost = 1 + keyCost("writer") + 2 + keyCost("id") + 2 + 1 + keyCost("seq")

const writerBytes = (writer: { readonly id: string; readonly seq: number }): number =>
  writerCost + stringBytes(writer.id) + numberBytes(writer.seq)

/**
 * `record` with a `writer` stamp, its size remembered from `size` (the
 * unstamped record's) plus the stamp's.
 */
export const stamp = (
  record: ExecutionRecord,
  size: number,
  writer: { readonly id: string; readonly seq: number }
): ExecutionRecord => {
  const stamped: ExecutionRecord = { ...record, writer }
  const previous = record.writer === undefined ? 0 : writerBytes(record.writer)
  sizes.set(stamped, size - previous + writerBytes(writer))
  // The body is encoded without its writer: the stamped record's is the same text.
  shareEncoding(record, stamped)
  return stamped
}

/** What a cut string ends with. */
const cutMark = (removed: number) => `… [truncated: ${removed} bytes over the record size limit]`

/** What a cut step output becomes. */
const cutOutput = (bytes: number) => ({ truncated: true, bytes })

/** One place in the record that can be cut, and its size. */
interface Bulk {
  readonly size: number
  /** The record with this place cut to about `keep` bytes. */
  readonly cut: (record: ExecutionRecord, keep: number) => ExecutionRecord
}

/** A string's prefix of at most `keep` UTF-8 bytes (never a half code point), marked as cut. */
const cutText = (text: string, keep: number): string => {
  let bytes = 0
  let end = 0
  while (end < text.length) {
    const code = text.codePointAt(end)!
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4
    if (bytes + width > keep) break
    bytes += width
    end += code >= 0x10000 ? 2 : 1
  }
  return `${text.slice(0, end)}${cutMark(byteLength(text) - bytes)}`
}

const withCall = (record: ExecutionRecord, i: number, f: (call: ModelCall) => ModelCall): ExecutionRecord => {
  const calls = (record.modelCalls ?? []).slice()
  calls[i] = f(calls[i]!)
  return { ...record, modelCalls: calls }
}

const withStep = (
  record: ExecutionRecord,
  p: number,
  s: number,
  f: (step: StepResult) => StepResult
): ExecutionRecord => {
  const phases = record.phases.slice()
  const phase = phases[p]!
  const steps = phase.steps.slice()
  steps[s] = f(steps[s]!)
  phases[p] = { ...phase, steps }
  return { ...record, phases }
}

/** Every place of the record that can be cut, with its size. */
const bulkOf = (record: ExecutionRecord): Array<Bulk> => {
  const bulk: Array<Bulk> = []
  const text = (value: string | undefined, cut: (record: ExecutionRecord, text: string) => ExecutionRecord) => {
    if (value !== undefined && value.length > 256) {
      bulk.push({ size: byteLength(value), cut: (r, keep) => cut(r, cutText(value, keep)) })
    }
  }
  ;(record.modelCalls ?? []).forEach((call, i) => {
    text(call.prompt, (r, prompt) => withCall(r, i, (c) => ({ ...c, prompt })))
    text(call.output, (r, output) => withCall(r, i, (c) => ({ ...c, output })))
  })
  text(record.rawDraft, (r, rawDraft) => ({ ...r, rawDraft }))
  text(record.deliveredText, (r, deliveredText) => ({ ...r, deliveredText }))
  text(record.finalResponse, (r, finalResponse) => ({ ...r, finalResponse }))
  record.phases.forEach((phase, p) =>
    phase.steps.forEach((step, s) => {
      if (step.output === undefined) return
      const size = sizeOf(step.output)
      if (size > 256) bulk.push({ size, cut: (r) => withStep(r, p, s, (st) => ({ ...st, output: cutOutput(size) })) })
    })
  )
  return bulk
}

/**
 * `record` cut down to fit `maxBytes` of JSON text, or `record` itself when
 * it fits. The cut record says so in its `diagnostics`.
 */
export const fitRecord = (record: ExecutionRecord, maxBytes: number): ExecutionRecord => {
  const size = measure(record)
  if (size <= maxBytes) return record
  // Room for the diagnostic that says what was cut.
  let over = size - maxBytes + 256
  let fitted = record
  // Largest first: the fewest cuts that bring the record under the limit.
  const bulk = bulkOf(record).sort((a, b) => b.size - a.size)
  let cuts = 0
  for (const place of bulk) {
    if (over <= 0) break
    // Keep what the limit allows of this place (its mark costs a few bytes).
    const keep = Math.max(0, place.size - over - 96)
    fitted = place.cut(fitted, keep)
    over -= place.size - keep - 96
    cuts++
  }
  const note = `record truncated: ${size} bytes over the record size limit of ${maxBytes} bytes (maxRecordBytes); ` +
    `${cuts} field${cuts === 1 ? "" : "s"} cut`
  return { ...fitted, diagnostics: [...fitted.diagnostics.filter((d) => !d.startsWith("record truncated:")), note] }
}
