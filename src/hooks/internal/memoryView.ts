/**
 * The bounded memory view the enrichment hook appends to `rag_context`
 * (seed 000 §5.4 "skill selector" rules): a scope and historical-origin
 * notice first, then — when it pays — a legend for the compact tuple form,
 * then the events, all inside one byte budget. Sparse histories keep named
 * fields (`time=…; outcome=…`) when the legend would cost more than it
 * saves. The notice and legend are short enough to fit in the selector's
 * first 1,000 bytes when memory is the only RAG source.
 */
import { utf8Length } from "../../ai/internal/outputBounds.js"
import type { JsonObject } from "../../domain/Json.js"
import { shorten } from "./memoryModel.js"

/** Version of the view's format, in the `memory_planning_context` report. */
export const viewVersion = 1

/** What a view line shows of one event or fragment. */
export interface ViewFields {
  readonly section: "recent" | "related" | "knowledge"
  readonly when?: string | undefined
  readonly outcome?: string | undefined
  readonly tool?: string | undefined
  readonly entities?: ReadonlyArray<string> | undefined
  readonly summary: string
}

/** One line of the view: its fields, and the named line a `memory_load` run returned (a hook may have rewritten it). */
export interface ViewLine {
  readonly fields: ViewFields
  /** The line as loaded; when it differs from {@link namedLine} of the fields, it is shown verbatim. */
  readonly content: string
}

/** How the view came out (the `view` of the `memory_planning_context` effect). */
export interface ViewReport {
  readonly version: number
  readonly format: "named" | "tuple" | "none"
  readonly byte_budget: number
  readonly bytes_used: number
  readonly outcome: "rendered" | "truncated" | "empty"
  readonly sections: { readonly recent: number; readonly related: number; readonly knowledge: number }
  readonly dropped: number
}

const legend = "Events are [time | outcome | tool | entities | summary]."

// Not escaped here: the prompt builder escapes every section's text (C7), so
// stored text cannot close or open a section either way.
const clean = (value: string, max: number): string => shorten(value.replace(/\s+/gu, " ").trim(), max).text

/** The scope and historical-origin notice: always the first line of the view. */
export const noticeFor = (domain: string): string =>
  `Memory of earlier requests in domain "${
    clean(domain, 64)
  }" (historical: recorded before this request, possibly outdated; verify before acting on it):`

/** An event or fragment as a self-describing line. */
export const namedLine = (fields: ViewFields): string => {
  if (fields.section === "knowledge") return `- knowledge: ${clean(fields.summary, 500)}`
  const parts = [
    fields.when === undefined ? undefined : `time=${clean(fields.when, 32)}`,
    fields.outcome === undefined ? undefined : `outcome=${clean(fields.outcome, 16)}`,
    fields.tool === undefined ? undefined : `tool=${clean(fields.tool, 64)}`,
    fields.entities === undefined || fields.entities.length === 0
      ? undefined
      : `entities=${clean(fields.entities.join(", "), 200)}`,
    `summary=${clean(fields.summary, 500)}`
  ].filter((part) => part !== undefined)
  return `- ${parts.join("; ")}`
}

const tupleField = (value: string, max: number): string => clean(value, max).replace(/\|/gu, "/")

const tupleLine = (fields: ViewFields): string =>
  fields.section === "knowledge"
    ? namedLine(fields)
    : `- [${tupleField(fields.when ?? "", 32)} | ${tupleField(fields.outcome ?? "", 16)} | ${
      tupleField(fields.tool ?? "", 64)
    } | ${tupleField((fields.entities ?? []).join(", "), 200)} | ${tupleField(fields.summary, 500)}]`

const lineIn = (format: "named" | "tuple", line: ViewLine): string => {
  const named = namedLine(line.fields)
  if (line.content !== named) return line.content
  return format === "named" ? named : tupleLine(line.fields)
}

const bytesOf = (lines: ReadonlyArray<string>): number => lines.reduce((sum, line) => sum + utf8Length(line) + 1, 0)

/**
 * The view of `lines` (in priority order) within `budget` UTF-8 bytes: the
 * notice, the legend when the tuple form is shorter with it, then as many
 * lines as fit. `undefined` text when there is nothing to show.
 */
export const render = (
  domain: string,
  lines: ReadonlyArray<ViewLine>,
  budget: number
): { readonly text: string | undefined; readonly report: ViewReport } => {
  const sections = {
    recent: lines.filter((l) => l.fields.section === "recent").length,
    related: lines.filter((l) => l.fields.section === "related").length,
    knowledge: lines.filter((l) => l.fields.section === "knowledge").length
  }
  const empty = (dropped: number): { readonly text: undefined; readonly report: ViewReport } => ({
    text: undefined,
    report: {
      version: viewVersion,
      format: "none",
      byte_budget: budget,
      bytes_used: 0,
      outcome: "empty",
      sections,
      dropped
    }
  })
  if (lines.length === 0) return empty(0)
  const notice = noticeFor(domain)
  const named = lines.map((line) => lineIn("named", line))
  const tuple = lines.map((line) => lineIn("tuple", line))
  const format = bytesOf([legend, ...tuple]) < bytesOf(named) ? "tuple" : "named"
  const head = format === "tuple" ? [notice, legend] : [notice]
  const body = format === "tuple" ? tuple : named
  const kept: Array<string> = [...head]
  let used = bytesOf(head) - 1
  for (const line of body) {
    const cost = utf8Length(line) + 1
    if (used + cost > budget) break
    kept.push(line)
    used += cost
  }
  const shown = kept.length - head.length
  if (shown === 0) return empty(lines.length)
  return {
    text: kept.join("\n"),
    report: {
      version: viewVersion,
      format,
      byte_budget: budget,
      bytes_used: used,
      outcome: shown < lines.length ? "truncated" : "rendered",
      sections,
      dropped: lines.length - shown
    }
  }
}

/** A report as effect data. */
export const reportData = (report: ViewReport): JsonObject => ({ ...report, sections: { ...report.sections } })
