/**
 * The decoder of body format 2 (`recordCompact.ts`): a compact body back
 * into the record Schema's encoded form (format 1) — checked by that Schema
 * on the SQL stores' path (`recordBody.ts`), trusted on the memory store's.
 */
import type { ExecutionRecord } from "../ExecutionRecord.js"
import { outcomes, statuses, stride } from "./recordCompact.js"
import { dictionary } from "./recordDictionary.js"

type Loose = Record<string, unknown>

const isLoose = (value: unknown): value is Loose => value !== null && typeof value === "object" && !Array.isArray(value)

/** A list of the body (absent: empty); anything else is not a format 2 body. */
const array = (value: unknown): ReadonlyArray<unknown> => {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw new NotCompact(`${JSON.stringify(value)} is not a list`)
  return value
}

/** Thrown inside the expansion, caught at its edge: the body is not a format 2 record. */
export class NotCompact {
  constructor(readonly detail: string) {}
}

/** A text reference: an index into the record's texts, or `-1 - i` for dictionary entry `i`. */
const textAt = (ref: number, texts: ReadonlyArray<unknown>): string => {
  const text = ref < 0 ? dictionary[-1 - ref] : texts[ref]
  if (typeof text !== "string") throw new NotCompact(`text reference ${ref} is out of range`)
  return text
}

const expandText = (value: unknown, texts: ReadonlyArray<unknown>): unknown => {
  if (typeof value === "number") return textAt(value, texts)
  if (!Array.isArray(value)) return value
  const parts: Array<string> = []
  for (const piece of value) {
    if (typeof piece === "number") parts.push(textAt(piece, texts))
    else if (typeof piece === "string") parts.push(piece)
    else throw new NotCompact(`prompt piece ${String(piece)} is not a text`)
  }
  // One flat string (a chain of concatenations would be a tree on the heap).
  return parts.join("")
}

const stringAt = (strings: ReadonlyArray<unknown>, i: unknown): string => {
  const value = typeof i === "number" ? strings[i] : undefined
  if (typeof value !== "string") throw new NotCompact(`string reference ${String(i)} is out of range`)
  return value
}

/** A context's optional string (`index + 1`, 0 for none). */
const optionalAt = (strings: ReadonlyArray<unknown>, i: string | undefined): string | undefined =>
  i === undefined || i === "0" ? undefined : stringAt(strings, Number(i) - 1)

const expandEffect = (effect: unknown, texts: ReadonlyArray<unknown>): unknown => {
  if (!isLoose(effect) || !Array.isArray(effect.dr) || !isLoose(effect.data)) return effect
  const { dr, ...rest } = effect
  const data: Loose = { ...effect.data }
  for (const key of dr) {
    if (typeof key !== "string") throw new NotCompact("an effect's data reference is not a key")
    data[key] = expandText(data[key], texts)
  }
  return { ...rest, data }
}

/** The runs of `h`, in the record Schema's encoded form. */
const expandRuns = (body: Readonly<Loose>, strings: ReadonlyArray<unknown>, texts: ReadonlyArray<unknown>) => {
  const flat = array(body.h)
  if (flat.length % stride !== 0) throw new NotCompact("the hook runs are not whole")
  const points = array(body.p)
  const contexts = array(body.c)
  const contextRadix = contexts.length + 1
  if (body.x !== undefined && !isLoose(body.x)) throw new NotCompact("the runs' members are not an object")
  const extras = isLoose(body.x) ? body.x : {}
  const base = typeof body.b === "number" ? body.b : undefined
  const factor = typeof body.e === "number" ? 2 ** body.e : 1e6
  const runs: Array<Loose> = new Array(flat.length / stride)
  for (let i = 0, at = 0; at < flat.length; i++, at += stride) {
    const key = flat[at]
    const packed = flat[at + 1]
    const startedAt = flat[at + 2]
    const duration = flat[at + 3]
    if (
      typeof key !== "number" || typeof packed !== "number" || typeof startedAt !== "number" ||
      typeof duration !== "number" || points.length === 0
    ) {
      throw new NotCompact(`hook run ${i} is not numbers`)
    }
    const code = key % 32
    const where = (key - code) / 32
    const point = where % points.length
    const status = code % 8
    const context = ((packed % contextRadix) + contextRadix) % contextRadix
    const run: Loose = {
      name: stringAt(strings, (where - point) / points.length),
      stage: stringAt(points, point),
      outcome: outcomes[Math.floor(code / 8)],
      sequence: (packed - context) / contextRadix,
      startedAt: base === undefined ? startedAt : base + startedAt,
      duration: duration / factor
    }
    if (status !== 0) run.status = statuses[status - 1]
    if (context > 0) {
      const at = contexts[context - 1]
      if (typeof at !== "string") throw new NotCompact(`hook run context ${context} is out of range`)
      const [phase, operation, callId, stepId] = at.split(",")
      if (phase !== undefined && phase !== "") run.phase = Number(phase)
      const op = optionalAt(strings, operation)
      if (op !== undefined) run.operation = op
      const call = optionalAt(strings, callId)
      if (call !== undefined) run.callId = call
      const step = optionalAt(strings, stepId)
      if (step !== undefined) run.stepId = step
    }
    const extra = extras[i]
    if (isLoose(extra)) {
      for (const key in extra) {
        run[key] = key === "effects" ? array(extra.effects).map((e) => expandEffect(e, texts)) : extra[key]
      }
    }
    if (run.effects === undefined) run.effects = []
    runs[i] = run
  }
  return runs
}

