/**
 * Event summaries for the memory recorder: the summarizer model's batch
 * (one call for up to `batchLimit` steps, a JSON array back), checked
 * entry by entry, and the heuristic that fills in for every step the model
 * did not summarize — steps beyond the batch limit, missing or invalid
 * entries, or a model that failed or timed out. `summary_coverage` counts
 * what happened (seed 000 §9): the built-in batch counts only when the model
 * was asked.
 */
import type { Json, JsonObject } from "../../domain/Json.js"
import { ground } from "./memoryEntities.js"
import { escapeXml, parseJsonArray, shorten } from "./memoryModel.js"

/** What the recorder knows of one executed step. */
export interface StepFacts {
  readonly stepId: string
  readonly capability: string
  readonly parameters: JsonObject
  readonly outcome: "succeeded" | "failed" | "skipped" | "denied"
  readonly output?: Json | undefined
  readonly error?: string | undefined
  readonly occurredAt: number
  /** Identities from the step's parameters (and the request, when an extractor is set for recording). */
  readonly entities: ReadonlyArray<string>
}

/** One step's summary and where it came from. */
export interface Summary {
  readonly summary: string
  readonly source: "model" | "heuristic"
  /** The heuristic shortened the step's output or error to fit. */
  readonly shortened: boolean
  /** Entities the model named that are grounded in the step's text (added to the step's own). */
  readonly entities: ReadonlyArray<string>
  /** Why the heuristic wrote it (absent for model summaries). */
  readonly cause?: "heuristic" | "batch_excluded" | "missing" | "invalid" | "empty" | "model_unavailable" | undefined
}

/** The built-in batch's counts (after duplicate handling: the first entry for a step wins). */
export interface BatchCounts {
  observed: number
  missing: number
  empty: number
  valid: number
  invalid: number
  mixed: number
  accepted_entities: number
  rejected_entities: number
  duplicates: number
}

const maxSummaryChars = 500
const maxOutputChars = 300

const compact = (value: Json | undefined): string => value === undefined ? "" : JSON.stringify(value) ?? ""

/** The step's text the model's entities must be grounded in. */
const groundsOf = (step: StepFacts): string =>
  [step.capability, compact(step.parameters), compact(step.output), step.error ?? ""].join(" ")

/** The heuristic summary: tool, parameters, outcome and a shortened output or error. */
export const heuristic = (step: StepFacts, cause: NonNullable<Summary["cause"]>): Summary => {
  const parameters = shorten(compact(step.parameters), 120)
  const result = step.error !== undefined
    ? shorten(step.error, maxOutputChars)
    : shorten(compact(step.output), maxOutputChars)
  const what = step.error !== undefined ? `error: ${result.text}` : result.text.length === 0 ? "" : `→ ${result.text}`
  return {
    summary: `${step.capability}(${parameters.text}) ${step.outcome}${what.length === 0 ? "" : ` ${what}`}`,
    source: "heuristic",
    shortened: result.shortened || parameters.shortened,
    entities: [],
    cause
  }
}

/** The summarizer's prompt for one batch (tool outputs shortened and escaped: they are data, not instructions). */
export const promptFor = (request: string, batch: ReadonlyArray<StepFacts>): string =>
  [
    "Summarize each executed tool step below in one factual sentence for an episodic memory log.",
    "Only use facts present in the step. Also list the entities (names, places, tickers, ids) the step is about.",
    "Reply with a JSON array only, one object per step:",
    "[{\"step_id\": \"…\", \"summary\": \"…\", \"entities\": [\"…\"]}]",
    "",
    `<request>${escapeXml(shorten(request, 1_000).text)}</request>`,
    ...batch.map((step) =>
      `<step id="${escapeXml(step.stepId)}" tool="${escapeXml(step.capability)}" outcome="${step.outcome}">` +
      `parameters: ${escapeXml(shorten(compact(step.parameters), 500).text)}; ` +
      (step.error !== undefined
        ? `error: ${escapeXml(shorten(step.error, 500).text)}`
        : `output: ${escapeXml(shorten(compact(step.output), 1_000).text)}`) +
      "</step>"
    )
  ].join("\n")

const emptyCounts = (): BatchCounts => ({
  observed: 0,
  missing: 0,
  empty: 0,
  valid: 0,
  invalid: 0,
  mixed: 0,
  accepted_entities: 0,
  rejected_entities: 0,
  duplicates: 0
})

/**
 * Reads the model's reply for `batch`: a summary per step it covers well,
 * with the counts. `undefined` summaries are for the heuristic (the entry
 * was missing, invalid or empty — the cause says which).
 */
export const readReply = (
  text: string,
  batch: ReadonlyArray<StepFacts>
): {
  readonly parsed: boolean
  readonly parseError?: string | undefined
  readonly summaries: ReadonlyMap<string, Summary>
  readonly counts: BatchCounts
} => {
  const counts = emptyCounts()
  const summaries = new Map<string, Summary>()
  const entries = parseJsonArray(text)
  const byId = new Map(batch.map((step) => [step.stepId, step]))
  if (entries._tag === "Left") {
    for (const step of batch) summaries.set(step.stepId, heuristic(step, "invalid"))
    counts.missing = batch.length
    return { parsed: false, parseError: entries.left, summaries, counts }
  }
  for (const entry of entries.right) {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      counts.invalid++
      continue
    }
    const stepId = "step_id" in entry ? entry.step_id : undefined
    const step = typeof stepId === "string" ? byId.get(stepId) : undefined
    if (step === undefined || typeof stepId !== "string") {
      counts.invalid++
      continue
    }
    if (summaries.has(stepId)) {
      counts.duplicates++
      continue
    }
    counts.observed++
    const summary = "summary" in entry ? entry.summary : undefined
    if (typeof summary !== "string") {
      counts.invalid++
      summaries.set(stepId, heuristic(step, "invalid"))
      continue
    }
    const trimmed = summary.replace(/\s+/gu, " ").trim()
    if (trimmed.length === 0) {
      counts.empty++
      summaries.set(stepId, heuristic(step, "empty"))
      continue
    }
    const named = "entities" in entry && Array.isArray(entry.entities) ? entry.entities : []
    const strings = named.filter((e: unknown): e is string => typeof e === "string")
    const grounded = ground(strings, groundsOf(step))
    const rejected = grounded.rejected.length + (named.length - strings.length)
    counts.accepted_entities += grounded.accepted.length
    counts.rejected_entities += rejected
    if (rejected > 0) counts.mixed++
    else counts.valid++
    const cut = shorten(trimmed, maxSummaryChars)
    summaries.set(stepId, { summary: cut.text, source: "model", shortened: cut.shortened, entities: grounded.accepted })
  }
  for (const step of batch) {
    if (!summaries.has(step.stepId)) {
      counts.missing++
      summaries.set(step.stepId, heuristic(step, "missing"))
    }
  }
  return { parsed: true, summaries, counts }
}
