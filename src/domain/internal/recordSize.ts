/**
 * A record's size cap (issue 17, "bounded sizes"): a record is written only
 * if its JSON text fits `maxBytes`; one that does not is cut down where the
 * bulk of a record lives — model-call prompts and outputs, the raw draft,
 * the delivered text, the final response, step outputs — largest first, each cut
 * marked in place, and a diagnostic says what was cut. Everything else (the
 * lifecycle, the hook runs and their decisions, step statuses) is kept.
 *
 * A record is measured once per write: the recorder measures what it
 * writes and remembers the size with the object ({@link measured}), so a
 * store that caps its memory by bytes reads it instead of walking the
 * record again.
 */
import type { ExecutionRecord, StepResult } from "../ExecutionRecord.js"
import type { ModelCall } from "../ModelCall.js"
import { byteLength } from "../Utf8Chunks.js"

/**
 * The UTF-8 size of a value's compact JSON text, as `JSON.stringify` would
 * write it (`undefined` members are left out, as there). Escapes are not
 * counted: a close estimate is all a cap needs.
 */
const sizeOf = (value: unknown): number => {
  switch (typeof value) {
    case "string":
      return byteLength(value) + 2
    case "number":
      return String(value).length
    case "boolean":
      return value ? 4 : 5
    case "object": {
      if (value === null) return 4
      if (Array.isArray(value)) {
        let size = 2 + Math.max(0, value.length - 1)
        for (const item of value) size += item === undefined ? 4 : sizeOf(item)
        return size
      }
      let size = 2
      let members = 0
      for (const key of Object.keys(value)) {
        const member = (value as Record<string, unknown>)[key]
        if (member === undefined) continue
        size += byteLength(key) + 3 + sizeOf(member)
        members++
      }
      return size + Math.max(0, members - 1)
    }
    default:
      return 0
  }
}

// Sizes of records as they were written: a record is immutable once built.
const sizes = new WeakMap<object, number>()

/**
 * The size a record was measured at when it was written, if it was
 * (`undefined`: measure it yourself).
 */
export const measured = (record: object): number | undefined => sizes.get(record)

/** The JSON size of `record`, measured now and remembered with it. */
export const measure = (record: ExecutionRecord): number => {
  const known = sizes.get(record)
  if (known !== undefined) return known
  const size = sizeOf(record)
  sizes.set(record, size)
  return size
}

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
  // `,"writer":` and the object (a record always has other members before it).
  sizes.set(stamped, size + (record.writer === undefined ? 10 + sizeOf(writer) : sizeOf(writer) - sizeOf(record.writer)))
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

const withStep = (record: ExecutionRecord, p: number, s: number, f: (step: StepResult) => StepResult): ExecutionRecord => {
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
