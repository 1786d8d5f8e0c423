/**
 * Redaction of values, not only text: JSON (a tool's output, its keys
 * included), an execution record (every text it keeps, its identifiers
 * excepted) and a pipeline error's texts. Unchanged parts keep their
 * identity, so a value with nothing to redact costs a walk and no copy.
 *
 * Numbers are not scanned: a JSON number is data (a timestamp of 13 digits
 * is as Luhn-valid as a card number one time in ten).
 */
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import type { Json, JsonObject } from "../../domain/Json.js"
import { PlanningError, SynthesisError } from "../../domain/PipelineError.js"
import type { Redactor } from "../../runtime/Redaction.js"

/** Redacts one text: the same string when it has nothing to redact. */
export type TextRedaction = (text: string) => string

/** No secret or personal datum the built-in patterns know is shorter (`a@b.io`). */
const shortest = 6
/** What the memory of results may hold: texts up to 4 KiB, 1 Mi characters in all (then it starts over). */
const rememberedLength = 4096
const rememberedTotal = 1 << 20

/**
 * A redaction of texts with a bounded memory of recent results (a record's
 * snapshots repeat their texts from write to write). `seen` collects the
 * kinds found, for evidence (and bypasses the memory).
 */
export const textRedaction = (redactor: Redactor, seen?: Set<string>): TextRedaction => {
  const memo = new Map<string, string>()
  let total = 0
  return (text) => {
    if (text.length < shortest) return text
    const remember = seen === undefined && text.length <= rememberedLength
    if (remember) {
      const known = memo.get(text)
      if (known !== undefined) return known
    }
    const result = redactor.redact(text)
    if (seen !== undefined) { for (const finding of result.findings) seen.add(finding.kind) }
    if (remember) {
      if (total + text.length > rememberedTotal) {
        memo.clear()
        total = 0
      }
      memo.set(text, result.text)
      total += text.length
    }
    return result.text
  }
}

/** `value` with every string (and object key) redacted; `value` itself when nothing changed. */
export const redactJson = (value: Json, redact: TextRedaction): Json => {
  if (typeof value === "string") return redact(value)
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) {
    let out: Array<Json> | undefined
    for (let i = 0; i < value.length; i++) {
      const item = value[i]!
      const next = redactJson(item, redact)
      if (next !== item) (out ??= value.slice())[i] = next
    }
    return out ?? value
  }
  let out: Record<string, Json> | undefined
  const entries = Object.entries(value as JsonObject)
  for (let i = 0; i < entries.length; i++) {
    const [key, item] = entries[i]!
    const nextKey = redact(key)
    const next = redactJson(item, redact)
    if (out === undefined && (nextKey !== key || next !== item)) {
      out = {}
      for (let j = 0; j < i; j++) out[entries[j]![0]] = entries[j]![1]
    }
    if (out !== undefined) out[nextKey] = next
  }
  return out ?? value
}

/** A JSON object with every string and key redacted. */
export const redactObject = (value: JsonObject, redact: TextRedaction): JsonObject => {
  const next = redactJson(value, redact)
  // redactJson maps an object to an object.
  return next as JsonObject
}

/**
 * The record's identifiers and closed vocabularies: never redacted (stores
 * key and merge records by them; none holds free text).
 */
const identifiers = new Set([
  "requestId",
  "checkpointId",
  "owner",
  "writer",
  "id",
  "callId",
  "effectId",
  "runId",
  "stepId",
  "step_id",
  "name",
  "hookName",
  "contributionHash",
  "stage",
  "status",
  "outcome",
  "operation",
  "execution",
  "skipReason",
  "policy",
  "action",
  "reason",
  "kind",
  "mode",
  "purpose",
  "model",
  "namespace",
  "agent",
  "capability",
  "dependsOn",
  "running"
])

/** The record's free-form JSON values, whose keys are data too. */
const freeForm = new Set(["metadata", "output", "parameters", "data"])

const redactTree = (value: unknown, redact: TextRedaction): unknown => {
  if (typeof value === "string") return redact(value)
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) {
    let out: Array<unknown> | undefined
    for (let i = 0; i < value.length; i++) {
      const next = redactTree(value[i], redact)
      if (next !== value[i]) (out ??= value.slice())[i] = next
    }
    return out ?? value
  }
  let out: Record<string, unknown> | undefined
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key]
    if (identifiers.has(key)) continue
    // Free-form JSON (metadata, step outputs and parameters, effect data): keys too.
    const next = freeForm.has(key) ? redactJson(item as Json, redact) : redactTree(item, redact)
    if (next !== item) (out ??= { ...value })[key] = next
  }
  return out ?? value
}

/**
 * The record with every text it keeps redacted — the request, metadata,
 * plans' parameters, step outputs and errors, hook runs' errors and effect
 * data, model calls' prompts and outputs, the raw draft, the delivered text,
 * the final response, diagnostics — its identifiers excepted.
 */
export const redactRecord = (record: ExecutionRecord, redact: TextRedaction): ExecutionRecord =>
  redactDeep(record, redact)

/**
 * Any plain data of the record's vocabulary (a response's phases: plans and
 * step results), redacted like the record.
 */
export const redactDeep = <A>(value: A, redact: TextRedaction): A =>
  // The walk keeps every field and only replaces strings with strings: the
  // result has the value's shape.
  redactTree(value, redact) as A

/**
 * The error with the texts it would hand the caller redacted: a
 * `PlanningError`'s rejected model output and details (its cause, which may
 * quote that output, is dropped when anything was redacted), a
 * `SynthesisError`'s details. Other errors carry no model or tool text.
 */
export const redactError = <E>(error: E, redact: TextRedaction): E => {
  if (error instanceof PlanningError) {
    const detail = redact(error.detail)
    const output = error.output === undefined ? undefined : redact(error.output)
    if (detail === error.detail && output === error.output) return error
    const redacted = new PlanningError({
      reason: error.reason,
      phase: error.phase,
      detail,
      ...(output === undefined ? {} : { output })
    })
    // Same class as the one given: still an `E`.
    return redacted as E
  }
  if (error instanceof SynthesisError) {
    const detail = redact(error.detail)
    if (detail === error.detail) return error
    return new SynthesisError({ reason: error.reason, detail }) as E
  }
  return error
}
