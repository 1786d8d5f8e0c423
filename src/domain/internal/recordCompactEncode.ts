/**
 * The encoder of body format 2 (`recordCompact.ts`): a record into its
 * compact body text, written once per snapshot on the request's path.
 */
import type { ExecutionRecord, HookInvocation, PhaseRecord } from "../ExecutionRecord.js"
import type { ModelCall } from "../ModelCall.js"
import { keepLatest } from "./liveShapes.js"
import { currentBodyFormat, durationNanos, longText, statusCode, stride, Table } from "./recordCompact.js"
import { collectEffectTexts, encodeEffect, promptPieces, textRef } from "./recordCompactTexts.js"

/** The rarely present members of a run, as they are (effects only when there are any). */
const runExtra = (run: HookInvocation, texts: Table): Record<string, unknown> | undefined => {
  if (
    run.execution === undefined && run.attempts === undefined && run.contributionHash === undefined &&
    run.skipReason === undefined && run.error === undefined && run.abandoned === undefined &&
    run.runId === undefined && run.decision === undefined && run.effects.length === 0
  ) return undefined
  const extra: Record<string, unknown> = {}
  if (run.execution !== undefined) extra.execution = run.execution
  if (run.attempts !== undefined) extra.attempts = run.attempts
  if (run.contributionHash !== undefined) extra.contributionHash = run.contributionHash
  if (run.skipReason !== undefined) extra.skipReason = run.skipReason
  if (run.error !== undefined) extra.error = run.error
  if (run.abandoned !== undefined) extra.abandoned = run.abandoned
  if (run.runId !== undefined) extra.runId = run.runId
  if (run.decision !== undefined) extra.decision = run.decision
  if (run.effects.length > 0) extra.effects = run.effects.map((e) => encodeEffect(e, texts))
  return extra
}

/** Whether every run's start, counted from `base`, comes back exactly. */
const exactFrom = (base: number, runs: ReadonlyArray<HookInvocation>): boolean => {
  for (let i = 0; i < runs.length; i++) {
    const at = runs[i]!.startedAt
    if (!Object.is(base + (at - base), at)) return false
  }
  return true
}

// A double's bits, for the binary exponent of its last significant digit.
const bits = new Float64Array(1)
const words = new Uint32Array(bits.buffer)
const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/**
 * How many binary fraction digits `ms` has (`ms * 2^e` is a whole number for
 * this `e` and every larger one, below 2^53), or undefined for a subnormal.
 * A duration the runtime measured is the difference of two clock readings:
 * its binary fraction is as long as the readings', however long its
 * decimal one is. Only a heuristic: the encoding checks what it writes.
 */
const binaryDigits = (ms: number): number | undefined => {
  if (ms === 0) return 0
  bits[0] = ms
  const lo = words[little ? 0 : 1]!
  const hi = words[little ? 1 : 0]!
  const exponent = (hi >>> 20) & 0x7ff
  if (exponent === 0) return undefined
  const trailing = lo !== 0 ? 31 - Math.clz32(lo & -lo) : 32 + 31 - Math.clz32((hi | 0x100000) & -(hi | 0x100000))
  return Math.max(0, 1075 - exponent - trailing)
}

/**
 * How the runs' durations are written: `"ns"` — whole nanoseconds (the
 * clock's resolution); or a binary exponent `e` — `ms * 2^e`, a whole
 * number for the differences of clock readings (exact, and shorter than
 * their decimal form). A duration the chosen way cannot write exactly goes
 * with the run's rare members.
 */
const durationScale = (runs: ReadonlyArray<HookInvocation>): "ns" | number => {
  let nanos = 0
  let binary = 0
  let exponent = 0
  for (let i = 0; i < runs.length; i++) {
    const ms = runs[i]!.duration
    if (durationNanos(ms) !== undefined) nanos++
    const e = binaryDigits(ms)
    if (e !== undefined && e <= 64) {
      binary++
      if (e > exponent) exponent = e
    }
  }
  return nanos >= binary ? "ns" : exponent
}

/** The integer a duration is written as, or undefined when it is kept as it is (among the rare members). */
const durationCode = (ms: number, scale: "ns" | number, factor: number): number | undefined => {
  if (scale === "ns") return durationNanos(ms)
  const scaled = ms * factor
  return Number.isSafeInteger(scaled) && !Object.is(ms, -0) ? scaled : undefined
}

/**
 * The runs as one flat list of numbers (`h`, {@link stride} per run — one
 * array, which `JSON.stringify` writes fastest): points (`p`), contexts
 * (`c`) and names (in `s`) each written once; the rare members in `x`, by
 * run index.
 */