/** A phase, its plan's steps with their default members written out. */
const expandPhase = (phase: unknown): unknown => {
  if (!isLoose(phase) || !isLoose(phase.plan) || !Array.isArray(phase.plan.steps)) return phase
  return {
    ...phase,
    plan: {
      ...phase.plan,
      steps: phase.plan.steps.map((step: unknown) =>
        isLoose(step)
          ? {
            ...step,
            depends_on: step.depends_on ?? [],
            implicit_deps: step.implicit_deps ?? [],
            metadata: step.metadata ?? {}
          }
          : step
      )
    }
  }
}

const expandModelCall = (call: unknown, texts: ReadonlyArray<unknown>): unknown => {
  if (!isLoose(call)) return call
  const out: Loose = {
    ...call,
    reask: call.reask ?? 0,
    attempt: call.attempt ?? 1,
    model: call.model ?? "primary",
    streamed: call.streamed ?? false,
    outcome: call.outcome ?? "succeeded"
  }
  if (call.prompt !== undefined) out.prompt = expandText(call.prompt, texts)
  if (call.output !== undefined) out.output = expandText(call.output, texts)
  return out
}

/**
 * A format 2 body as the record Schema's encoded form (format 1), every
 * default written out. Throws {@link NotCompact} for a body whose
 * references do not hold; whether the result is a record is the record
 * Schema's to say (`recordBody.ts`).
 */
export const expand = (body: unknown): Loose => {
  if (!isLoose(body)) throw new NotCompact("the body is not an object")
  const strings = array(body.s)
  const texts = array(body.t)
  const out: Loose = {
    schemaVersion: body.schemaVersion ?? 1,
    requestId: body.requestId,
    record_revision: body.record_revision ?? 0,
    mode: body.mode ?? "pipeline",
    request: body.request,
    metadata: body.metadata ?? {}
  }
  if (body.lifecycle !== undefined) out.lifecycle = body.lifecycle
  out.phases = array(body.phases).map(expandPhase)
  out.hookInvocations = expandRuns(body, strings, texts)
  if (body.shortCircuit !== undefined) out.shortCircuit = body.shortCircuit
  if (body.checkpointId !== undefined) out.checkpointId = body.checkpointId
  if (body.rawDraft !== undefined) out.rawDraft = expandText(body.rawDraft, texts)
  if (body.modelCalls !== undefined) out.modelCalls = array(body.modelCalls).map((c) => expandModelCall(c, texts))
  if (body.deliveredText !== undefined) out.deliveredText = body.deliveredText
  if (body.finalResponse !== undefined) out.finalResponse = body.finalResponse
  out.diagnostics = body.diagnostics ?? []
  if (body.writer !== undefined) out.writer = body.writer
  return out
}

/**
 * A format 2 body written by this process back into the record it was
 * made from — the memory store's read path, without the Schema interpreter.
 * Equal to decoding it through the record Schema (property-tested).
 */
export const fromCompactTrusted = (body: unknown): ExecutionRecord => {
  const { record_revision, ...rest } = expand(body)
  // Trusted: this process encoded the body from a decoded record, and the
  // expansion writes every default out, so it is that record.
  return { ...rest, recordRevision: record_revision } as unknown as ExecutionRecord
}