const encodeRuns = (
  runs: ReadonlyArray<HookInvocation>,
  base: number | undefined,
  body: Record<string, unknown>,
  strings: Table,
  texts: Table
): void => {
  const points = new Table()
  const contexts = new Table()
  const runContext: Array<number> = new Array(runs.length)
  const runPoint: Array<number> = new Array(runs.length)
  let stage: string | undefined
  let point = 0
  // First the points and contexts: their counts are the radixes of the packed numbers.
  let previous: HookInvocation | undefined
  let context = 0
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!
    // Runs come in groups of one point and one call: the last run's context is reused.
    if (
      previous === undefined || run.phase !== previous.phase || run.operation !== previous.operation ||
      run.callId !== previous.callId || run.stepId !== previous.stepId
    ) {
      context = run.phase === undefined && run.operation === undefined && run.callId === undefined &&
          run.stepId === undefined
        ? 0
        : contexts.of(
          `${run.phase ?? ""},${strings.optional(run.operation)},${strings.optional(run.callId)},${
            strings.optional(run.stepId)
          }`
        ) + 1
    }
    previous = run
    runContext[i] = context
    // Runs come in groups of one point too.
    if (run.stage !== stage) {
      stage = run.stage
      point = points.of(stage)
    }
    runPoint[i] = point
  }
  const pointCount = points.items.length
  const contextRadix = contexts.items.length + 1
  // Whole nanoseconds (the clock's resolution) is the usual case: each
  // duration's code is found once, and the binary scale is looked for only
  // when some duration is not a whole number of nanoseconds.
  const nanos: Array<number | undefined> = new Array(runs.length)
  let whole = true
  for (let i = 0; i < runs.length; i++) {
    const code = durationNanos(runs[i]!.duration)
    nanos[i] = code
    if (code === undefined) whole = false
  }
  const scale = whole ? "ns" : durationScale(runs)
  const factor = scale === "ns" ? 1e6 : 2 ** scale
  // Filled in order from empty, so it stays a packed array: `JSON.stringify`
  // writes a holey one (`new Array(n)`) about three times slower.
  const flat: Array<number> = []
  let extras: Record<number, Record<string, unknown>> | undefined
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!
    const packed = run.sequence * contextRadix + runContext[i]!
    const sequenceFits = Number.isSafeInteger(packed)
    const duration = scale === "ns" ? nanos[i] : durationCode(run.duration, scale, factor)
    flat.push(
      (strings.of(run.name) * pointCount + runPoint[i]!) * 32 + statusCode(run),
      sequenceFits ? packed : runContext[i]!,
      base === undefined ? run.startedAt : run.startedAt - base,
      duration ?? 0
    )
    const extra = runExtra(run, texts)
    if (extra !== undefined || duration === undefined || !sequenceFits) {
      const own: Record<string, unknown> = extra ?? {}
      if (duration === undefined) own.duration = run.duration
      if (!sequenceFits) own.sequence = run.sequence
      extras ??= {}
      extras[i] = own
    }
  }
  body.h = flat
  body.p = points.items
  if (contexts.items.length > 0) body.c = contexts.items
  if (scale !== "ns") body.e = scale
  if (extras !== undefined) body.x = extras
}

/** A model call, its defaults left out (`undefined` members are not written) and its texts as pieces or references. */
const encodeModelCall = (call: ModelCall, texts: Table): object => ({
  ...call,
  reask: call.reask === 0 ? undefined : call.reask,
  attempt: call.attempt === 1 ? undefined : call.attempt,
  model: call.model === "primary" ? undefined : call.model,
  streamed: call.streamed ? true : undefined,
  outcome: call.outcome === "succeeded" ? undefined : call.outcome,
  prompt: call.prompt === undefined ? undefined : promptPieces(call.prompt, texts),
  output: call.output === undefined ? undefined : textRef(call.output, texts)
})

/** A phase, its plan's steps without their default members (no dependencies, no metadata). */
const encodePhase = (phase: PhaseRecord): PhaseRecord | object => {
  const steps = phase.plan.steps
  let lean: Array<object> | undefined
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!
    if (step.depends_on.length > 0 || step.implicit_deps.length > 0 || !isEmpty(step.metadata)) continue
    lean ??= steps.slice()
    lean[i] = { ...step, depends_on: undefined, implicit_deps: undefined, metadata: undefined }
  }
  return lean === undefined ? phase : { ...phase, plan: { ...phase.plan, steps: lean } }
}

const isEmpty = (object: object): boolean => {
  for (const _ in object) return false
  return true
}

/**
 * The record's compact body (format 2) as JSON text, without its `writer`
 * stamp: one object of flat lists, written by one `JSON.stringify` — every
 * snapshot the pipeline writes is encoded once, on the request's path.
 */
export const encodeText = (record: ExecutionRecord): string => {
  const strings = new Table()
  const texts = new Table()
  const runs = record.hookInvocations
  collectEffectTexts(runs, texts)
  const calls = record.modelCalls
  // A draft that is also a call's output: written once.
  const draft = record.rawDraft
  if (calls !== undefined && draft !== undefined && draft.length >= longText) {
    for (let i = 0; i < calls.length; i++) if (calls[i]!.output === draft) texts.of(draft)
  }
  // Defaults (as format 2 decodes an absent field) are left out: `undefined` members are not written.
  const body: Record<string, unknown> = {
    v: currentBodyFormat,
    schemaVersion: record.schemaVersion === 1 ? undefined : record.schemaVersion,
    requestId: record.requestId,
    record_revision: record.recordRevision === 0 ? undefined : record.recordRevision,
    mode: record.mode === "pipeline" ? undefined : record.mode,
    request: record.request,
    metadata: isEmpty(record.metadata) ? undefined : record.metadata,
    lifecycle: record.lifecycle,
    phases: record.phases.length === 0 ? undefined : record.phases.map(encodePhase),
    shortCircuit: record.shortCircuit,
    checkpointId: record.checkpointId,
    rawDraft: draft === undefined ? undefined : textRef(draft, texts),
    modelCalls: calls?.map((call) => encodeModelCall(call, texts)),
    deliveredText: record.deliveredText,
    finalResponse: record.finalResponse,
    diagnostics: record.diagnostics.length === 0 ? undefined : record.diagnostics
  }
  if (runs.length > 0) {
    const start = record.lifecycle?.startedAt ?? runs[0]!.startedAt
    const base = exactFrom(start, runs) ? start : undefined
    body.b = base
    encodeRuns(runs, base, body, strings, texts)
  }
  if (strings.items.length > 0) body.s = strings.items
  if (texts.items.length > 0) body.t = texts.items
  // Kept until the next encoding: see `liveShapes.ts`.
  keepLatest("encoding", [strings, texts, body])
  return JSON.stringify(body)
}
